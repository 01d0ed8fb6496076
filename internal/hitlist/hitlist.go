// Package hitlist is the list a palace's turn search fills, the same in
// every palace so that their searches rank alike: each turn once, at most
// a limit, the keyword hits by their scores and the fallback hits (a
// substring or short-word match) below every keyword hit.
package hitlist

import (
	"math"

	engram "github.com/engram-dev/engram"
)

// List collects the hits of one search.
type List struct {
	Limit int
	Hits  []engram.TurnHit
	// Floor is the lowest keyword score, the ceiling of fallback scores.
	Floor float64
	seen  map[int64]bool
	extra int // fallback hits so far
}

// New returns an empty list of at most limit hits.
func New(limit int) List { return List{Limit: limit, seen: map[int64]bool{}} }

// Add appends a hit unless the turn is a hit already or the list is full,
// and reports whether it did. A score that is not a finite number of 0
// or more counts as 0.
func (l *List) Add(t engram.Turn, score float64) bool {
	if l.Full() || l.seen[t.Seq] {
		return false
	}
	if math.IsNaN(score) || math.IsInf(score, 0) || score < 0 {
		score = 0
	}
	if l.seen == nil {
		l.seen = map[int64]bool{}
	}
	l.seen[t.Seq] = true
	l.Hits = append(l.Hits, engram.TurnHit{Turn: t, Score: score})
	return true
}

// AddExtra adds a fallback hit, scored below every keyword hit (Floor)
// and below the fallback hits before it.
func (l *List) AddExtra(t engram.Turn) {
	if l.Add(t, l.Floor/float64(2+l.extra)) {
		l.extra++
	}
}

// Full reports whether the list holds Limit hits.
func (l *List) Full() bool { return len(l.Hits) >= l.Limit }
