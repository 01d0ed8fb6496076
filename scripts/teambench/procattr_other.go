//go:build !linux

package main

import "syscall"

// procAttr has no parent-death signal to ask for outside Linux: the servers
// are stopped by teambench's own cleanup.
func procAttr() *syscall.SysProcAttr { return nil }
