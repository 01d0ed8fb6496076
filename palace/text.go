package palace

import (
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The text the keyword indexes hold (NFKC, Chinese and Japanese cut into
// words) and the words of a query they look for are kwindex's
// (IndexText, QueryTerms): FTS5's tables and the in-memory indexes see
// the same text. What is the palace's here is its SQL: the FTS5 query of
// some terms.

// term is one word of a query.
type term = kwindex.Term

// matchExpr returns an FTS5 query that matches any of the terms, none of
// them read as FTS5 syntax (sqlrow.Match). In practice terms hold only
// letters and digits; the quoting is the guard.
func matchExpr(terms []term) string { return sqlrow.Match(termWords(terms)...) }
