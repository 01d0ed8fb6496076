//go:build !unix

package testutil

import "time"

// CPUTime is not measured here: the benchmarks report no turns/cpu-s.
func CPUTime() time.Duration { return 0 }
