package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// corpus generates the turns: letters-only pseudo-words (consonant-vowel
// syllables, so that no stop word or number is among them) drawn by a Zipf
// law, as words are in chat, 8 to 30 a turn. Turn i is the same for a seed
// whatever the order the clients ask for it in.
type corpus struct {
	seed  uint64
	words []string
}

func newCorpus(seed uint64, size int) *corpus {
	rng := rand.New(rand.NewPCG(seed, 0))
	const cons, vows = "bdfghjklmnprstvz", "aeiou"
	seen := map[string]bool{}
	c := &corpus{seed: seed}
	for len(c.words) < size {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			c.words = append(c.words, w)
		}
	}
	return c
}

// content returns the words of turn i.
func (c *corpus) content(i int) []string {
	rng := rand.New(rand.NewPCG(c.seed, uint64(i)+1))
	z := rand.NewZipf(rng, 1.07, 2, uint64(len(c.words)-1))
	n := 8 + rng.IntN(23)
	out := make([]string, n)
	for j := range out {
		out[j] = c.words[z.Uint64()]
	}
	return out
}

type turnIn struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Speaker string `json:"speaker"`
	Content string `json:"content"`
}

func (c *corpus) turn(i int) turnIn {
	return turnIn{
		ID:      fmt.Sprintf("tb-%07d", i),
		Session: fmt.Sprintf("s-%05d", i/50),
		Speaker: []string{"Ana", "Bo", "Cy"}[i%3],
		Content: strings.Join(c.content(i), " "),
	}
}

// question makes a question from three words of turn i (fewer for a turn
// of fewer distinct words), in the turn's order.
func (c *corpus) question(i int, rng *rand.Rand) string {
	words := c.content(i)
	var picked []string
	for _, j := range rng.Perm(len(words)) {
		w := words[j]
		dup := false
		for _, p := range picked {
			dup = dup || p == w
		}
		if !dup {
			picked = append(picked, w)
		}
		if len(picked) == 3 {
			break
		}
	}
	return strings.Join(picked, " ")
}

type postAnswer struct {
	Turns []struct {
		ID  string `json:"id"`
		Seq int64  `json:"seq"`
	} `json:"turns"`
}

type recallAnswer struct {
	Mode    string   `json:"mode"`
	Results []result `json:"results"`
}

type result struct {
	ID string `json:"id"`
}

// ingestReport is the ingest of one configuration.
type ingestReport struct {
	Turns       int     `json:"turns"`
	Seconds     float64 `json:"seconds"`
	TurnsPerSec float64 `json:"turns_per_s"`
	PostP50ms   float64 `json:"post_p50_ms"`
	PostP99ms   float64 `json:"post_p99_ms"`
	// CatchUpSeconds is the time from the last acknowledgement until every
	// server had indexed every turn (0 for one server, which indexes a turn
	// before it acknowledges it).
	CatchUpSeconds float64 `json:"catch_up_seconds"`
}

