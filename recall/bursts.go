package recall

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// Bursts. On a messaging app one statement is often sent as several short
// messages in a row ("signed up for a pottery course today!" / "it's a
// wheel one" / "we're making bowls"): the question matches one
// line and its answer sits in the next. A result found in such a burst
// stands for the whole burst: its text is the burst's messages in order and
// its sources are every one of them, so the agent reads the statement whole
// and the burst takes one place in the results, not several.
const (
	// burstGap is the longest silence between two messages of one burst.
	// A person who types on after a longer pause starts a new statement.
	// It is a round number, not a fitted one: the development corpora
	// carry no real times between a session's messages.
	burstGap = 5 * time.Minute
	// DefaultBurstTurns is how many turns of the burst may stand on each
	// side of the turn that was found (see DeepConfig.BurstTurns).
	DefaultBurstTurns = 10
)

// speakerOf names who wrote t: its speaker, or its role when the turn has
// no speaker (an agent's transcript).
func speakerOf(t engram.Turn) string {
	if t.Speaker != "" {
		return strings.ToLower(t.Speaker)
	}
	return string(t.Role)
}

// burstOf returns the turns of t's burst in time order (t among them) from
// the turns around it: the run of turns by t's speaker, each within burstGap
// of the one before, at most n on each side of t, stopping at a turn taken
// (one an earlier result holds).
func burstOf(t engram.Turn, before, after []engram.Turn, n int, taken map[string]bool) []engram.Turn {
	who := speakerOf(t)
	joins := func(x, prev engram.Turn) bool {
		gap := x.TS.Sub(prev.TS)
		return speakerOf(x) == who && !taken[x.ID] && gap <= burstGap && gap >= -burstGap
	}
	var head []engram.Turn
	prev := t
	for i := len(before) - 1; i >= 0 && len(head) < n && joins(before[i], prev); i-- {
		head = append(head, before[i])
		prev = before[i]
	}
	out := make([]engram.Turn, 0, len(head)+1)
	for i := len(head) - 1; i >= 0; i-- {
		out = append(out, head[i])
	}
	out = append(out, t)
	prev = t
	for i := 0; i < len(after) && i < n && joins(after[i], prev); i++ {
		out = append(out, after[i])
		prev = after[i]
	}
	return out
}

// burstHit is a result to be: the candidate found and the turns of its
// burst (the candidate's turn alone when it stands in none). Where the
// burst was looked up, around holds the turns read on each side of it, in
// time order, and ends says, for each side, that they reach the session's
// end: deep recall takes a hit's context from them.
type burstHit struct {
	c      *candidate
	turns  []engram.Turn
	around [2][]engram.Turn
	ends   [2]bool
}

// bursts keeps the first k candidates in rank order, each with its burst (n
// turns on each side at most; 0: single turns). A candidate whose turn an
// earlier hit holds, or whose text repeats an earlier hit's (case and
// spacing folded), is skipped: ten copies of "sounds good" are one result,
// not ten, and so are the lines of one burst. With spread above 0 each hit
// scales the scores of the remaining candidates of its session by
// 1-spread, so that a question whose answers lie in several sessions gets
// more of them than ten lines of one (cands must be in rank order).
func (s *Service) bursts(ctx context.Context, cands []*candidate, k, n int, spread float64) ([]burstHit, error) {
	taken := make(map[string]bool, k)
	seenText := make(map[string]bool, k)
	inSession := make(map[string]int, k)
	used := make([]bool, len(cands))
	out := make([]burstHit, 0, k)
	text := func(c *candidate) string { return strings.ToLower(strings.Join(strings.Fields(c.turn.Content), " ")) }
	if n > 0 {
		// The first k are most of the hits: their turns around are read
		// in one lookup, not one each.
		if err := s.readAround(ctx, cands[:min(k, len(cands))], min(n, burstLook)); err != nil {
			return nil, err
		}
	}
	for len(out) < k {
		best, bestScore := -1, 0.0
		for i, c := range cands {
			if used[i] {
				continue
			}
			if taken[c.turn.ID] || seenText[text(c)] {
				used[i] = true
				continue
			}
			score := c.final
			if spread > 0 {
				score *= math.Pow(1-spread, float64(inSession[c.turn.Namespace+"\x00"+c.turn.Session]))
			}
			if best < 0 || score > bestScore {
				best, bestScore = i, score
			}
			if spread == 0 {
				break // in rank order already
			}
		}
		if best < 0 {
			break
		}
		c := cands[best]
		used[best] = true
		h := burstHit{c: c, turns: []engram.Turn{c.turn}}
		if n > 0 {
			var err error
			if h, err = s.burstAround(ctx, c, n, taken); err != nil {
				return nil, err
			}
		}
		for _, t := range h.turns {
			taken[t.ID] = true
		}
		seenText[text(c)] = true
		inSession[c.turn.Namespace+"\x00"+c.turn.Session]++
		out = append(out, h)
	}
	return out, nil
}

