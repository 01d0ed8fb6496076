package kwindex

import (
	"context"
	"sync"
)

// SeqCache holds the indexes of a table whose rows take change numbers as
// they are written (a units', a scenes' or a memories' seq column) and
// whose deletions the store counts: one index by kind of row (the units'
// session parts and scenes, each a full-text table of its own), or one.
//
// Rather than in each write, the indexes catch up when searched: the rows
// with a change number past the cache's are the changed ones, read again
// (Source.Changes). A deletion takes no change number: when the count of
// deletions moves, the indexes are built again. A catch-up of more than
// CatchUpLimit rows (the first load, a bulk ingest) runs in the background
// while searches use FTS5.
type SeqCache struct {
	src     Source
	kinds   []string
	keepIDs bool
	second  float64 // the weight of the rows' second column (New)

	mu       sync.Mutex
	warm     bool
	current  bool              // idx holds the state of seq and deleted
	seq      int64             // the change number caught up to
	deleted  int64             // the deletion count it reflects
	idx      map[string]*Index // by kind
	ids      map[string]int64  // row id → key, when keepIDs
	catching bool              // a catch-up is running
	// builds counts the catch-ups running, and idle is closed when the
	// count drops to 0 (a WaitGroup panics when searches Wait on it while
	// another search's Warm adds the next catch-up).
	builds int
	idle   chan struct{}
	ranked int64 // searches it answered

	// BetweenChunks, when set (by tests), is called between the chunks of
	// a catch-up.
	BetweenChunks func()
	state         loadState
}

// Source reads the rows of a SeqCache's table.
type Source interface {
	// State returns the table's change number (its highest) and its
	// count of deletions.
	State(ctx context.Context) (seq, deleted int64, err error)
	// Changes returns up to limit rows changed after a change number, in
	// change order, and the table's state, read together.
	Changes(ctx context.Context, after int64, limit int) (rows []Row, seq, deleted int64, err error)
}

// Row is a row of a SeqCache's table, as its index holds it.
type Row struct {
	ID     string // its id, kept when the cache keeps ids
	Kind   string // the index it goes to; a row of another kind is left out
	Change int64  // its change number
	Doc    Doc
}

// CatchUpLimit is the most changed rows a search reads itself.
const CatchUpLimit = 256

// catchUpChunk is the most changed rows a catch-up reads at once: their
// text is in memory together (a catch-up of every session part at once
// held all of their text).
const catchUpChunk = 512

// NewSeqCache returns the cache of src's rows, an index for each kind
// (one table of one kind: ""), keeping the key of each row id if keepIDs
// (for Score).
func NewSeqCache(src Source, keepIDs bool, kinds ...string) *SeqCache {
	return &SeqCache{src: src, kinds: kinds, keepIDs: keepIDs}
}

// WithSecond gives the rows' second column the weight second in the rank
// (New; 0, none, by default). Call it before the cache loads.
func (u *SeqCache) WithSecond(second float64) *SeqCache {
	u.second = second
	return u
}

// Warm starts loading the cache in the background, and keeps it current
// from then on.
func (u *SeqCache) Warm() {
	u.mu.Lock()
	u.warm = true
	u.state.warm(u.current && !u.catching)
	start := !u.catching && !u.current
	if start {
		u.catching = true
		u.begin()
	}
	u.mu.Unlock()
	if start {
		go func() {
			defer u.end()
			u.catchUp(context.Background(), true) // on failure searches stay with FTS5
		}()
	}
}

// begin counts a catch-up that starts; call it with mu held.
func (u *SeqCache) begin() {
	if u.builds == 0 {
		u.idle = make(chan struct{})
	}
	u.builds++
}

// end counts a catch-up that ended.
func (u *SeqCache) end() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.builds--; u.builds == 0 {
		close(u.idle)
	}
}

// Wait waits for the catch-ups running in the background (and those that
// start meanwhile).
func (u *SeqCache) Wait() {
	for {
		u.mu.Lock()
		n, idle := u.builds, u.idle
		u.mu.Unlock()
		if n == 0 {
			return
		}
		<-idle
	}
}

// CatchUp brings a loaded cache up to the table in the caller's goroutine,
// unless it is catching up already.
func (u *SeqCache) CatchUp(ctx context.Context) error {
	u.mu.Lock()
	if !u.current || u.catching {
		u.mu.Unlock()
		return nil
	}
	u.catching = true
	u.begin()
	u.mu.Unlock()
	defer u.end()
	return u.catchUp(ctx, false)
}

