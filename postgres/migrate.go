package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// ErrSchemaTooNew means a newer engram migrated the database: this binary
// does not know its schema and refuses to write to it.
var ErrSchemaTooNew = errors.New("postgres: the database's schema is newer than this binary")

// component is the archive's name in schema_migrations. The table is
// shared: each part of engram kept in the database (the archive now, the
// palace later) numbers its own migrations under its own name.
const component = "archive"

// Advisory lock keys: 64-bit numbers in one space shared by every client
// of the database. These read "engram" in ASCII, then a number.
const (
	migrateLockKey int64 = 0x656e6772616d_01
	appendLockKey  int64 = 0x656e6772616d_02
	// correctionsLockKey orders the writes of the corrections journal
	// (Corrections): its numbers follow the commit order.
	correctionsLockKey int64 = 0x656e6772616d_03
	// vectorsLockKey keeps a rewrite and a store of turn vectors apart
	// (see PutTurnVectors): stores hold it shared, rewrites exclusively.
	vectorsLockKey int64 = 0x656e6772616d_04
)

// migrations are the archive's schema steps, version i+1 at index i.
// Never edit one that shipped; add a new one.
var migrations = []string{
	// 1: the archive. line is the file archive's JSONL line of the turn,
	// without its '\n', crc field included: export writes it as is, and
	// every read checks it. bytea, not text, so that the bytes the crc
	// covers are the bytes stored whatever the database's encoding. seq,
	// id, crc and ts repeat what the line says, for the keys and indexes;
	// readers check that they agree with it. ts is the turn's time to the
	// microsecond (the line has it to the nanosecond), for ScanTime;
	// received_at is to the microsecond in both, since the archive
	// stamps it so.
	`CREATE TABLE archive_turns (
		seq         bigint PRIMARY KEY CHECK (seq > 0),
		id          text NOT NULL UNIQUE,
		ts          timestamptz NOT NULL,
		received_at timestamptz NOT NULL,
		crc         bigint NOT NULL,
		line        bytea NOT NULL
	);
	CREATE INDEX archive_turns_ts ON archive_turns (ts);
	COMMENT ON TABLE archive_turns IS 'engram L0 archive: one JSONL line per turn, append-only';`,

	// 2: forget, redaction and the corrections journal. A forgotten
	// turn's line is its tombstone, which has no time: ts is NULL for
	// tombstones, and only for them. A forgotten id may be archived again
	// (engram.Turn.Resurrect) under a new seq, so ids are unique among
	// live rows only. redacted says the line holds a redacted turn, for
	// Stats (filled for existing rows by backfillRedacted).
	// archive_corrections holds the home's corrections journal
	// (corrections.jsonl), line n (from 1) without its '\n', as engram
	// migrate copies it.
	`ALTER TABLE archive_turns ALTER COLUMN ts DROP NOT NULL;
	ALTER TABLE archive_turns DROP CONSTRAINT archive_turns_id_key;
	CREATE UNIQUE INDEX archive_turns_live_id ON archive_turns (id) WHERE ts IS NOT NULL;
	CREATE INDEX archive_turns_id_seq ON archive_turns (id, seq);
	ALTER TABLE archive_turns ADD COLUMN redacted boolean NOT NULL DEFAULT false;
	CREATE TABLE archive_corrections (
		n    bigint PRIMARY KEY CHECK (n > 0),
		line bytea NOT NULL
	);
	COMMENT ON TABLE archive_corrections IS 'engram corrections journal: one JSON line per correction';`,

	// 3: the rewrite journal: one row per Forget or Redact transaction
	// that changed rows, written in it, so that every server sharing the
	// archive brings its palace up to the others' forgets and redactions
	// by reading the entries after the last it applied. n follows the
	// commit order: the transactions that write it hold the append lock.
	// ids and seqs are the turns changed; redaction (a JSON document,
	// bytea since a span may hold any character) is what a redaction
	// replaced (the spans, the marker, the reason), NULL for a forget.
	`CREATE TABLE archive_rewrites (
		n         bigserial PRIMARY KEY,
		at        timestamptz NOT NULL DEFAULT now(),
		kind      text NOT NULL CHECK (kind IN ('forget', 'redact')),
		ids       text[] NOT NULL,
		seqs      bigint[] NOT NULL,
		redaction bytea
	);
	COMMENT ON TABLE archive_rewrites IS 'engram rewrite journal: the forgets and redactions, for the palaces of every server';`,

	// 4: the corrections journal written while serving (Corrections).
	// Its numbers come from a sequence, taken under the journal's lock,
	// so that a number a forget deleted is never given again: a server
	// that applied every correction through n reads the ones after it.
	`CREATE SEQUENCE archive_corrections_n OWNED BY archive_corrections.n;`,

	// 5: the shared jobs' state (RunShared): when each last started and
	// last succeeded, its last error, and the server that ran it.
	`CREATE TABLE team_jobs (
		name         text PRIMARY KEY,
		last_run     timestamptz NOT NULL,
		last_success timestamptz,
		last_error   text NOT NULL DEFAULT '',
		server       text NOT NULL
	);
	COMMENT ON TABLE team_jobs IS 'engram jobs over the shared archive: which server ran each, and when';`,

	// 6: turn vectors shared by the servers (PutTurnVectors): a model's
	// vector of a turn's current text, float32 little-endian. A rewrite
	// deletes those of the turns it changes.
	`CREATE TABLE archive_vectors (
		model text NOT NULL,
		seq   bigint NOT NULL,
		vec   bytea NOT NULL,
		PRIMARY KEY (model, seq)
	);
	CREATE INDEX archive_vectors_seq ON archive_vectors (seq);
	COMMENT ON TABLE archive_vectors IS 'engram turn vectors, embedded once for every server';`,

	// 7: the home files engram migrate copies beside the archive
	// (HomeFiles): config.toml, whole.
	`CREATE TABLE home_config (
		name text PRIMARY KEY,
		body bytea NOT NULL
	);
	COMMENT ON TABLE home_config IS 'engram home files copied by engram migrate: config.toml (models, vaults, jobs; never a secret)';`,
}

