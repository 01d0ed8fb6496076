package kwindex

import (
	"context"
	"sync"
	"sync/atomic"
)

// GenCache is the index of a table that the writes of this process keep
// current (turns_fts): the table stays the store, the index a cache of it,
// built from the table when loaded (Load, Warm) and changed by each write
// after its commit. Every write transaction that changes the table counts
// a generation, which the store keeps in the same transaction, and, once
// committed, hands its change over (Begin, End). A search is given the
// generation the store holds (Best): when the index has not applied it yet
// (a write between commit and End, or one made by another process), the
// search goes to FTS5, and a change no write of this process explains
// starts a rebuild. So the index never answers from a state older than the
// table's.
type GenCache struct {
	second float64
	load   LoadFunc

	mu       sync.RWMutex
	idx      *Index // nil until loaded
	gen      int64  // the generation idx holds
	warm     bool   // keep it loaded: rebuild when it falls behind
	building bool
	builds   sync.WaitGroup   // the running build
	writers  int              // write transactions between Begin and End
	pending  map[int64]Change // committed changes past gen, by generation
	buildErr error            // the last build's failure
	ranked   atomic.Int64     // searches it answered
	state    loadState
}

// LoadFunc reads every doc of a table, passing each to add, and returns
// the generation they are of, read in the same transaction.
type LoadFunc func(ctx context.Context, add func(Doc)) (gen int64, err error)

// NewGenCache returns the cache of a table whose second column weighs
// second (see New), read by load.
func NewGenCache(second float64, load LoadFunc) *GenCache {
	return &GenCache{second: second, load: load}
}

// Change is what one write transaction did to the table.
type Change struct {
	// Gen is the generation the transaction counted; the store sets it
	// when the change is not Empty.
	Gen  int64
	dels []int64 // keys removed (a redaction removes, then adds)
	adds []Doc
}

// Reset empties the change, for a transaction that runs again.
func (c *Change) Reset() { *c = Change{} }

// Remove records the removal of the doc of key.
func (c *Change) Remove(key int64) { c.dels = append(c.dels, key) }

// Add records a doc added, replacing one of the same key.
func (c *Change) Add(d Doc) { c.adds = append(c.adds, d) }

// Empty reports whether the change changed nothing.
func (c *Change) Empty() bool { return len(c.dels) == 0 && len(c.adds) == 0 }

// Begin is called before a write transaction that may change the table;
// End after it, with the transaction's error.
func (g *GenCache) Begin() *Change {
	g.mu.Lock()
	g.writers++
	g.mu.Unlock()
	return &Change{}
}

// End applies c, once the changes of the generations before it are, if
// its transaction committed (err nil) and counted a generation.
func (g *GenCache) End(c *Change, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writers--
	if err != nil || c.Gen == 0 {
		return
	}
	if g.idx == nil && !g.building {
		return
	}
	if g.pending == nil {
		g.pending = make(map[int64]Change)
	}
	g.pending[c.Gen] = *c
	g.drain()
}

// drain applies the pending changes that follow the index's generation;
// g.mu must be held.
func (g *GenCache) drain() {
	if g.idx == nil {
		return
	}
	for gen := range g.pending {
		if gen <= g.gen {
			delete(g.pending, gen)
		}
	}
	for {
		c, ok := g.pending[g.gen+1]
		if !ok {
			return
		}
		delete(g.pending, c.Gen)
		g.apply(c)
	}
}

// apply changes the index by c; g.mu must be held.
func (g *GenCache) apply(c Change) {
	x := g.idx
	ver := x.ver
	for _, key := range c.dels {
		x.Remove(key)
	}
	for _, a := range c.adds {
		x.Add(a) // replaces a doc of the same key: a removal too
	}
	g.gen = c.Gen
	x.CompactIfWasteful()
	if x.ver != ver {
		x.refresh() // searches share a read lock: they only read
	}
}

