package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of xs by the
// nearest-rank method: the smallest value with at least p% of xs at or
// below it, so that p99 of 200 values is the second largest, never an
// interpolation between two. It sorts a copy; 0 for no values.
func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = max(1, min(rank, len(s)))
	return s[rank-1]
}

// memStatus is a process's resident memory as /proc/PID/status reports
// it, in bytes: VmRSS now and VmHWM, the peak since the process started.
type memStatus struct {
	RSS int64 `json:"vm_rss_bytes"`
	HWM int64 `json:"vm_hwm_bytes"`
}

// parseStatus reads VmRSS and VmHWM from the text of /proc/PID/status
// (lines "VmRSS:\t  123456 kB"). A status without either field (a kernel
// thread, a zombie) or with a value that is not "N kB" is an error naming
// the field.
func parseStatus(r io.Reader) (memStatus, error) {
	var m memStatus
	found := map[string]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("%s: %q is not a size in kB", name, strings.TrimSpace(value))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 {
			return m, fmt.Errorf("%s: %q is not a size in kB", name, strings.TrimSpace(value))
		}
		if name == "VmRSS" {
			m.RSS = kb * 1024
		} else {
			m.HWM = kb * 1024
		}
		found[name] = true
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	for _, name := range []string{"VmRSS", "VmHWM"} {
		if !found[name] {
			return m, fmt.Errorf("no %s line", name)
		}
	}
	return m, nil
}

// readStatus reads the memory of process pid from /proc (Linux only).
func readStatus(pid int) (memStatus, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memStatus{}, fmt.Errorf("the memory of process %d: %w (teambench reads /proc, which Linux has)", pid, err)
	}
	defer f.Close()
	m, err := parseStatus(f)
	if err != nil {
		return m, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return m, nil
}
