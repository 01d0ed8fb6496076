// Package claudecode reads Claude Code session transcripts and maps them to
// engram turns.
//
// Claude Code writes one JSONL file per session under
// ~/.claude/projects/<encoded-cwd>/<session-id>.jsonl. Each line is an
// entry: user and assistant entries carry a message whose content is a
// string or a list of blocks (text, tool_use, tool_result, thinking); other
// entries (summary, system, file-history-snapshot, ...) carry no turn.
//
// # Mapping
//
// One user or assistant entry becomes at most one turn, with the id "cc-" +
// the entry's uuid, so that ingesting a transcript twice archives nothing
// new (the archive is idempotent by id). Text blocks are the content;
// tool_use blocks become a short line naming the tool and its key input
// ("[tool Bash: go test ./...]"); tool_result blocks are cut to their first
// ResultChars characters ("[tool result: ...]"); thinking blocks are left
// out. A user entry that holds only tool results is archived with role tool
// and no speaker, so that it does not count as something the user said.
// The entry's uuid, parent, cwd, session and sidechain flag go into the
// turn's meta under "claude_code". Summary entries are skipped: they name
// no session and restate what the turns already hold.
//
// # Caveats
//
// A last line without its newline is taken to be still being written and is
// never read; a transcript whose final line lacks a newline therefore keeps
// that line out until Claude Code appends another. Broken lines (invalid
// JSON) are skipped and counted, since they will never parse. Offsets are
// merged into the offsets file on save; two processes saving at the same
// moment may lose one's update, which costs only a re-read of lines whose
// turns are already archived.
package claudecode
