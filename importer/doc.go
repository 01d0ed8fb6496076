// Package importer reads other tools' conversation logs and turns them into
// engram turns: the ChatGPT data export (ReadChatGPT) and JSON Lines of any
// shape through a field mapping (JSONL).
//
// Importers are idempotent: every turn gets a stable id derived from the
// source's own ids (or, where the source has none, from its position and
// content), so importing the same file again adds nothing; the archive
// answers the repeated ids as duplicates.
//
// Importers produce engram.TurnInput values, not engram.Turns: the caller
// validates them with TurnInput.Turn against its limits, the way a line of
// `engram ingest` is validated.
//
// # Caveats
//
// ChatGPT: only the current branch of each conversation is imported (from
// current_node up to the root), so answers that were regenerated and
// messages that were edited away are left out. Only "text" and
// "multimodal_text" messages are imported; their non-text parts (images,
// files) become a placeholder such as "[image]". Other content types (code
// sent to a tool, tool output such as execution_output, browsing results,
// reasoning) are skipped and counted by reason, as are system messages,
// messages hidden from the conversation and empty ones.
//
// JSONL: without an id mapping a turn's id hashes the file's base name, the
// line number and the content, so a file that is edited above a line, or
// renamed, imports that line again under a new id.
package importer
