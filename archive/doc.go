// Package archive is engram's L0 archive: an append-only log of turns in
// plain-text JSONL, the source of truth from which every index (the palace)
// is rebuilt. It implements engram.Archive.
//
// # Layout
//
// One file per UTC day of received_at, under the archive directory
// (<home>/archive):
//
//	LOCK                       flock held by the owning process; holds its pid
//	2026/05/2026-05-01.jsonl   one turn per line
//	quarantine/                torn lines cut off at Open, kept for inspection
//
// Directories are created 0700 and files 0600: turns are private. The
// archive clamps received_at so that it never goes back, even when the wall
// clock does; files in name order therefore hold increasing seqs, and
// reading them in that order is reading the log in seq order.
//
// # Line format
//
// Each line is a JSON object with the fields of engram.Turn in this order:
// id, seq, namespace, session, role, speaker (omitted when empty), content,
// ts, meta (omitted when empty), received_at, then "crc": the lowercase hex
// CRC-32C (Castagnoli) of every byte of the line before `,"crc":"`. Times
// are RFC 3339 with nanoseconds, in UTC. Lines read with cat, grep and jq:
//
//	{"id":"01JTD7W4Q8V3M6Y2K9N5R1X0ZB","seq":1,"namespace":"default","session":"s1","role":"user","content":"hi","ts":"2026-05-01T14:03:00Z","received_at":"2026-05-01T14:03:00.123456789Z","crc":"84e635ac"}
//
// EncodeLine and DecodeLine convert between a line and an engram.Turn.
//
// A forgotten turn's line is rewritten as a tombstone: only its id, seq and
// received_at, and when and why it was forgotten, with its own crc:
//
//	{"id":"01JTD7W4Q8V3M6Y2K9N5R1X0ZB","seq":1,"received_at":"2026-05-01T14:03:00.123456789Z","forgotten":{"at":"2026-05-03T09:00:00Z","reason":"asked"},"crc":"…"}
//
// Readers deliver tombstones in their place (engram.Turn.IsTombstone), so
// that every seq stays accounted for; a re-sent forgotten id is a
// duplicate unless it asks to be resurrected.
//
// # Rewrites
//
// Forget and Rewrite (redaction) change lines in place: the writer
// goroutine writes the day file again to <day>.jsonl.rewrite.tmp, fsyncs
// it, renames it over the day file and fsyncs the directory, between two
// group commits. A crash leaves the old file or the new one, whole; Open
// removes the temporary file. Backup waits for a rewrite in progress.
//
// # Durability
//
// A single writer goroutine takes every pending Append, writes the lines
// with one write and fsyncs the file once per batch (group commit), and
// only then answers the callers: an acknowledged turn is on stable storage.
// New files and directories are made durable by fsyncing their parent.
// A failed write is cut back off the file and reported (ENOSPACE when the
// disk is full); a failed fsync poisons the archive until it is reopened,
// because after one the kernel may have dropped the data while a retry
// reports success.
//
// Idempotency: every archived id is kept in memory with its seq. A turn
// whose id is already archived is not written again; Append reports it as
// Duplicate with the original seq. Clients that want exactly-once must send
// their own ids and re-send with the same ids after an error.
//
// # Recovery
//
// Open reads every file. A last line without its '\n' is what a crash in the
// middle of a write leaves; it was never acknowledged. Open copies it to
// quarantine/<YYYY-MM-DD>.<unix-nanos>.torn, fsyncs the copy, then cuts the
// day file back to its last complete line, and logs a warning. A complete
// line that does not decode (bad crc, not JSON, a missing field) is left in
// place, logged, counted in Stats.CorruptLines, reported by Verify and
// skipped by the readers: nothing is dropped without a trace.
//
// # Waiting for turns
//
// Notify returns a channel closed at the next commit, for all waiters at
// once. Take it before checking LastSeq or calling Stream, so that a commit
// in between is not missed.
//
// # Caveats
//
//   - The id map holds every archived id: about 100 bytes per turn
//     (a 26-byte ULID, the string and map overhead, the seq), so some
//     1 GB for ten million turns. Idempotency over all of history is what
//     it buys; a disk-backed index would be the next step if that is too much.
//   - Open reads and checks every line of every file, so opening a large
//     archive takes time in proportion to its size (roughly a second per
//     few hundred thousand turns).
//   - The tail cache holds Options.TailCache turns with their content and
//     meta; with large turns it can take much memory. Set it lower (or
//     negative, to turn it off) where memory is tight.
//   - A failed fsync makes every later Append fail with EUNAVAILABLE until
//     the archive is reopened. Turns of the failed batch may or may not be
//     in the file after that; clients that re-send with the same ids get
//     them exactly once.
//   - Readers see the turns committed when they start; a long Stream does
//     not follow new commits. Call it again after Notify.
//   - The LOCK is an flock: it is released when the process dies, and it is
//     not reliable on network file systems. Keep the archive on a local disk.
//   - ScanTime filters on TS, the client's time, which any day file may
//     hold; it skips only the files whose TS range misses the query.
package archive
