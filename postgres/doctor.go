package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
)

// DoctorTimeout bounds the doctor's connection to the database and its
// reads: a database that does not answer is reported, never waited for.
const DoctorTimeout = 10 * time.Second

// Names of the doctor's checks of the database.
const (
	CheckReach  = "postgres"
	CheckSchema = "postgres-schema"
	CheckLag    = "postgres-lag"
	// CheckShared reports the work the servers share: which server last
	// verified the archive, and that no shared vector is of a forgotten
	// turn.
	CheckShared = "postgres-shared"
)

// Status is what the doctor reads of the database: the archive's schema
// and the ends of the archive, of the rewrite journal and of the
// corrections journal.
type Status struct {
	Where       string // host:port/database, never the password
	Server      string // PostgreSQL's version
	Version     int    // the archive's schema version in schema_migrations; 0 when none was recorded
	Known       int    // the version this engram migrates the schema to
	LastSeq     int64  // the archive's last seq; 0 when it holds no turn
	LastRewrite int64  // the rewrite journal's last entry; 0 when it has none
	// LastCorrection is the corrections journal's last entry; 0 when it
	// has none.
	LastCorrection int64
	// Jobs are the shared jobs' records (team_jobs), by name.
	Jobs []SharedJobState
	// ForgottenVectors counts the shared turn vectors whose turn is a
	// tombstone: a forget deletes them, so any is a fault.
	ForgottenVectors int64
}

// SharedJobState is a shared job's record in team_jobs.
type SharedJobState struct {
	Name, Server string
	LastRun      time.Time
	LastSuccess  time.Time // zero when it never succeeded
	LastError    string
}

// ReadStatus connects to the database at url, reads its Status and
// disconnects. It writes nothing and migrates nothing, so it reads a
// database a newer engram migrated, or one engram never opened, as it
// is. The connection and the reads end with ctx, and after DoctorTimeout
// at the latest.
//
// Errors: EINVALID for an empty or malformed url; EUNAVAILABLE, naming
// host:port/database (never the password), when the database cannot be
// reached or read.
func ReadStatus(ctx context.Context, url string) (Status, error) {
	if url == "" {
		return Status{}, engram.Errorf(engram.EINVALID, "no PostgreSQL URL: set %s to postgres://user:password@host:port/database", EnvURL)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx masks the password in the URL it quotes.
		return Status{}, &engram.Error{Code: engram.EINVALID, Message: "the PostgreSQL URL does not parse", Err: err}
	}
	st := Status{Where: Where(url), Known: len(migrations)}
	ctx, cancel := context.WithTimeout(ctx, DoctorTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return st, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot reach PostgreSQL at " + st.Where, Err: err}
	}
	defer conn.Close(context.Background())
	if err := readStatus(ctx, conn, &st); err != nil {
		return st, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot read PostgreSQL at " + st.Where, Err: err}
	}
	return st, nil
}

// readStatus fills st from conn, reading only the tables that exist: a
// database engram never opened has none.
func readStatus(ctx context.Context, conn *pgx.Conn, st *Status) error {
	var migrated, turns, rewrites, corrections, jobs, vectors bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version'), to_regclass('schema_migrations') IS NOT NULL,
		to_regclass('archive_turns') IS NOT NULL, to_regclass('archive_rewrites') IS NOT NULL,
		to_regclass('archive_corrections') IS NOT NULL, to_regclass('team_jobs') IS NOT NULL,
		to_regclass('archive_vectors') IS NOT NULL`).
		Scan(&st.Server, &migrated, &turns, &rewrites, &corrections, &jobs, &vectors); err != nil {
		return err
	}
	if jobs {
		rows, err := conn.Query(ctx, `SELECT name, server, last_run, last_success, last_error FROM team_jobs ORDER BY name`)
		if err != nil {
			return err
		}
		var (
			j       SharedJobState
			success *time.Time // NULL until a run succeeded
		)
		if _, err := pgx.ForEachRow(rows, []any{&j.Name, &j.Server, &j.LastRun, &success, &j.LastError}, func() error {
			j.LastSuccess = time.Time{}
			if success != nil {
				j.LastSuccess = *success
			}
			st.Jobs = append(st.Jobs, j)
			return nil
		}); err != nil {
			return err
		}
	}
	if vectors && turns {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM archive_turns t JOIN archive_vectors v ON v.seq = t.seq WHERE t.ts IS NULL`).
			Scan(&st.ForgottenVectors); err != nil {
			return err
		}
	}
	if migrated {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations WHERE component = $1`,
			component).Scan(&st.Version); err != nil {
			return err
		}
	}
	if turns {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM archive_turns`).Scan(&st.LastSeq); err != nil {
			return err
		}
	}
	if rewrites {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(n), 0) FROM archive_rewrites`).Scan(&st.LastRewrite); err != nil {
			return err
		}
	}
	if corrections {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(n), 0) FROM archive_corrections`).Scan(&st.LastCorrection); err != nil {
			return err
		}
	}
	return nil
}