// burstLook is how many turns on each side of a hit are read first: most
// bursts are short, and only one that reaches as far is read again, n far.
const burstLook = 2

// burstAround returns c's hit with its burst, n turns on each side at
// most, from the turns read around c's turn (readAround, burstLook far),
// and reads again, n far, only for a burst that reaches as far.
func (s *Service) burstAround(ctx context.Context, c *candidate, n int, taken map[string]bool) (burstHit, error) {
	t := c.turn
	look := min(n, burstLook)
	before, after := c.before, c.after
	if c.aroundN < look {
		around, err := s.index.TurnsAround(ctx, []engram.Turn{t}, look)
		if err != nil {
			return burstHit{}, fmt.Errorf("turns around %s: %w", t.ID, err)
		}
		before, after = around[0].Before, around[0].After
	}
	before, after = before[max(0, len(before)-look):], after[:min(look, len(after))]
	for {
		burst := burstOf(t, before, after, look, taken)
		i := slices.IndexFunc(burst, func(b engram.Turn) bool { return b.ID == t.ID })
		head, tail := i, len(burst)-1-i
		// The burst may go on past what was read when it reaches a side
		// that was read in full.
		more := head == look && len(before) == look || tail == look && len(after) == look
		if look == n || !more {
			return burstHit{c: c, turns: burst,
				around: [2][]engram.Turn{before[:len(before)-head], after[tail:]},
				ends:   [2]bool{len(before) < look, len(after) < look}}, nil
		}
		look = n
		around, err := s.index.TurnsAround(ctx, []engram.Turn{t}, look)
		if err != nil {
			return burstHit{}, fmt.Errorf("turns around %s: %w", t.ID, err)
		}
		before, after = around[0].Before, around[0].After
	}
}

// context returns the n turns before the burst and the n after it, from
// the turns read around it where they reach far enough; ok is false when
// they do not.
func (h burstHit) context(n int) (before, after []engram.Turn, ok bool) {
	b, a := h.around[0], h.around[1]
	if len(b) < n && !h.ends[0] || len(a) < n && !h.ends[1] {
		return nil, nil, false
	}
	return b[max(0, len(b)-n):], a[:min(n, len(a))], true
}

// result is the hit as a turn result scored score: the found turn's, with
// the burst's text and every turn of the burst as its sources.
func (h burstHit) result(score float64) engram.Result {
	r := engram.TurnResult(h.c.turn, score)
	if len(h.turns) < 2 {
		return r
	}
	texts := make([]string, len(h.turns))
	r.Sources = make([]engram.Source, len(h.turns))
	for i, t := range h.turns {
		texts[i] = t.Content
		r.Sources[i] = engram.Source{ID: t.ID, Session: t.Session, TS: t.TS, Meta: t.Meta}
	}
	r.Text = strings.Join(texts, "\n")
	return r
}
