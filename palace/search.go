package palace

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/hitlist"
	"github.com/engram-dev/engram/internal/kwindex"
)

// Search limits.
const (
	DefaultSearchLimit = engram.DefaultK // used when TextQuery.Limit <= 0
	MaxSearchLimit     = 1000            // larger limits are cut to this
)

// searchLimit is the limit a query asking for n gets: DefaultSearchLimit
// for n <= 0, at most MaxSearchLimit.
func searchLimit(n int) int {
	if n <= 0 {
		return DefaultSearchLimit
	}
	return min(n, MaxSearchLimit)
}

// SearchTurns finds the turns that best match q.Text, best first, at most
// q.Limit of them, in q.Namespace or in all namespaces if it is "".
//
// The query is cut into terms (see the package documentation), stopwords
// dropped, and the turns containing any term ranked by BM25 over the keyword
// index. If that finds fewer than q.Limit turns, substring matches of the
// terms of three or more characters (trigram index) follow, then turns
// containing a Chinese or Japanese term of one or two characters anywhere
// (turns_cjk), each scored below the hits before it. Scores are positive and
// finite, higher is better; they compare hits of one query, not of two.
// Limits above MaxSearchLimit are cut to it.
//
// A query with no terms left after stopwords finds nothing, without error.
// User text never reaches FTS5 as syntax, so no query string is an error.
func (db *DB) SearchTurns(ctx context.Context, q engram.TextQuery) ([]engram.TurnHit, error) {
	limit := searchLimit(q.Limit)
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil {
		return nil, err
	}
	if len(terms) == 0 {
		return nil, nil
	}

	var long, short []term // for the substring and the short CJK stage
	for _, t := range terms {
		switch {
		case t.N >= 3:
			long = append(long, t)
		case t.CJK:
			short = append(short, t)
		}
	}

	s := search{List: hitlist.New(limit), ns: q.Namespace, from: nanosOrZero(q.From), to: nanosOrZero(q.To)}
	if err := db.rankKeyword(ctx, &s, terms); err != nil {
		return nil, fmt.Errorf("palace: search turns: %w", err)
	}
	if s.Full() {
		return s.Hits, nil
	}
	err = db.View(ctx, func(tx *sql.Tx) error {
		if held, err := s.window(ctx, tx); err != nil || !held {
			return err
		}
		if err := s.substring(ctx, tx, long); err != nil {
			return err
		}
		return s.short(ctx, tx, short)
	})
	if err != nil {
		return nil, fmt.Errorf("palace: search turns: %w", err)
	}
	return s.Hits, nil
}

// Parallel keyword ranking: BM25 scores every turn holding a term of the
// query, about a microsecond a turn, so a query of common words over
// 100,000 turns costs tens of milliseconds on one core. Above
// parallelRankRows turns the ranking is cut into rowid ranges ranked at once
// on separate read connections, each its best limit, then merged: BM25's
// statistics (row count, each term's document frequency) are those of the
// whole index in every range, so the scores compare and the merge is the
// ranking of one query.
const parallelRankRows = 20_000

