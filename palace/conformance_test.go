package palace

import (
	"testing"

	"github.com/engram-dev/engram/internal/palacetest"
	"github.com/engram-dev/engram/scheduler"
)

// TestConformance runs the palaces' conformance suite on the SQLite file;
// package pgpalace runs the same on PostgreSQL.
func TestConformance(t *testing.T) {
	palacetest.Run(t, func(t *testing.T) palacetest.Palace { return conformant{MustOpenDB(t)} })
}

// conformant is the palace with its jobs' state, which the engine keeps in
// the file's job_state table (scheduler.SQLStore).
type conformant struct{ *DB }

func (c conformant) JobStates() scheduler.Store { return scheduler.NewSQLStore(c.DB) }
