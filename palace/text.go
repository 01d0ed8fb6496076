package palace

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/engram-dev/engram/internal/kwindex"
)

// The text the keyword indexes hold (NFKC, Chinese and Japanese cut into
// words) and the words of a query they look for are kwindex's
// (IndexText, QueryTerms): FTS5's tables and the in-memory indexes see
// the same text. What is the palace's here is its SQL: the function that
// gives SQL the same normalisation, and the FTS5 query of some terms.

// term is one word of a query.
type term = kwindex.Term

// nfkcFunc is the SQL function engram_nfkc(text): text in NFKC, as the
// palace indexes it; with which migration 0015 fills the trigram index
// again from the turns.
func nfkcFunc(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("engram_nfkc: want text, got %T", args[0])
	}
	return kwindex.NFKC(s), nil
}

func init() {
	if err := sqlite.RegisterDeterministicScalarFunction("engram_nfkc", 1, nfkcFunc); err != nil {
		panic(err) // registered twice: a programming error
	}
}

// matchExpr returns an FTS5 query that matches any of the terms. Each term is
// a quoted string, so nothing a user types is read as FTS5 syntax: quotes are
// doubled, and AND, OR, NOT, NEAR, *, ^, :, -, ( and ) inside quotes are text.
// In practice terms hold only letters and digits; the quoting is the guard.
func matchExpr(terms []term) string {
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(t.Text, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// PreloadCJK loads the Chinese/Japanese word segmenter now rather than at
// the first CJK turn or query (kwindex.PreloadCJK).
func PreloadCJK() (time.Duration, error) { return kwindex.PreloadCJK() }
