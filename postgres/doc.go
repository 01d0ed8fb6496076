// Package postgres keeps engram's L0 archive in a PostgreSQL database, for
// several engram servers that share one memory. It implements
// engram.Archive like the file archive (package archive), and writes the
// same records.
//
// # Table
//
// archive_turns holds one row per turn: seq (the global sequence, the
// primary key), id (unique), ts and received_at (timestamptz), crc, and
// line, the turn's line exactly as the file archive writes it to its JSONL
// files (archive.EncodeLine), without the '\n'. The crc is the line's own,
// a CRC-32C of the line's bytes before its crc field; every read checks it
// and that the row's seq, id and crc are the line's, and skips, with a
// warning, a row that fails (Stats.CorruptRows). Exporting the archive is
// writing the lines in seq order.
//
// The schema is migrated by Open, in one transaction under an advisory
// lock, and recorded in schema_migrations under the component "archive";
// Open refuses a database a newer engram migrated (ErrSchemaTooNew).
//
// # Writes
//
// Append checks turns as the file archive does (archive.Prepare), then
// one writer goroutine takes every pending call and writes them in one
// transaction (group commit), answered only after PostgreSQL confirmed the
// COMMIT. Each transaction takes a transaction-scoped advisory lock first
// and numbers its turns after the table's highest seq, so appends of every
// server commit one after the other, in seq order: a reader following the
// table by seq never passes a row committed after it. Duplicate ids (in
// the call, or archived before by any server) are reported as
// engram.Appended.Duplicate and not written again.
//
// # Forget, redaction, following other servers
//
// Forget and Rewrite replace a row's line (and crc) in one transaction
// under the append lock, as the file archive rewrites a day file: a
// forgotten turn's row holds its tombstone line, with ts NULL; a redacted
// one, its redacted line. A forgotten id re-sent is a duplicate unless the
// turn asks to be resurrected, which archives it again under a new seq
// (ids are unique among live rows). Known, Forgotten and Tombstones ask
// the database, so they take a ctx and return an error, unlike the file
// archive's; Verify checks every row. Each append transaction notifies its
// last seq (LISTEN/NOTIFY, see Notify), so LastSeq and Notify follow the
// commits of every server without a poll.
//
// # Corrections
//
// Corrections is the corrections journal kept in archive_corrections, for
// a team's servers in place of each home's corrections.jsonl: one JSON
// line per correction, as the file journal writes it. Append takes an
// advisory lock of its own and a number from a sequence past every row,
// so entries are numbered in commit order and a number a Rewrite deleted
// is never given again: a server that keeps the last number it applied
// (Since) misses none. Each Append notifies the channel
// engram_corrections (Changed). Rewrite edits or deletes entries in one
// transaction, as a forget or a redaction needs, and notifies too, so
// that the other servers drop what it deleted from their palaces.
//
// # Doctor
//
// Doctor gives `engram doctor` the checks of the database: that it
// answers (a connection of its own, bounded by DoctorTimeout), its schema
// against the version this binary knows (read by ReadStatus, which
// migrates nothing), and how far one server's palace is behind the
// archive, the rewrite journal and the corrections journal. It sees only the palace of the server
// that asks: each server reports its own lag.
//
// # Connection
//
// The caller passes the connection URL, which it reads from the
// environment variable ENGRAM_POSTGRES_URL (EnvURL), so that the password
// is never in a config file. Open does not log it, and errors quote it
// with the password masked.
//
// # Caveats
//
//   - This is a preview: the archive and the corrections journal. The
//     palace's tables come later; RewriteDamaged is the file archive's
//     only.
//   - One append transaction runs at a time across every server: appends
//     are as fast as one server's group commit, bounded by the database's
//     commit time.
//   - LastSeq does not ask the database: it knows this Archive's appends,
//     the notifications of other servers' commits and what its reads (and
//     Refresh) saw. A forget or a redaction wakes no one (as in the file
//     archive): other servers see it at their next read.
//   - Acknowledged means committed as the server is configured: keep
//     synchronous_commit on (the default) and fsync on.
//   - received_at is kept to the microsecond, the precision of
//     timestamptz; ts keeps its nanoseconds in the line.
//   - A server whose connection is lost while it holds the append lock
//     holds up every append until PostgreSQL notices (TCP keepalives;
//     client_connection_check_interval).
package postgres
