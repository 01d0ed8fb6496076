package engram

import "context"

// The statuses of a doctor check, from best to worst.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// DoctorCheck is one finding of GET /v1/doctor and `engram doctor`.
type DoctorCheck struct {
	Name    string `json:"name"`   // what was checked: archive, sqlite, index, vectors, ...
	Status  string `json:"status"` // CheckOK, CheckWarn or CheckFail
	Finding string `json:"finding"`
	// Fix is the command that repairs a problem, "" when there is none to
	// run (or nothing to repair).
	Fix string `json:"fix,omitempty"`
}

// DoctorReport is the answer of GET /v1/doctor.
type DoctorReport struct {
	Status string        `json:"status"` // the worst status of the checks
	Checks []DoctorCheck `json:"checks"`
	TookMS float64       `json:"took_ms"`
}

// Add appends a check and keeps Status the worst one.
func (r *DoctorReport) Add(c DoctorCheck) {
	r.Checks = append(r.Checks, c)
	if rank(c.Status) > rank(r.Status) {
		r.Status = c.Status
	}
}

// Failed reports whether a check failed.
func (r DoctorReport) Failed() bool { return r.Status == CheckFail }

// Count is how many checks have the status.
func (r DoctorReport) Count(status string) int {
	n := 0
	for _, c := range r.Checks {
		if c.Status == status {
			n++
		}
	}
	return n
}

func rank(status string) int {
	switch status {
	case CheckOK:
		return 1
	case CheckWarn:
		return 2
	case CheckFail:
		return 3
	}
	return 0
}

// DoctorService checks a running engram's stores against each other and
// its dependencies. A problem is a finding in the report, never an error.
type DoctorService interface {
	Doctor(ctx context.Context) DoctorReport
}
