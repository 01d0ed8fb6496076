// Package engram holds the domain types and the small interfaces that every
// other package of engram builds on: a Turn as it is archived, the errors a
// caller can branch on, recall results and their sources, and the store
// interfaces (Archive, TurnIndex) behind which the embedded defaults live.
//
// Adapter packages (archive, palace, recall, pipeline, httpapi) import this
// package and never each other's internals; cmd/engram wires them together.
//
// # The path of a turn
//
// A client POSTs a turn; httpapi validates it (TurnInput.Turn), the archive
// appends it to the day's JSONL file and fsyncs (group commit), and only then
// the client gets 201. The pipeline indexer copies every archived turn into
// the palace (SQLite with FTS5), from where recall finds it. The archive is
// the source of truth: every palace table can be rebuilt from it.
package engram