// clientsOf runs n clients at once, client c speaking to servers[c %
// len(servers)], until the first error; each calls next until it returns
// false.
func clientsOf(ctx context.Context, n int, servers []*server, work func(ctx context.Context, s *server) (bool, error)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := servers[c%len(servers)]
			for {
				more, err := work(ctx, s)
				if err != nil {
					cancel(fmt.Errorf("server %s: %w", s.name, err))
					return
				}
				if !more {
					return
				}
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}

// ingest posts turns [0, o.turns) in calls of o.batch with o.clients
// clients, then waits until every server has indexed every turn.
func ingest(ctx context.Context, o options, c *corpus, servers []*server) (ingestReport, error) {
	var (
		next   atomic.Int64
		maxSeq atomic.Int64
		mu     sync.Mutex
		lat    []time.Duration
	)
	start := time.Now()
	err := clientsOf(ctx, o.clients, servers, func(ctx context.Context, s *server) (bool, error) {
		first := int(next.Add(int64(o.batch))) - o.batch
		if first >= o.turns {
			return false, nil
		}
		var body struct {
			Turns []turnIn `json:"turns"`
		}
		for i := first; i < min(first+o.batch, o.turns); i++ {
			body.Turns = append(body.Turns, c.turn(i))
		}
		var ans postAnswer
		t0 := time.Now()
		if err := s.post(ctx, "/v1/turns", body, &ans); err != nil {
			return false, err
		}
		d := time.Since(t0)
		if len(ans.Turns) != len(body.Turns) {
			return false, fmt.Errorf("POST /v1/turns of %d turns answered %d", len(body.Turns), len(ans.Turns))
		}
		for _, t := range ans.Turns {
			for {
				m := maxSeq.Load()
				if t.Seq <= m || maxSeq.CompareAndSwap(m, t.Seq) {
					break
				}
			}
		}
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		return true, nil
	})
	if err != nil {
		return ingestReport{}, fmt.Errorf("ingest: %w", err)
	}
	acked := time.Since(start)
	rep := ingestReport{
		Turns:       o.turns,
		Seconds:     acked.Seconds(),
		TurnsPerSec: float64(o.turns) / acked.Seconds(),
		PostP50ms:   ms(percentile(lat, 50)),
		PostP99ms:   ms(percentile(lat, 99)),
	}
	if err := waitIndexed(ctx, servers, maxSeq.Load()); err != nil {
		return rep, err
	}
	rep.CatchUpSeconds = time.Since(start).Seconds() - rep.Seconds
	return rep, nil
}

// waitIndexed waits until every server's health says it has indexed seq.
func waitIndexed(ctx context.Context, servers []*server, seq int64) error {
	deadline := time.Now().Add(10 * time.Minute)
	for _, s := range servers {
		for {
			var h health
			if err := s.get(ctx, "/v1/health", &h); err != nil {
				return fmt.Errorf("server %s: health: %w", s.name, err)
			}
			if h.IndexedSeq >= seq && h.IndexLag == 0 {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("server %s has indexed up to seq %d (lag %d), not %d, after 10 minutes", s.name, h.IndexedSeq, h.IndexLag, seq)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// recallReport is the recall of one configuration.
type recallReport struct {
	Queries    int     `json:"queries"`
	Seconds    float64 `json:"seconds"`
	PerSec     float64 `json:"queries_per_s"`
	P50ms      float64 `json:"p50_ms"`
	P99ms      float64 `json:"p99_ms"`
	ModeRan    string  `json:"mode_ran"`
	FoundShare float64 `json:"found_share"` // questions whose turn is among the 10 results: recall works
}

// recall asks o.queries questions, each made from a random ingested turn,
// with o.clients clients.
func recall(ctx context.Context, o options, c *corpus, servers []*server) (recallReport, error) {
	var (
		next  atomic.Int64
		found atomic.Int64
		mu    sync.Mutex
		lat   []time.Duration
		ran   string
	)
	start := time.Now()
	err := clientsOf(ctx, o.clients, servers, func(ctx context.Context, s *server) (bool, error) {
		q := int(next.Add(1)) - 1
		if q >= o.queries {
			return false, nil
		}
		rng := rand.New(rand.NewPCG(c.seed+1, uint64(q)))
		i := rng.IntN(o.turns)
		want := c.turn(i).ID
		var ans recallAnswer
		t0 := time.Now()
		err := s.post(ctx, "/v1/recall", map[string]any{"query": c.question(i, rng), "mode": o.mode, "k": 10}, &ans)
		d := time.Since(t0)
		if err != nil {
			return false, err
		}
		for _, r := range ans.Results {
			if r.ID == want {
				found.Add(1)
				break
			}
		}
		mu.Lock()
		lat = append(lat, d)
		ran = ans.Mode
		mu.Unlock()
		return true, nil
	})
	if err != nil {
		return recallReport{}, fmt.Errorf("recall: %w", err)
	}
	took := time.Since(start)
	return recallReport{
		Queries:    o.queries,
		Seconds:    took.Seconds(),
		PerSec:     float64(o.queries) / took.Seconds(),
		P50ms:      ms(percentile(lat, 50)),
		P99ms:      ms(percentile(lat, 99)),
		ModeRan:    ran,
		FoundShare: float64(found.Load()) / float64(o.queries),
	}, nil
}

// delayReport is the delay until B finds a turn A acknowledged.
type delayReport struct {
	Probes int     `json:"probes"`
	P50ms  float64 `json:"p50_ms"`
	P99ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// errProbeLost is a probe B did not find within probeLimit.
var errProbeLost = errors.New("B did not find the turn")

const probeLimit = 30 * time.Second

// delays writes n turns on a, one at a time, each with a word of its own,
// and after each acknowledgement asks b's keyword recall again and again,
// without pause, until it returns the turn: the delay is from a's answer to
// b's first answer that holds it.
func delays(ctx context.Context, n int, a, b *server) (delayReport, error) {
	var ds []time.Duration
	for i := range n {
		word := "qx" + letters(i)
		id := "probe-" + word
		t := turnIn{ID: id, Session: "probes", Speaker: "Ana", Content: "probe " + word + " written on A"}
		var ans postAnswer
		if err := a.post(ctx, "/v1/turns", t, &ans); err != nil {
			return delayReport{}, fmt.Errorf("probe %d on %s: %w", i, a.name, err)
		}
		acked := time.Now()
		for {
			var r recallAnswer
			if err := b.post(ctx, "/v1/recall", map[string]any{"query": word, "mode": "keyword", "k": 5}, &r); err != nil {
				return delayReport{}, fmt.Errorf("probe %d on %s: %w", i, b.name, err)
			}
			if slices.ContainsFunc(r.Results, func(r result) bool { return r.ID == id }) {
				ds = append(ds, time.Since(acked))
				break
			}
			if time.Since(acked) > probeLimit {
				return delayReport{}, fmt.Errorf("probe %d (%s): %w within %v", i, id, errProbeLost, probeLimit)
			}
		}
	}
	return delayReport{Probes: n, P50ms: ms(percentile(ds, 50)), P99ms: ms(percentile(ds, 99)), MaxMs: ms(percentile(ds, 100))}, nil
}

// letters writes i in base 19 with consonants other than s and y: with no
// vowel and no suffix the Porter stemmer takes off, no two probes' words
// share a stem, nor one of them a generated word's.
func letters(i int) string {
	const digits = "bcdfghjklmnpqrtvwxz"
	s := []byte{}
	for {
		s = append([]byte{digits[i%len(digits)]}, s...)
		i /= len(digits)
		if i == 0 {
			return string(s)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
