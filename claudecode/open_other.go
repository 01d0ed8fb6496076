//go:build !unix

package claudecode

// openNoWait is nothing where there are no FIFOs to wait on.
const openNoWait = 0
