package hitlist

import (
	"math"
	"testing"

	engram "github.com/engram-dev/engram"
)

func TestList(t *testing.T) {
	l := New(4)
	l.Floor = 0.6
	if !l.Add(engram.Turn{Seq: 1}, 2) || !l.Add(engram.Turn{Seq: 2}, math.NaN()) {
		t.Fatal("a new turn was not added")
	}
	if l.Add(engram.Turn{Seq: 1}, 5) {
		t.Fatal("a turn added twice")
	}
	l.AddExtra(engram.Turn{Seq: 3})
	l.AddExtra(engram.Turn{Seq: 1}) // a hit already: no fallback slot taken
	l.AddExtra(engram.Turn{Seq: 4})
	l.AddExtra(engram.Turn{Seq: 5}) // full
	want := []struct {
		seq   int64
		score float64
	}{{1, 2}, {2, 0}, {3, 0.3}, {4, 0.2}}
	if len(l.Hits) != len(want) || !l.Full() {
		t.Fatalf("hits %+v, want %d and full", l.Hits, len(want))
	}
	for i, w := range want {
		if h := l.Hits[i]; h.Turn.Seq != w.seq || math.Abs(h.Score-w.score) > 1e-12 {
			t.Errorf("hit %d = seq %d score %v, want seq %d score %v", i, h.Turn.Seq, h.Score, w.seq, w.score)
		}
	}
	var zero List // the zero List takes no hit (limit 0) and does not panic
	if zero.Add(engram.Turn{Seq: 1}, 1) {
		t.Error("the zero List took a hit")
	}
}
