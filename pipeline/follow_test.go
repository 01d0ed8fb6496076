package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/engram-dev/engram/internal/lockedio"
)

// TestFollowerStopsQuietly: a step that fails because the follower is
// stopping (a transaction database/sql rolled back when its context ended
// answers "already committed or rolled back", not context.Canceled) is the
// shutdown, not a failure to warn about and retry.
func TestFollowerStopsQuietly(t *testing.T) {
	var logs bytes.Buffer
	inStep := make(chan struct{})
	f := &follower{
		name:   "indexing",
		source: func() <-chan struct{} { return make(chan struct{}) },
		step: func(ctx context.Context) error {
			close(inStep)
			<-ctx.Done()
			return errors.New("commit: sql: transaction has already been committed or rolled back")
		},
		logger: slog.New(slog.NewTextHandler(lockedio.New(&logs), nil)),
	}
	f.start()
	<-inStep
	f.stop()
	if logs.Len() > 0 {
		t.Fatalf("stopping logged:\n%s", logs.String())
	}
}
