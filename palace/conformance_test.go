package palace

import (
	"testing"

	"github.com/engram-dev/engram/internal/palacetest"
)

// TestConformance runs the palaces' conformance suite on the SQLite file;
// package pgpalace runs the same on PostgreSQL.
func TestConformance(t *testing.T) {
	palacetest.Run(t, func(t *testing.T) palacetest.Palace { return MustOpenDB(t) })
}
