package palace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// TestForgottenLeft: what the doctor checks. A forgotten turn that some
// index still names (here a memory a stale extraction wrote after the
// forget) is reported with where; none is reported after a clean forget.
func TestForgottenLeft(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	ts := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	turns := []engram.Turn{
		{ID: "a", Seq: 1, Namespace: "default", Session: "s", Role: engram.RoleUser, Content: "I live in Lisbon", TS: ts, ReceivedAt: ts},
		{ID: "b", Seq: 2, Namespace: "default", Session: "s", Role: engram.RoleUser, Content: "I work at Acme", TS: ts, ReceivedAt: ts},
	}
	if err := db.PutTurns(ctx, turns); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "a", Seq: 3}}, ts, nil); err != nil {
		t.Fatal(err)
	}
	if left, err := db.ForgottenLeft(ctx, 5); err != nil || len(left) != 0 {
		t.Fatalf("after a clean forget: %v %v", left, err)
	}
	mem := engram.Memory{ID: "m1", Namespace: "default", Type: engram.MemoryFact, Text: "Ana lives in Lisbon", Importance: 0.5,
		TS: ts, Sources: []string{"a"}}
	if _, err := db.PutMemories(ctx, "l1", []engram.Memory{mem}, 2); err != nil {
		t.Fatal(err)
	}
	left, err := db.ForgottenLeft(ctx, 5)
	if err != nil || len(left) != 1 || !strings.Contains(left[0], "a: a memory's sources") {
		t.Fatalf("a memory citing a forgotten turn: %v %v", left, err)
	}
}