// rankKeyword fills s with the BM25 ranking of terms (the keyword stage).
func (db *DB) rankKeyword(ctx context.Context, s *search, terms []term) error {
	if done, err := db.rankFromMemory(ctx, s, terms); err != nil || done {
		return err
	}
	parts := min(runtime.GOMAXPROCS(0), DefaultReaders)
	var last int64
	if parts > 1 {
		err := db.View(ctx, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM turns`).Scan(&last)
		})
		if err != nil {
			return err
		}
	}
	if parts < 2 || last < db.parallelRank {
		return db.View(ctx, func(tx *sql.Tx) error { return s.keyword(ctx, tx, terms, 0, 0) })
	}
	step := last/int64(parts) + 1
	ranges, err := inParallel(parts, func(i int) ([]engram.TurnHit, error) {
		sub := search{List: hitlist.New(s.Limit), ns: s.ns, from: s.from, to: s.to}
		err := db.View(ctx, func(tx *sql.Tx) error {
			return sub.keyword(ctx, tx, terms, int64(i)*step+1, int64(i+1)*step+1)
		})
		return sub.Hits, err
	})
	if err != nil {
		return err
	}
	var all []engram.TurnHit
	for _, r := range ranges {
		all = append(all, r...)
	}
	slices.SortStableFunc(all, func(a, b engram.TurnHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Turn.Seq, b.Turn.Seq)
	})
	s.Floor = 1
	for _, h := range all {
		if !s.Add(h.Turn, h.Score) {
			break
		}
		s.Floor = h.Score
	}
	return nil
}

// inParallel runs fn for 0 to n-1 at once, each a goroutine of its own
// (a search on a read connection of its own), and returns the results in
// that order, or the errors joined.
func inParallel[T any](n int, fn func(i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i], errs[i] = fn(i) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// timeFilter keeps turns in [?4, ?5) of Unix nanoseconds, 0 meaning no bound.
const timeFilter = `(?4 = 0 OR t.ts >= ?4) AND (?5 = 0 OR t.ts < ?5)`

// nanosOrZero is t in Unix nanoseconds, 0 for the zero time (no bound).
func nanosOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// maxSubstringTerms bounds the trigram lookups of one query.
const maxSubstringTerms = 8

// maxSubstringRows bounds the turns one trigram lookup reads, newest first:
// a term whose trigrams are each common but rarely together (most of what
// the trigrams match does not hold the term) costs a row read each.
const maxSubstringRows = 10_000

// trigramExpr returns the FTS5 query of turns_trigram that matches the
// turns holding every trigram of t (of three characters or more): each
// trigram a quoted string, so that nothing is read as FTS5 syntax.
func trigramExpr(t term) string {
	runes := []rune(t.Text)
	seen := make(map[string]bool, len(runes))
	var b strings.Builder
	for i := 0; i+3 <= len(runes); i++ {
		g := string(runes[i : i+3])
		if seen[g] {
			continue
		}
		seen[g] = true
		if b.Len() > 0 {
			b.WriteString(" AND ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(g, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// containsFolded reports whether content, in NFKC and lower case as the
// trigram index reads it, holds sub (already so).
func containsFolded(content, sub string) bool {
	return strings.Contains(strings.ToLower(kwindex.NFKC(content)), sub)
}

// search collects the hits of one query across its stages.
type search struct {
	hitlist.List
	ns       string
	from, to int64 // the TS range in Unix nanoseconds; 0 = unbounded
	lo, hi   int64 // the seqs of the turns in from..to (window)
}

// keyword ranks the turns holding any of terms by BM25, those with a rowid
// in [lo, hi) when hi > 0.
func (s *search) keyword(ctx context.Context, tx *sql.Tx, terms []term, lo, hi int64) error {
	const all = `SELECT ` + turnColumns + `, turns_fts.rank
		FROM turns_fts JOIN turns t ON t.seq = turns_fts.rowid
		WHERE turns_fts MATCH ?1 AND (?2 = '' OR t.namespace = ?2) AND ` + timeFilter + `
		ORDER BY turns_fts.rank LIMIT ?3`
	// The bounds are plain comparisons of the FTS table's rowid, so that
	// FTS5 itself skips the rows outside them.
	const ranged = `SELECT ` + turnColumns + `, turns_fts.rank
		FROM turns_fts JOIN turns t ON t.seq = turns_fts.rowid
		WHERE turns_fts MATCH ?1 AND turns_fts.rowid >= ?6 AND turns_fts.rowid < ?7
		AND (?2 = '' OR t.namespace = ?2) AND ` + timeFilter + `
		ORDER BY turns_fts.rank LIMIT ?3`
	q, args := all, []any{matchExpr(terms), s.ns, s.Limit, s.from, s.to}
	if hi > 0 {
		q, args = ranged, append(args, lo, hi)
	}
	s.Floor = 1
	err := queryTurns(ctx, tx, q, args, func(t engram.Turn, rank float64) {
		if s.Add(t, -rank) {
			s.Floor = s.Hits[len(s.Hits)-1].Score
		}
	})
	return err
}

// window bounds the fallback stages by the seqs of the turns in the
// query's time range (s.lo, s.hi), read off the ts index: the trigram and
// CJK indexes know no time, and without the bounds every turn they match
// would be read only to be dropped for its time. held is false when the
// range holds no turn.
func (s *search) window(ctx context.Context, tx *sql.Tx) (held bool, err error) {
	s.lo, s.hi = 0, math.MaxInt64
	if s.from == 0 && s.to == 0 {
		return true, nil
	}
	q, args := `SELECT min(seq), max(seq) FROM turns WHERE ts IS NOT NULL`, []any(nil)
	if s.ns != "" {
		q, args = q+` AND namespace = ?`, append(args, s.ns)
	}
	if s.from != 0 {
		q, args = q+` AND ts >= ?`, append(args, s.from)
	}
	if s.to != 0 {
		q, args = q+` AND ts < ?`, append(args, s.to)
	}
	var lo, hi sql.NullInt64
	if err := tx.QueryRowContext(ctx, q, args...).Scan(&lo, &hi); err != nil {
		return false, err
	}
	s.lo, s.hi = lo.Int64, hi.Int64
	return lo.Valid, nil
}

// substring adds the turns that contain a term inside a longer token, found
// through the trigram index, one term at a time, newest first. Terms that
// are no token of the keyword index come first: they are what this stage is
// for (Kafka in KafkaConsumer). Each lookup streams in rowid order and stops
// at the limit, because ranking every substring match of a common term
// ("decide" in decided, undecided, ...) would cost a scan of its trigrams'
// posting lists: hundreds of milliseconds on 100,000 turns.
func (s *search) substring(ctx context.Context, tx *sql.Tx, long []term) error {
	if s.Full() || len(long) == 0 {
		return nil
	}
	var unknown, known []term
	for _, t := range long {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM turns_fts WHERE turns_fts MATCH ? LIMIT 1`, matchExpr([]term{t})).Scan(&one)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			unknown = append(unknown, t)
		case err != nil:
			return err
		default:
			known = append(known, t)
		}
	}
	order := append(unknown, known...)
	if len(order) > maxSubstringTerms {
		order = order[:maxSubstringTerms]
	}
	// The index has no positions (detail=none: migration 0015), so a
	// lookup finds the turns holding every trigram of the term and keeps
	// those whose text holds the term itself, as the index folds case.
	const q = `SELECT ` + turnColumns + `
		FROM turns_trigram JOIN turns t ON t.seq = turns_trigram.rowid
		WHERE turns_trigram MATCH ?1 AND turns_trigram.rowid BETWEEN ?6 AND ?7
		AND (?2 = '' OR t.namespace = ?2) AND ` + timeFilter + `
		ORDER BY turns_trigram.rowid DESC LIMIT ?3`
	for _, t := range order {
		if s.Full() {
			return nil
		}
		found := 0
		rows, err := tx.QueryContext(ctx, q, trigramExpr(t), s.ns, maxSubstringRows, s.from, s.to, s.lo, s.hi)
		if err != nil {
			return err
		}
		err = scanTurnsWhile(rows, func(turn engram.Turn, _ float64) bool {
			if containsFolded(turn.Content, t.Text) {
				s.AddExtra(turn)
				found++
			}
			return found < s.Limit && !s.Full()
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// short adds the turns whose content or speaker contains a one- or
// two-character Chinese or Japanese term anywhere, newest first: gse may
// have merged the term into a longer word (会議 into 会議室), and trigrams
// need three characters. This is LIKE '%term%' over the CJK text, answered
// from turns_cjk, an index of every such character and adjacent pair,
// instead of a scan of every turn.
func (s *search) short(ctx context.Context, tx *sql.Tx, short []term) error {
	if s.Full() || len(short) == 0 {
		return nil
	}
	const q = `SELECT ` + turnColumns + `
		FROM turns_cjk JOIN turns t ON t.seq = turns_cjk.rowid
		WHERE turns_cjk MATCH ?1 AND turns_cjk.rowid BETWEEN ?6 AND ?7
		AND (?2 = '' OR t.namespace = ?2) AND ` + timeFilter + `
		ORDER BY turns_cjk.rowid DESC LIMIT ?3`
	return queryTurns(ctx, tx, q, []any{matchExpr(short), s.ns, s.Limit, s.from, s.to, s.lo, s.hi}, func(t engram.Turn, _ float64) { s.AddExtra(t) })
}
