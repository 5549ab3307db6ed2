package sync

import "syscall"

// syscallENOTDIR is returned by Lstat when a parent of the path is a file:
// for prsm that path simply holds no file.
var syscallENOTDIR = syscall.ENOTDIR
