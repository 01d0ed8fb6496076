//go:build unix

package pipeline_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has spent, user and system, all
// threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
