// Package kwindex holds full-text tables of the palace in memory, and
// ranks them exactly as SQLite's FTS5 ranks the tables themselves. It
// also owns the keyword text both see: what a text becomes before it is
// cut into tokens (IndexText: NFKC, Chinese and Japanese runs cut into
// words by gse, so that unicode61 sees one token a word), and which words
// of a query are searched (QueryTerms).
//
// FTS5 ranks a query by computing bm25() for every row that holds one of
// its terms, reading each row's size from a b-tree on the way, so a query
// of common words over a large palace (tens of thousands of matching
// rows) costs a great deal of CPU (docs/benchmarks.md). An Index holds the
// same tokens (Tokens: unicode61 and the Porter stemmer as FTS5 has them)
// as posting lists, with the statistics FTS5 keeps (row count, total
// size, each term's document frequency), and scores them with bm25()'s
// formula operation for operation, so that it returns the ranking and the
// scores the table would. One Index type serves every table; the tables
// differ in the weight of a second column (the turns' speaker) and in the
// filters their searches use (Filter).
//
// The tables stay the store, and an index is a cache of one, kept by one
// of two protocols. A GenCache (the turns') is changed by each write of
// its process after the commit, in the order of a generation the writes
// count in the store, and knows when another process wrote. A SeqCache
// (the units', the scenes', the memories') catches up when searched, from
// the change numbers its rows take and a count of deletions (Source).
// Either one tells a search it cannot answer (ok false) rather than answer
// from a state older than the store's; the search then goes to FTS5.
//
// The package knows no SQL: the palace reads the rows and hands them over
// (palace/keyword.go), and its tests prove the rankings equal FTS5's on
// the real SQLite (TestKeywordIndex_SameAsFTS, TestFTSTokens).
//
// # Caveats
//
// A query whose word is more than one token (a phrase, which needs
// positions) is not answered: QueryTokens reports it, and FTS5 ranks it.
// Only a first column weighted 1 and a second of any weight are modelled,
// which is every table the palace ranks from memory.
package kwindex
