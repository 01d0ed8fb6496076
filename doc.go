// Package engram holds the domain types and the small interfaces that every
// other package of engram builds on: a Turn as it is archived, the errors a
// caller can branch on, recall results and their sources, and the store
// interfaces (Archive, TurnIndex) behind which the embedded defaults live.
//
// Adapter packages (archive, palace, recall, pipeline, httpapi, ...) import
// this package and never each other; package engine opens a home and wires
// them together, and cmd/engram is the command line on top. The interfaces
// and reports of the operations (backup, doctor, reindex, vault
// administration) and the validation every transport shares (validate.go)
// live here too, so that HTTP, the CLI and MCP check a request the same way.
//
// # The path of a turn
//
// A client POSTs a turn; httpapi validates it (TurnInput.Turn), the archive
// appends it to the day's JSONL file and fsyncs (group commit), and only then
// the client gets 201. The pipeline indexer copies every archived turn into
// the palace (SQLite with FTS5), from where recall finds it. The archive is
// the source of truth: every palace table can be rebuilt from it.
package engram