// Load builds the index, unless it is loaded, and keeps it current from
// then on (see Warm); it waits for a build running already.
func (g *GenCache) Load(ctx context.Context) error {
	g.mu.Lock()
	g.warm = true
	loaded := g.idx != nil
	g.state.warm(loaded)
	g.mu.Unlock()
	if loaded {
		return nil
	}
	if !g.claimBuild() {
		g.builds.Wait() // one running already
		g.mu.RLock()
		defer g.mu.RUnlock()
		if g.idx == nil {
			return g.buildErr
		}
		return nil
	}
	return g.build(ctx)
}

// Warm starts building the index in the background, and keeps it current
// from then on; searches use FTS5 until it is ready.
func (g *GenCache) Warm() {
	g.mu.Lock()
	g.warm = true
	g.state.warm(g.idx != nil)
	g.mu.Unlock()
	g.rebuild()
}

// Loaded reports whether the index is loaded.
func (g *GenCache) Loaded() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.idx != nil
}

// Active reports whether the index is loaded or loading: whether a search
// should read the generation for Best.
func (g *GenCache) Active() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.idx != nil || g.warm
}

// claimBuild marks a build running, unless one is.
func (g *GenCache) claimBuild() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.building {
		return false
	}
	g.building = true
	g.builds.Add(1)
	if g.idx == nil && g.warm {
		g.state.v.Store(stateLoading) // again, after a build that failed
	}
	return true
}

// rebuild starts a build in the background unless one runs.
func (g *GenCache) rebuild() {
	if !g.claimBuild() {
		return
	}
	go g.build(context.Background()) // its error is kept in buildErr
}

// build reads every doc and makes the index, then applies the changes
// committed while it read; the caller has claimed the build.
func (g *GenCache) build(ctx context.Context) (err error) {
	defer func() {
		g.mu.Lock()
		g.building = false
		if err != nil {
			g.buildErr = err
			if g.idx == nil && g.warm {
				g.state.v.Store(stateFailed)
			}
		}
		g.mu.Unlock()
		g.builds.Done()
	}()
	idx := New(g.second)
	gen, err := g.load(ctx, idx.Add)
	if err != nil {
		return err
	}
	idx.Trim()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.idx, g.gen, g.buildErr = idx, gen, nil
	if g.warm {
		g.state.v.Store(stateReady)
	}
	g.drain()
	return nil
}

// Best returns the limit docs that f passes with the highest bm25() of
// words, best first, ties by key, if the index holds generation gen (the
// store's, read by the caller); ok is false when it cannot answer: not
// loaded, behind gen, or a word is not one token.
func (g *GenCache) Best(gen int64, words []string, f Filter, limit int) (hits []Hit, ok bool) {
	g.mu.RLock()
	var behind bool
	switch {
	case g.idx == nil:
	case g.gen < gen:
		// A change not applied yet: one of this process's writes between
		// its commit and its End, or another process's write. With no
		// write of this process in flight it is the latter, and the
		// changes pending behind it wait for a generation no write here
		// will bring: rebuild.
		behind = g.writers == 0 && !g.building
	default:
		var toks []string
		if toks, ok = QueryTokens(words); ok {
			hits = g.idx.Best(toks, f, limit)
		}
	}
	g.mu.RUnlock()
	if behind {
		g.rebuild()
	}
	if ok {
		g.ranked.Add(1)
	}
	return hits, ok
}

// State is the cache's state (Loading, Ready, Failed), "" when it is not
// warm. It takes no lock.
func (g *GenCache) State() string { return g.state.text() }

// Ranked counts the searches the index answered.
func (g *GenCache) Ranked() int64 { return g.ranked.Load() }

// Wait waits for the build running, if one is.
func (g *GenCache) Wait() { g.builds.Wait() }

// Gen is the generation the index holds, and the number of changes
// committed past it that wait for an earlier one.
func (g *GenCache) Gen() (gen int64, pending int) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.gen, len(g.pending)
}

// Compact compacts the loaded index now, rather than when its deleted docs
// outnumber the live ones.
func (g *GenCache) Compact() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idx != nil {
		g.idx.Compact()
	}
}
