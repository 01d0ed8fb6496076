package pgpalace

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/hitlist"
	"github.com/engram-dev/engram/internal/kwindex"
)

// Search limits, package palace's.
const (
	defaultSearchLimit = engram.DefaultK
	maxSearchLimit     = 1000
)

// speakerWeight is the weight of a turn's speaker in its rank, as in
// package palace's turns_fts (bm25(1.0, 0.4)).
const speakerWeight = 0.4

// keyTurnsDeleted is the palace_meta key counting the deletions of turns,
// which send every server's keyword index to build itself again.
const keyTurnsDeleted = "turns_deleted"

// maxWaits bounds how often a search waits for the keyword index to catch
// up before it gives up: each wait ends when a load or catch-up does.
const maxWaits = 8

// turnChanges reads the turns changed after a change number for the
// turns' keyword index: the content, with the speaker as a second field.
func turnChanges(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error) {
	q, err := tx.Query(ctx, `SELECT seq, namespace, ts, content, speaker, change FROM palace_turns
		WHERE change > $1 ORDER BY change LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(q, func(r pgx.CollectableRow) (kwindex.Row, error) {
		var (
			row     kwindex.Row
			ts      *int64
			content []byte
			speaker string
		)
		if err := r.Scan(&row.Doc.Key, &row.Doc.Namespace, &ts, &content, &speaker, &row.Change); err != nil {
			return row, err
		}
		spanDoc(&row.Doc, ts, nil)
		var err error
		if row.Doc.Text, err = kwindex.IndexText(string(content)); err != nil {
			return row, err
		}
		row.Doc.Second, err = kwindex.IndexText(speaker)
		return row, err
	})
}

// indexes are the keyword indexes, by what they index.
func (db *DB) indexes() map[string]*kwindex.SeqCache {
	return map[string]*kwindex.SeqCache{"turns": db.kw, "units": db.ukw, "scenes": db.skw, "triples": db.gkw, "memories": db.mkw, "chunks": db.vkw}
}

// WarmKeywordIndex starts loading the keyword indexes in the background.
func (db *DB) WarmKeywordIndex() {
	for _, c := range db.indexes() {
		c.Warm()
	}
}

// LoadKeywordIndex loads the keyword indexes and waits until they are.
func (db *DB) LoadKeywordIndex(ctx context.Context) error {
	db.WarmKeywordIndex()
	for _, c := range db.indexes() {
		c.Wait()
		if err := c.CatchUp(ctx); err != nil {
			return wrap("load the keyword indexes", err)
		}
	}
	return nil
}

// KeywordIndexStates reports the states of the warm keyword indexes, by
// what they index ("turns", "units", "scenes"); nil when none is warm.
func (db *DB) KeywordIndexStates() map[string]string {
	var out map[string]string
	for name, c := range db.indexes() {
		if st := c.State(); st != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = st
		}
	}
	return out
}

// SearchTurns finds the turns that best match q.Text, best first, as
// package palace's does: the turns holding a term ranked by BM25; if
// fewer than the limit, the turns whose text holds a term of three or
// more characters inside a longer word, newest first, then those holding a
// Chinese or Japanese term of one or two characters, each scored below
// the hits before it. A query term of several tokens (which package
// palace's FTS5 reads as a phrase) is searched as its tokens.
func (db *DB) SearchTurns(ctx context.Context, q engram.TextQuery) ([]engram.TurnHit, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = defaultSearchLimit
	}
	limit = min(limit, maxSearchLimit)
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	s := search{db: db, List: hitlist.New(limit), ns: q.Namespace, from: nanosOrZero(q.From), to: nanosOrZero(q.To)}
	if err := s.keyword(ctx, terms); err != nil {
		return nil, wrap("search turns", err)
	}
	var long, short []string
	for _, t := range terms {
		switch {
		case t.N >= 3:
			long = append(long, t.Text)
		case t.CJK:
			short = append(short, t.Text)
		}
	}
	if s.Full() || (len(long) == 0 && len(short) == 0) {
		return s.Hits, nil
	}
	if held, err := s.window(ctx); err != nil || !held {
		return s.Hits, wrap("search turns", err)
	}
	if err := s.substring(ctx, long); err != nil {
		return nil, wrap("search turns", err)
	}
	if err := s.short(ctx, short); err != nil {
		return nil, wrap("search turns", err)
	}
	return s.Hits, nil
}

// search collects the hits of one query across its stages.
type search struct {
	db *DB
	hitlist.List
	ns       string
	from, to int64 // the TS range in Unix nanoseconds; 0 = unbounded
	lo, hi   int64 // the seqs of the turns in from..to (window)
}

// best ranks the turns holding any of words by BM25 from the keyword
// index, caught up with the table.
func (db *DB) best(ctx context.Context, words []string, f kwindex.Filter, limit int) (hits []kwindex.Hit, err error) {
	words = queryWords(words)
	err = fromIndex(ctx, db.kw, func() (ok bool, err error) {
		hits, ok, err = db.kw.Best(ctx, nil, words, f, limit)
		return ok, err
	})
	return hits, err
}

// known reports, for each of words, whether a turn holds it as a word:
// for words of one token each, in one look at the keyword index; a word of
// several tokens is known when a turn holds one of them.
func (db *DB) known(ctx context.Context, words []string) ([]bool, error) {
	var known []bool
	if _, ok := kwindex.QueryTokens(words); ok {
		err := fromIndex(ctx, db.kw, func() (ok bool, err error) {
			known, ok, err = db.kw.Known(ctx, nil, words)
			return ok, err
		})
		return known, err
	}
	for _, w := range words {
		hits, err := db.best(ctx, []string{w}, kwindex.Filter{}, 1)
		if err != nil {
			return nil, err
		}
		known = append(known, len(hits) > 0)
	}
	return known, nil
}

// queryWords are a query's words as the keyword indexes take them: a
// word of several tokens (which FTS5 reads as a phrase) as its tokens.
func queryWords(words []string) []string {
	if _, ok := kwindex.QueryTokens(words); ok {
		return words
	}
	var toks []string
	for _, w := range words {
		kwindex.Tokens(w, func(tok string) { toks = append(toks, tok) })
	}
	return toks
}

// textWords are the words of a search's text as the keyword indexes
// take them (queryWords); none when it has no searchable term.
func textWords(text string) ([]string, error) {
	terms, err := kwindex.QueryTerms(text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	return queryWords(termWords(terms)), nil
}

// searchLimit is the limit a listing asking for n gets, as package
// palace's: defaultSearchLimit for n <= 0, at most maxSearchLimit.
func searchLimit(n int) int {
	if n <= 0 {
		return defaultSearchLimit
	}
	return min(n, maxSearchLimit)
}

// termWords is the text of each term.
func termWords(terms []kwindex.Term) []string {
	words := make([]string, len(terms))
	for i, t := range terms {
		words[i] = t.Text
	}
	return words
}

// fromIndex calls ask until the keyword index c can answer it (ask reports
// ok): c caught up with its table, waiting for a load or a catch-up in
// the background, at most maxWaits times.
func fromIndex(ctx context.Context, c *kwindex.SeqCache, ask func() (ok bool, err error)) error {
	c.Warm()
	for range maxWaits {
		ok, err := ask()
		if err != nil || ok {
			return err
		}
		c.Wait()
		if err := c.CatchUp(ctx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "pgpalace: a keyword index does not catch up with its table"}
}

// keyword ranks the turns holding any of terms by BM25.
func (s *search) keyword(ctx context.Context, terms []kwindex.Term) error {
	s.Floor = 1
	hits, err := s.db.best(ctx, termWords(terms), kwindex.Filter{Namespace: s.ns, From: s.from, To: s.to}, s.Limit)
	if err != nil || len(hits) == 0 {
		return err
	}
	turns, err := s.db.turns(ctx, `SELECT `+turnColumns+` FROM palace_turns t WHERE t.seq = ANY($1)`, kwindex.Keys(hits))
	if err != nil {
		return err
	}
	bySeq := make(map[int64]engram.Turn, len(turns))
	for _, t := range turns {
		bySeq[t.Seq] = t
	}
	for _, h := range hits {
		// A turn deleted since the index read it is left out.
		if t, ok := bySeq[h.Key]; ok && s.Add(t, h.Score) {
			s.Floor = h.Score
		}
	}
	return nil
}

// window bounds the fallback stages by the seqs of the turns in the
// query's time range; held is false when the range holds no turn.
func (s *search) window(ctx context.Context) (held bool, err error) {
	s.lo, s.hi = 0, math.MaxInt64
	if s.from == 0 && s.to == 0 {
		return true, nil
	}
	var lo, hi *int64
	err = s.db.pool.QueryRow(ctx, `SELECT min(seq), max(seq) FROM palace_turns WHERE ts IS NOT NULL
		AND ($1 = '' OR namespace = $1) AND ($2::bigint = 0 OR ts >= $2) AND ($3::bigint = 0 OR ts < $3)`, s.ns, s.from, s.to).Scan(&lo, &hi)
	if err != nil || lo == nil {
		return false, err
	}
	s.lo, s.hi = *lo, *hi
	return true, nil
}

// fallbackFilter is the filter of the fallback stages: $2 the namespace,
// $3 and $4 the times, $5 and $6 the window's seqs.
const fallbackFilter = `($2 = '' OR t.namespace = $2) AND ($3::bigint = 0 OR t.ts >= $3) AND ($4::bigint = 0 OR t.ts < $4)
	AND t.seq BETWEEN $5 AND $6`

// substring adds the turns whose text, in NFKC and lower case, holds a
// term inside a longer word, one term at a time, newest first; the terms
// no turn holds as a word come first: they are what this stage is for
// (Kafka in KafkaConsumer).
func (s *search) substring(ctx context.Context, long []string) error {
	if s.Full() || len(long) == 0 {
		return nil
	}
	holds, err := s.db.known(ctx, long)
	if err != nil {
		return err
	}
	var unknown, known []string
	for i, t := range long {
		if holds[i] {
			known = append(known, t)
		} else {
			unknown = append(unknown, t)
		}
	}
	order := append(unknown, known...)
	if len(order) > maxSubstringTerms {
		order = order[:maxSubstringTerms]
	}
	for _, t := range order {
		if s.Full() {
			return nil
		}
		// The turns holding it, found first (the trigram index), then
		// the newest of them: the planner would rather read every turn
		// backwards by seq for a term few hold.
		turns, err := s.db.turns(ctx, `WITH m AS MATERIALIZED (SELECT seq FROM palace_turn_text WHERE folded LIKE $1)
			SELECT `+turnColumns+` FROM palace_turns t JOIN m USING (seq)
			WHERE `+fallbackFilter+` ORDER BY t.seq DESC LIMIT $7`,
			"%"+likeEscaper.Replace(t)+"%", s.ns, s.from, s.to, s.lo, s.hi, s.Limit)
		if err != nil {
			return err
		}
		for _, turn := range turns {
			s.AddExtra(turn)
		}
	}
	return nil
}

// likeEscaper quotes LIKE's wildcards and escape character in a term.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// maxSubstringTerms bounds the substring lookups of one query.
const maxSubstringTerms = 8

// short adds the turns whose content or speaker holds a one- or
// two-character Chinese or Japanese term anywhere, newest first (gse may
// have merged it into a longer word): a lookup of the characters and
// pairs each turn's grams hold.
func (s *search) short(ctx context.Context, short []string) error {
	if s.Full() || len(short) == 0 {
		return nil
	}
	turns, err := s.db.turns(ctx, `WITH m AS MATERIALIZED (SELECT seq FROM palace_turn_text WHERE grams && $1)
		SELECT `+turnColumns+` FROM palace_turns t JOIN m USING (seq)
		WHERE `+fallbackFilter+` ORDER BY t.seq DESC LIMIT $7`,
		short, s.ns, s.from, s.to, s.lo, s.hi, s.Limit)
	for _, t := range turns {
		s.AddExtra(t)
	}
	return err
}

// folded is a turn's text as the substring stage looks through it: NFKC,
// lower case (package palace's containsFolded).
// A NUL, which no term holds and text refuses, is left out.
func folded(content string) string {
	return strings.ReplaceAll(strings.ToLower(kwindex.NFKC(content)), "\x00", "")
}

// grams are a turn's Chinese and Japanese characters and pairs, of its
// content and speaker (package palace's turns_cjk).
func grams(content, speaker string) []string {
	return strings.Fields(kwindex.CJKGrams(kwindex.NFKC(content)) + " " + kwindex.CJKGrams(kwindex.NFKC(speaker)))
}

// nanosOrZero is t in Unix nanoseconds, 0 for the zero time (no bound).
func nanosOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