// backfills run in Go after the migration of their version, in its
// transaction.
var backfills = map[int]func(ctx context.Context, tx pgx.Tx) error{
	2: backfillRedacted,
}

// backfillRedacted sets redacted on the rows a version 1 archive wrote
// with a redacted turn. Only a line holding the bytes "redacted": may
// (content and names escape their quotes); each such line is decoded.
func backfillRedacted(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT seq, line FROM archive_turns WHERE position('"redacted":'::bytea IN line) > 0`)
	if err != nil {
		return err
	}
	var seqs []int64
	var seq int64
	var line []byte
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		if t, err := archive.DecodeLine(line); err == nil && t.Redacted != nil {
			seqs = append(seqs, seq)
		}
		return nil
	})
	if err != nil || len(seqs) == 0 {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE archive_turns SET redacted = true WHERE seq = ANY($1)`, seqs)
	return err
}

// Migrate applies the missing migrations of a component (the archive's,
// the palace's: each numbers its own in schema_migrations), steps[i]
// being version i+1 and fills[v], when set, a step in Go run after
// version v in its transaction. It runs in one transaction, under an
// advisory lock so that servers starting together apply each once, and
// refuses a database a newer engram migrated (ErrSchemaTooNew). It
// returns the version it found.
func Migrate(ctx context.Context, pool *pgxpool.Pool, component string, steps []string, fills map[int]func(ctx context.Context, tx pgx.Tx) error) (found int, err error) {
	fail := func(op string, err error) (int, error) {
		return 0, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot migrate the PostgreSQL " + component + ": " + op, Err: err}
	}
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return fail("begin", err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLockKey); err != nil {
		return fail("lock", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		component  text NOT NULL,
		version    integer NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (component, version)
	)`); err != nil {
		return fail("create schema_migrations", err)
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations WHERE component = $1`,
		component).Scan(&have); err != nil {
		return fail("read schema_migrations", err)
	}
	if have > len(steps) {
		return 0, fmt.Errorf("%w: the %s schema is at version %d, this engram knows %d; upgrade engram",
			ErrSchemaTooNew, component, have, len(steps))
	}
	for v := have + 1; v <= len(steps); v++ {
		if _, err := tx.Exec(ctx, steps[v-1]); err != nil {
			return fail(fmt.Sprintf("version %d", v), err)
		}
		if fill := fills[v]; fill != nil {
			if err := fill(ctx, tx); err != nil {
				return fail(fmt.Sprintf("fill version %d", v), err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (component, version) VALUES ($1, $2)`, component, v); err != nil {
			return fail(fmt.Sprintf("record version %d", v), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fail("commit", err)
	}
	return have, nil
}
