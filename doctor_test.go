package engram_test

import (
	"testing"

	"github.com/engram-dev/engram"
)

// TestDoctorReport: the status is the worst check's, and Count counts by
// status.
func TestDoctorReport(t *testing.T) {
	var r engram.DoctorReport
	for _, s := range []string{engram.CheckOK, engram.CheckFail, engram.CheckWarn, engram.CheckOK} {
		r.Add(engram.DoctorCheck{Name: s, Status: s})
	}
	if r.Status != engram.CheckFail || !r.Failed() {
		t.Fatalf("status %q", r.Status)
	}
	if ok, warn, fail := r.Count(engram.CheckOK), r.Count(engram.CheckWarn), r.Count(engram.CheckFail); ok != 2 || warn != 1 || fail != 1 {
		t.Fatalf("counts ok %d warn %d fail %d", ok, warn, fail)
	}
	if (engram.DoctorReport{}).Failed() {
		t.Fatal("an empty report failed")
	}
}