// catchUp brings u to the table's state: the changed rows on top of the
// indexes, or every row into new ones (fresh, or a deletion since the
// cache's state). It reads them catchUpChunk at a time, each chunk read
// together, and adds each chunk under u's lock; until the last, u's change
// number is behind the table's, so searches leave u to FTS5 (with), as
// they do while catching is set. A row changed again after its chunk takes
// a later change number and comes again in a later chunk; a deletion
// meanwhile starts again from every row.
func (u *SeqCache) catchUp(ctx context.Context, fresh bool) error {
	u.mu.Lock()
	after, deletedBefore := u.seq, u.deleted
	u.mu.Unlock()
	defer u.caughtUp()
	if fresh {
		after = 0
	}
	added := map[*Index]int64{} // what this catch-up added to each index
	for first := true; ; first = false {
		rows, seq, deleted, err := u.src.Changes(ctx, after, catchUpChunk)
		if err != nil {
			return err
		}
		if deleted != deletedBefore && (!fresh || !first) {
			// Rows deleted since the cache's state, or since this
			// fresh build began: every row again.
			fresh, first, after, deletedBefore = true, true, 0, deleted
			if rows, seq, deleted, err = u.src.Changes(ctx, 0, catchUpChunk); err != nil {
				return err
			}
		}
		deletedBefore = deleted
		u.mu.Lock()
		if first && fresh {
			u.idx = map[string]*Index{}
			for _, kind := range u.kinds {
				u.idx[kind] = New(u.second)
			}
			u.ids = map[string]int64{}
			clear(added)
		} else if u.seq != after || !u.current {
			u.mu.Unlock()
			return nil // another catch-up got there first
		}
		u.addRows(rows, added)
		last := len(rows) < catchUpChunk
		if last {
			after = seq
		} else {
			after = rows[len(rows)-1].Change
		}
		u.seq, u.deleted, u.current = after, deleted, true
		if last {
			u.tidy(fresh, added)
		}
		u.mu.Unlock()
		if last {
			return nil
		}
		if u.BetweenChunks != nil {
			u.BetweenChunks()
		}
	}
}

// caughtUp ends a catch-up; the state is ready if it left u current.
func (u *SeqCache) caughtUp() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.catching = false
	if u.warm {
		if u.current {
			u.state.v.Store(stateReady)
		} else if u.state.v.Load() != stateReady {
			u.state.v.Store(stateFailed)
		}
	}
}

// addRows adds rows to their kinds' indexes, counting them in added; u.mu
// must be held.
func (u *SeqCache) addRows(rows []Row, added map[*Index]int64) {
	for _, r := range rows {
		x := u.idx[r.Kind]
		if x == nil {
			continue
		}
		x.Add(r.Doc)
		added[x]++
		if u.keepIDs {
			u.ids[r.ID] = r.Doc.Key
		}
	}
}

// tidy trims or compacts the indexes at the end of a catch-up; u.mu must
// be held.
func (u *SeqCache) tidy(fresh bool, added map[*Index]int64) {
	for _, x := range u.idx {
		switch {
		case fresh:
			x.Trim()
		case added[x] > 1024 && 4*added[x] > x.live:
			// A big catch-up (the first search after the layer jobs
			// ran) grew the postings by appending: give them their
			// length.
			x.Compact()
		default:
			x.CompactIfWasteful()
		}
	}
}

