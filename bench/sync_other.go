//go:build !unix

package main

// syncDisks does nothing where there is no sync(2): the bench's figures
// are Linux's.
func syncDisks() {}
