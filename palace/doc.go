// Package palace is engram's SQLite store: a derived copy of the L0 archive
// with the indexes recall searches. Its first layer is the table of turns
// with keyword search; *DB implements engram.TurnIndex. Beside it lie the
// vectors of each embedding model: DB.Vectors returns a *VectorStore, the
// rows that package vecindex's in-process index loads and writes through
// (the two share package internal/vecrow, and neither imports the other).
//
// Everything in the palace can be rebuilt from the archive. The pipeline's
// indexer copies archived turns in with PutTurns and resumes after a crash
// from IndexedSeq, the highest sequence number stored.
//
// # Storage
//
// One SQLite file (mode 0600) through modernc.org/sqlite, in WAL mode with
// synchronous=NORMAL: a power failure may lose the last commits but never
// corrupts the file, and what it loses the indexer re-derives from the
// fsynced archive, catching up from IndexedSeq. The schema is the
// numbered migrations of package migrations, applied at Open, each in its own
// transaction and recorded in schema_migrations. One writer connection takes
// every write (Update); a pool of read-only connections serves reads (View)
// beside it.
//
// Turns live in table turns keyed by seq; ts and received_at are Unix
// nanoseconds, meta the raw JSON, returned byte for byte. The watermark is
// row indexed_seq of palace_meta. Three FTS5 tables index the turns, all
// contentless (the text lives in turns) with rowid = seq:
//
//   - turns_fts (porter unicode61 remove_diacritics 2) over the content and the
//     speaker after NFKC normalisation, with Chinese and Japanese text split
//     into words (package internal/kwindex says how). Its rank is BM25 with a text match weighted 1.0 and a
//     speaker match 0.4.
//   - turns_trigram (trigram, detail=none) over the NFKC content, for
//     substrings: a lookup matches every trigram of a term and keeps the
//     turns whose text holds the term. A turn's row is written in a
//     transaction after the one that stores it, with its session unit
//     (IndexSecondary); trigram_seq in palace_meta is its watermark, and
//     units_seq the session units'. The session parts whose text a step
//     extended are listed in unit_stale until it is indexed again.
//   - turns_cjk (unicode61, detail=none): every Chinese and Japanese character
//     and pair of adjacent characters, for one- and two-character terms.
//
// # Search
//
// SearchTurns takes a natural-language query, cuts it into terms as
// internal/kwindex does,
// lower-cases them and drops English stopwords, common Chinese and Japanese
// particles and pronouns, and, when the query has other words, its hiragana
// runs. A query with nothing left finds nothing, without error. Each term is
// quoted and the terms ORed, so user text is never FTS5 syntax, and the
// turns are ranked by BM25 (porter stemming: "decided" finds "decide" and
// "deciding"). When that gives fewer hits than asked for, two fallbacks add
// more, each hit scored below the ones before it:
//
//   - terms of three or more characters are looked up as substrings in the
//     trigram index, case-insensitively ("Kafka" finds "KafkaConsumer", "7Rz9k"
//     finds "token=xq7Rz9kLm"), terms that are no word of the keyword index
//     first, at most 8 terms, newest turns first;
//   - Chinese and Japanese terms of one or two characters are looked up in
//     turns_cjk, which is LIKE '%term%' over the CJK text without a scan:
//     gse may have indexed them inside a longer word (会議 inside 会議室) and
//     trigrams need three characters. Newest turns first.
//
// Latin and digit terms of one or two characters (UI, DB, PR, 42) match
// whole tokens only, through the keyword index.
//
// Scores are positive and finite, higher is better. Keyword hits score
// -bm25; fallback hits score the lowest keyword score divided by 2, 3, 4, ...
// in the order found.
//
// # Vectors
//
// Table vectors holds every vector of every embedding model, keyed by
// (model, id), encoded (see below), with kind, namespace and time (Unix nanoseconds, NULL for a zero time). Table
// vector_models names the models with their dimension and state: at most
// one is active, the one recall searches; DB.Vectors creates a model as
// building; ActivateModel makes one active and retires the one before in one
// transaction; a retired model keeps its vectors until DropModel. So opening
// with another embedder never bricks the store (its model is simply another
// row), and a re-embed fills a building model in batches and then switches
// atomically. A model's dimension is fixed: DB.Vectors with another returns
// ECONFLICT naming both, and a vector of another dimension is EINVALID.
//
// Each model keeps two watermarks. embedded_seq is the archive seq through
// which the pipeline has embedded every turn: PutTurnVectors writes vectors
// and advances it in one transaction, and Watermark reads it. Every write of
// a vector also gives it the model's next change number (vectors.seq), and
// synced_seq records how far an external index (ChromaDB) has been fed:
// VectorsSince(SyncedSeq) returns what it missed, and SQLite stays the
// source to rebuild it from, or to re-embed from.
//
// The in-process index of a model (vecindex.Index) loads the model's rows
// into memory and attaches itself to the VectorStore as its follower:
// every write committed after, by any writer (the turn pipeline, the layer
// jobs, a vault document's transaction, a delete), is applied to it under
// the store's writer lock, in commit order. A process that only writes
// vectors never loads them.
//
// On disk a vector is the int8 codes of its unit vector and their scale,
// as vecrow.Encode makes them (516 bytes at 512 dimensions); the length
// it was written with is not kept. Migrations 0012 and 0016 converted the
// float32, then the half-precision vectors of older palaces in place, and
// Open reclaims the pages a migration freed (VACUUM).
//
// # Caveats
//
//   - Deletes are not journaled for external indexes: VectorsSince never
//     returns a deleted vector, so an external index that missed a delete
//     keeps the vector until it is rebuilt.
//   - Vector times are stored as int64 nanoseconds: a vector dated before
//     1677-09-21 or after 2262-04-11 is refused (a little wider than the
//     years engram.MinYear to engram.MaxYear that the API accepts).
//   - Porter stems English only, and not always alike: "decision" and
//     "decided" stem to decis and decid, and do not find each other.
//   - Fallback hits are ordered newest first, not by relevance: a common term
//     with many substring matches can fill the list before a rarer one.
//   - The trigram index takes about three times the size of the text.
//   - Times are stored as int64 nanoseconds: PutTurns refuses a turn dated
//     before 1677-09-21 or after 2262-04-11.
//   - Scores compare the hits of one query, not of two.
package palace
