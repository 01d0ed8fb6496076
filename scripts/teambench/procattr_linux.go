package main

import "syscall"

// procAttr makes the kernel kill a server when teambench dies, even by
// SIGKILL, which no deferred cleanup survives.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
