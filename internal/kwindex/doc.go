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
//
// The gse dictionary (simplified Chinese, 352,000 words) loads on the
// first Chinese or Japanese text, indexed or searched, and its heap is held
// for the life of the process; PreloadCJK moves the wait to start-up. The
// Japanese dictionary is not loaded (more than three times as large, and
// its weights make gse cut even Chinese into single characters); Japanese
// kanji words come from the Chinese dictionary and gse's HMM, so Japanese
// segmentation is approximate (打ち合わせ is 打, ち, 合, わせ). The
// palace's substring and CJK fallbacks keep recall up where the
// segmentation is off, at the price of ranking.
//
// # Word segmentation
//
// Text is NFKC-normalised first (ＤＢ２ is DB2, ﬁle is file, ｶﾀｶﾅ is カタカナ).
// Latin, digits and other space-separated scripts split at every character
// that is not a letter or digit: "port:30001/api" is port, 30001, api.
// Chinese and Japanese split by script: a run of katakana is one word
// (データベース), a run of hiragana is one word (particles and endings), and
// a run of hanzi/kanji is cut into words by github.com/go-ego/gse:
// 我们决定使用端口 is 我们 决定 使用 端口, and 東京で日本語の会議を開きました is
// 東京 で 日本 語 の 会議 を 開 きました.
// Turns are cut in gse's search mode, which adds the words inside a long word
// (数据库 also gives 数据 and 据库); queries in its accurate mode.
package kwindex
