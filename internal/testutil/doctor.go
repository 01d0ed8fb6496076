package testutil

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

// FindCheck returns the first check of rep of name with status whose
// finding holds every one of words.
func FindCheck(rep engram.DoctorReport, name, status string, words ...string) (engram.DoctorCheck, bool) {
next:
	for _, c := range rep.Checks {
		if c.Name != name || c.Status != status {
			continue
		}
		for _, w := range words {
			if !strings.Contains(c.Finding, w) {
				continue next
			}
		}
		return c, true
	}
	return engram.DoctorCheck{}, false
}

// MustFindCheck fails the test unless rep has the check (FindCheck), and
// returns it.
func MustFindCheck(tb testing.TB, rep engram.DoctorReport, name, status string, words ...string) engram.DoctorCheck {
	tb.Helper()
	if c, ok := FindCheck(rep, name, status, words...); ok {
		return c
	}
	tb.Fatalf("doctor: no %s check %q with %q in:\n%s", status, name, words, ReportText(rep))
	return engram.DoctorCheck{}
}

// ReportText is rep a line a check, for a test's failure.
func ReportText(rep engram.DoctorReport) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "%-4s %s: %s", strings.ToUpper(c.Status), c.Name, c.Finding)
		if c.Fix != "" {
			fmt.Fprintf(&b, " [fix: %s]", c.Fix)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