// Applied is what one server's palace has applied of the shared archive:
// its watermarks, read before the database's Status, so that turns
// committed in between can only make it look further behind.
type Applied struct {
	IndexedSeq int64 // the last archive seq the palace indexed
	Rewrites   int64 // the last rewrite journal entry the palace applied
	// Corrections is the last corrections journal entry the palace
	// applied.
	Corrections int64
	// Stopped says no server has the palace open: it catches up when one
	// starts, not on its own.
	Stopped bool
	// SchemaFound is the schema version this server's archive found when
	// it opened the database (Archive.SchemaFound); 0 when none did.
	SchemaFound int
}

// Doctor checks the database at url for the server whose palace applied
// a: that the database answers (CheckReach), the archive's schema against
// the version this engram knows (CheckSchema) and how far the palace is
// behind the archive and its rewrite and corrections journals (CheckLag,
// a warning). It
// reports usable false when the archive cannot be used: the database does
// not answer, or a newer engram migrated it. Each server reports its own
// lag: the other servers' palaces are theirs.
func Doctor(ctx context.Context, url string, a Applied) (checks []engram.DoctorCheck, usable bool) {
	st, err := ReadStatus(ctx, url)
	if err != nil {
		fix := "set " + EnvURL + " to postgres://user:password@host:port/database"
		if engram.ErrorCode(err) == engram.EUNAVAILABLE {
			fix = "start PostgreSQL at " + st.Where + ", or correct " + EnvURL
		}
		return []engram.DoctorCheck{fail(CheckReach, engram.ErrorText(err)+"; this server can neither archive nor recall", fix)}, false
	}
	checks = append(checks, check(CheckReach, engram.CheckOK, fmt.Sprintf("PostgreSQL %s at %s answers", st.Server, st.Where), ""))
	schema, usable := st.schemaCheck(a)
	checks = append(checks, schema)
	if usable {
		checks = append(checks, st.lagCheck(a), st.sharedCheck())
	}
	return checks, usable
}

// sharedCheck reports the shared work: a shared vector of a forgotten
// turn fails (a forget deletes them); a shared job whose last run failed
// warns.
func (st Status) sharedCheck() engram.DoctorCheck {
	if st.ForgottenVectors > 0 {
		return fail(CheckShared, fmt.Sprintf("%d shared turn %s of forgotten turns %s in archive_vectors, which a forget deletes: the database was changed behind engram's back",
			st.ForgottenVectors, plural(st.ForgottenVectors, "vector", "vectors"), plural(st.ForgottenVectors, "is", "are")),
			"DELETE FROM archive_vectors v USING archive_turns t WHERE t.seq = v.seq AND t.ts IS NULL")
	}
	if len(st.Jobs) == 0 {
		return check(CheckShared, engram.CheckOK, "no shared job has run yet; no shared vector is of a forgotten turn", "")
	}
	var runs []string
	for _, j := range st.Jobs {
		at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
		switch {
		case j.LastError != "":
			return check(CheckShared, engram.CheckWarn, fmt.Sprintf("the last run of the shared job %s, on %s at %s, failed: %s",
				j.Name, j.Server, at(j.LastRun), j.LastError), "see that server's log and engram doctor; then engram jobs run "+j.Name)
		case j.LastSuccess.IsZero():
			runs = append(runs, fmt.Sprintf("%s running on %s since %s", j.Name, j.Server, at(j.LastRun)))
		default:
			runs = append(runs, fmt.Sprintf("%s last run by %s at %s", j.Name, j.Server, at(j.LastSuccess)))
		}
	}
	return check(CheckShared, engram.CheckOK, "shared jobs: "+strings.Join(runs, "; ")+"; no shared vector is of a forgotten turn", "")
}

