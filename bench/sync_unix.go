//go:build unix

package main

import "syscall"

// syncDisks has the kernel write back every dirty page.
func syncDisks() { syscall.Sync() }
