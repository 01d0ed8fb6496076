//go:build unix

package claudecode

import "syscall"

// openNoWait makes an open of a FIFO return at once, with or without a
// writer, so that openRegular can look at what it opened.
const openNoWait = syscall.O_NONBLOCK