// with calls fn, under u's lock, with u caught up, and reports whether it
// did: false (the search goes to FTS5) when u is not warm, or so far
// behind that it catches up in the background.
func (u *SeqCache) with(ctx context.Context, fn func()) (bool, error) {
	u.mu.Lock()
	warm := u.warm
	u.mu.Unlock()
	if !warm {
		return false, nil
	}
	seq, deleted, err := u.src.State(ctx)
	if err != nil {
		return false, err
	}
	u.mu.Lock()
	if u.current && u.seq == seq && u.deleted == deleted {
		fn()
		u.ranked++
		u.mu.Unlock()
		return true, nil
	}
	if u.catching {
		u.mu.Unlock()
		return false, nil
	}
	u.catching = true
	fresh := !u.current || u.deleted != deleted
	if fresh || seq-u.seq > CatchUpLimit {
		u.begin()
		u.mu.Unlock()
		go func() {
			defer u.end()
			u.catchUp(context.Background(), fresh)
		}()
		return false, nil
	}
	u.begin() // counted too, so that a Wait of another search waits for it
	u.mu.Unlock()
	err = u.catchUp(ctx, false)
	u.end()
	if err != nil {
		return false, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.current || u.seq < seq {
		return false, nil
	}
	fn()
	u.ranked++
	return true, nil
}

// kindsOr is kinds, or all of u's when nil.
func (u *SeqCache) kindsOr(kinds []string) []string {
	if kinds == nil {
		return u.kinds
	}
	return kinds
}

// Best returns, for each of kinds (nil: every kind of the cache) in turn,
// the limit rows that f passes with the highest bm25() of words, best
// first, ties by key; ok is false when the cache cannot answer (see with),
// or a word is not one token.
func (u *SeqCache) Best(ctx context.Context, kinds, words []string, f Filter, limit int) (hits []Hit, ok bool, err error) {
	toks, ok := QueryTokens(words)
	if !ok {
		return nil, false, nil
	}
	ok, err = u.with(ctx, func() {
		for _, kind := range u.kindsOr(kinds) {
			if x := u.idx[kind]; x != nil {
				hits = append(hits, x.Best(toks, f, limit)...)
			}
		}
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return hits, true, nil
}

// Known reports, for each of words, whether a live row of any of kinds
// (nil: every kind) holds it, in one look at the cache's state (Best would
// read the table's state once a word); ok as Best's.
func (u *SeqCache) Known(ctx context.Context, kinds, words []string) (known []bool, ok bool, err error) {
	toks, ok := QueryTokens(words)
	if !ok {
		return nil, false, nil
	}
	ok, err = u.with(ctx, func() {
		known = make([]bool, len(toks))
		for i, tok := range toks {
			for _, kind := range u.kindsOr(kinds) {
				if x := u.idx[kind]; x != nil && x.holds(tok) {
					known[i] = true
					break
				}
			}
		}
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return known, true, nil
}

// IDHit is a row's score, by its id and the kind of its index.
type IDHit struct {
	ID, Kind string
	Score    float64
}

// Score returns the bm25() of words of each row of ids (the cache keeps
// ids) that holds one of them, kind by kind (nil: every kind), in no order
// within a kind; ok as Best's. It answers from memory alone: the rows are
// those of the table's state when it was called (see with).
func (u *SeqCache) Score(ctx context.Context, kinds, words, ids []string) (hits []IDHit, ok bool, err error) {
	toks, ok := QueryTokens(words)
	if !ok {
		return nil, false, nil
	}
	ok, err = u.with(ctx, func() {
		want := make(map[int64]bool, len(ids))
		idOf := make(map[int64]string, len(ids))
		for _, id := range ids {
			if key, found := u.ids[id]; found {
				want[key], idOf[key] = true, id
			}
		}
		for _, kind := range u.kindsOr(kinds) {
			if x := u.idx[kind]; x != nil {
				x.Score(toks, Filter{Keys: want}, func(h Hit) { hits = append(hits, IDHit{ID: idOf[h.Key], Kind: kind, Score: h.Score}) })
			}
		}
	})
	if err != nil || !ok {
		return nil, false, err
	}
	return hits, true, nil
}

// State is the cache's state (Loading, Ready, Failed), "" when it is not
// warm. It takes no lock.
func (u *SeqCache) State() string { return u.state.text() }

// SeqInfo is what a SeqCache holds, for tests and diagnostics.
type SeqInfo struct {
	Current      bool  // it holds the state of Seq and Deleted
	Seq, Deleted int64 // the change number and the deletion count it holds
	Dead         int64 // replaced or deleted docs its indexes keep
	Ranked       int64 // searches it answered
}

// Info reports what u holds.
func (u *SeqCache) Info() SeqInfo {
	u.mu.Lock()
	defer u.mu.Unlock()
	in := SeqInfo{Current: u.current, Seq: u.seq, Deleted: u.deleted, Ranked: u.ranked}
	for _, x := range u.idx {
		in.Dead += x.Dead()
	}
	return in
}

// Source is where u reads its rows.
func (u *SeqCache) Source() Source { return u.src }
