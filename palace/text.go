package palace

import (
	"strings"

	"github.com/engram-dev/engram/internal/kwindex"
)

// The text the keyword indexes hold (NFKC, Chinese and Japanese cut into
// words) and the words of a query they look for are kwindex's
// (IndexText, QueryTerms): FTS5's tables and the in-memory indexes see
// the same text. What is the palace's here is its SQL: the FTS5 query of
// some terms.

// term is one word of a query.
type term = kwindex.Term

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
