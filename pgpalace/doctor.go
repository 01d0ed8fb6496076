package pgpalace

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
)

// The names of engram doctor's checks of a palace in PostgreSQL.
const (
	CheckSchema  = "palace-schema"  // the palace's migrations, and the trigram indexes
	CheckIndexes = "palace-indexes" // this server's in-memory indexes against the tables
)

// trigramIndexes are the indexes the fill of migration 1 makes with
// pg_trgm, when the server lets it.
var trigramIndexes = []string{"palace_turn_text_folded", "palace_vault_chunks_folded"}

// Checks reports on the palace, as engram doctor shows it: its schema (the
// migrations applied, and the trigram indexes, without which a substring
// search reads every row), and how far this server's keyword and vector
// indexes are behind the tables (they catch up at their next search, or
// poll). A database that does not answer fails the first.
func (db *DB) Checks(ctx context.Context) []engram.DoctorCheck {
	return []engram.DoctorCheck{db.schemaCheck(ctx), db.indexCheck(ctx)}
}

func (db *DB) schemaCheck(ctx context.Context) engram.DoctorCheck {
	c := engram.DoctorCheck{Name: CheckSchema, Status: engram.CheckFail}
	var (
		version int
		have    []string
	)
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations WHERE component = $1`, component).Scan(&version); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ANY($1)`, trigramIndexes)
		if err != nil {
			return err
		}
		have, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	switch {
	case err != nil:
		c.Finding = "the palace's schema could not be read: " + engram.ErrorText(wrap("schema", err))
		return c
	case version != len(migrations):
		c.Finding = fmt.Sprintf("the palace's schema is at version %d, this engram knows %d", version, len(migrations))
		c.Fix = "restart engram serve (it migrates the schema as it starts)"
		return c
	}
	var missing []string
	for _, ix := range trigramIndexes {
		if !slices.Contains(have, ix) {
			missing = append(missing, ix)
		}
	}
	if len(missing) > 0 {
		c.Status = engram.CheckWarn
		c.Finding = fmt.Sprintf("version %d; without the pg_trgm extension the substring searches read every row (no %s)", version, strings.Join(missing, ", "))
		c.Fix = "CREATE EXTENSION pg_trgm (as the database's owner), then CREATE INDEX " + missing[0] + " ... USING gin (folded gin_trgm_ops)"
		return c
	}
	c.Status, c.Finding = engram.CheckOK, fmt.Sprintf("version %d, as this engram knows; substring searches use pg_trgm", version)
	return c
}

func (db *DB) indexCheck(ctx context.Context) engram.DoctorCheck {
	c := engram.DoctorCheck{Name: CheckIndexes, Status: engram.CheckOK}
	var notes []string
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range db.indexes() {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		x := db.indexes()[name]
		switch x.State() {
		case "":
			continue // not warm: loaded at its first search
		case kwindex.Failed:
			c.Status, c.Fix = engram.CheckFail, "restart engram serve (the keyword indexes load again)"
			notes = append(notes, name+": failed to load")
			continue
		case kwindex.Loading:
			notes = append(notes, name+": loading")
			continue
		}
		seq, _, err := x.Source().State(ctx)
		if err != nil {
			c.Status, c.Finding = engram.CheckFail, "the palace's tables could not be read: "+engram.ErrorText(wrap("index state", err))
			return c
		}
		if behind := seq - x.Info().Seq; behind > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d changes behind (read at its next search)", name, behind))
		}
	}
	lag, err := db.vectors.Lag(ctx)
	if err != nil {
		c.Status, c.Finding = engram.CheckFail, "the palace's vectors could not be read: "+engram.ErrorText(err)
		return c
	}
	notes = append(notes, lag...)
	if len(notes) == 0 {
		c.Finding = "this server's keyword and vector indexes hold every change of the palace's tables"
	} else {
		c.Finding = strings.Join(notes, "; ")
	}
	return c
}

// deletionKeys are the palace_meta keys counting the deletions of each
// table a keyword index follows.
var deletionKeys = []string{keyTurnsDeleted, keyUnitsDeleted, keyScenesDeleted, keyMemoriesDeleted, keyTriplesDeleted, keyChunksDeleted}

// Reset empties the palace: every table of it, its counters and
// watermarks, in one transaction under every write lock, for engram
// rebuild to index the archive into it again. This server's indexes load
// again at their next search; the other servers' too (the deletion
// counts move on, not back), but their vector stores fail with ENOTFOUND
// (the models are gone): rebuild a shared palace with the other servers
// stopped.
func (db *DB) Reset(ctx context.Context) error {
	err := db.update(ctx, "reset", func(tx pgx.Tx) error {
		if err := lockWrites(ctx, tx, graphLockKey, personaLockKey, memoryLockKey, vectorLockKey); err != nil {
			return err
		}
		var tables string
		if err := tx.QueryRow(ctx, `SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables
			WHERE schemaname = current_schema() AND tablename LIKE 'palace\_%' AND tablename <> 'palace_meta'`).Scan(&tables); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `TRUNCATE `+tables+` RESTART IDENTITY`); err != nil {
			return err
		}
		// The deletion counts move on, so that every server's indexes
		// build themselves again; the other counters (watermarks) go.
		if _, err := tx.Exec(ctx, `DELETE FROM palace_meta WHERE NOT (key = ANY($1))`, deletionKeys); err != nil {
			return err
		}
		for _, key := range deletionKeys {
			if err := countDeletion(ctx, tx, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	db.vectors.Dropped() // the models are gone
	return nil
}
