//go:build !unix

package pipeline_test

import "time"

// cpuTime is not measured here: the benchmarks report no turns/cpu-s.
func cpuTime() time.Duration { return 0 }