// schemaCheck compares the archive's schema with the version this engram
// knows: an older one is migrated when a server opens the archive; a newer
// one, which a newer engram migrated, is refused.
func (st Status) schemaCheck(a Applied) (engram.DoctorCheck, bool) {
	switch {
	case st.Version > st.Known:
		return fail(CheckSchema, fmt.Sprintf("the archive's schema is at version %d, this engram knows %d: a newer engram migrated it, and this one refuses to open it",
			st.Version, st.Known), "upgrade engram on this server to the version the other servers run"), false
	case st.Version == 0:
		return check(CheckSchema, engram.CheckWarn, fmt.Sprintf("%s holds no engram archive yet: engram creates it (schema version %d) when it opens the archive", st.Where, st.Known),
			"engram serve"), true
	case st.Version < st.Known:
		return check(CheckSchema, engram.CheckWarn, fmt.Sprintf("the archive's schema is at version %d, this engram knows %d: engram migrates it when it opens the archive", st.Version, st.Known),
			"restart engram serve (it migrates the schema as it starts)"), true
	case a.SchemaFound > 0 && a.SchemaFound < st.Version:
		return check(CheckSchema, engram.CheckOK, fmt.Sprintf("version %d, as this engram knows; migrated from version %d when this server opened the archive", st.Version, a.SchemaFound), ""), true
	}
	return check(CheckSchema, engram.CheckOK, fmt.Sprintf("version %d, as this engram knows", st.Version), ""), true
}

// lagCheck compares the palace's watermarks with the ends of the archive
// and of its rewrite and corrections journals. A corrections watermark
// past the journal's last entry is no fault: a forget deletes entries,
// the last ones too.
func (st Status) lagCheck(a Applied) engram.DoctorCheck {
	if a.IndexedSeq > st.LastSeq || a.Rewrites > st.LastRewrite {
		return fail(CheckLag, fmt.Sprintf("this server's palace is indexed through seq %d and rewrite %d, but the archive at %s ends at seq %d and rewrite %d: it belongs to another database",
			a.IndexedSeq, a.Rewrites, st.Where, st.LastSeq, st.LastRewrite), "engram rebuild")
	}
	turns, rewrites, corrections := st.LastSeq-a.IndexedSeq, st.LastRewrite-a.Rewrites, st.LastCorrection > a.Corrections
	if turns == 0 && rewrites == 0 && !corrections {
		return check(CheckLag, engram.CheckOK, fmt.Sprintf("this server's palace is current: indexed through seq %d, rewrite journal applied through entry %d, corrections journal through entry %d",
			a.IndexedSeq, a.Rewrites, a.Corrections), "")
	}
	var behind []string
	if turns > 0 {
		behind = append(behind, fmt.Sprintf("%d %s behind the archive (indexed through seq %d of %d)",
			turns, plural(turns, "turn", "turns"), a.IndexedSeq, st.LastSeq))
	}
	if rewrites > 0 {
		behind = append(behind, fmt.Sprintf("%d %s behind its rewrite journal (applied through entry %d of %d)",
			rewrites, plural(rewrites, "forget or redaction", "forgets and redactions"), a.Rewrites, st.LastRewrite))
	}
	if corrections {
		behind = append(behind, fmt.Sprintf("behind its corrections journal (applied through entry %d of %d)", a.Corrections, st.LastCorrection))
	}
	if a.Stopped {
		return check(CheckLag, engram.CheckWarn, "this server's palace was "+strings.Join(behind, " and ")+
			" when the doctor opened it: no server had it open", "engram serve (it catches up as it starts)")
	}
	return check(CheckLag, engram.CheckWarn, "this server's palace is "+strings.Join(behind, " and ")+
		"; the server catches up on its own, and its log says why when it cannot", "")
}

func check(name, status, finding, fix string) engram.DoctorCheck {
	return engram.DoctorCheck{Name: name, Status: status, Finding: finding, Fix: fix}
}

func fail(name, finding, fix string) engram.DoctorCheck {
	return check(name, engram.CheckFail, finding, fix)
}

// plural returns one when n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
