package pgpalace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/pgpalace/pgvectors"
	"github.com/engram-dev/engram/postgres"
)

// component is the palace's name in schema_migrations, beside the
// archive's: each numbers its own migrations.
const component = "palace"

// migrations are the palace's schema steps, version i+1 at index i. Never
// edit one that shipped; add a new one.
var migrations = []string{
	// 1: the turns and the watermarks. palace_turns is the archive's
	// turns as the indexer stores them (package palace's table turns):
	// times in Unix nanoseconds, NULL for none; change is the row's
	// change number (a new one when a rewrite changes the row), which
	// the servers' in-memory keyword indexes follow. content is bytea: a
	// turn's text may hold a NUL, which text refuses. palace_turn_text
	// holds what the fallback searches read of a turn, written after it
	// (IndexSecondary), off the path an acknowledgement waits on: folded,
	// the content as the substring search looks through it, and grams, its
	// Chinese and Japanese characters and pairs (package palace's
	// turns_trigram and turns_cjk). palace_meta holds the
	// counters that only rise (the indexer's and the jobs' watermarks).
	// palace_forgotten holds the ids of the tombstones the indexer met,
	// with the tombstone's seq; palace_turn_skips the archived turns not
	// stored, and why; palace_layer_skips the ranges a job gave up on;
	// palace_job_state the scheduled jobs' last runs (package scheduler's
	// State, package palace's job_state).
	// palace_units and palace_unit_turns are the retrieval units and the
	// turns they hold (package palace's units and unit_turns: session
	// parts cut alike, so with the same ids); seq is a unit's change
	// number, which the servers' keyword indexes of units follow.
	// palace_scenes are the L2 scenes (package palace's scenes): title and
	// summary, made of the turns' words, are bytea as content is; turns
	// is the ids of the turns they hold, under GIN for a forget's or a
	// redaction's lookup; draft is the open scene's segmenter state.
	// palace_persona_facets are the L3 personas, a row a facet of a
	// speaker (package palace's persona_facets): history is the values
	// before, as JSON (internal/facetline).
	// palace_kg_* are the L4 graph (package palace's kg_*, built by
	// internal/kgchain): entities by normalised name and their aliases;
	// every statement the graph was told, in chains; the triples the
	// chains make, each with the sentence the keyword index of the
	// triples holds (text: written when its chain is rebuilt, as
	// package palace's kg_fts) and a change number the servers' indexes
	// follow. Names that order chains compare bytewise (COLLATE "C"),
	// as SQLite's and Go's do.
	// palace_memories are the L1 memories (package palace's memories,
	// stored by internal/memrule): text, rationale and the text as
	// extracted are bytea as content is; sources under GIN; seq the
	// change number the servers' keyword indexes of the memories follow.
	// palace_memory_merges names the memory each repeat was merged into;
	// palace_memory_nearkeys is each memory's near-duplicate keys
	// (package neardup). palace_corrections are the corrections given,
	// in order (package palace's corrections).
	// palace_vector_models and palace_vectors are the vectors of each
	// embedding model (package palace's vector_models and vectors: codes
	// of vecrow.Encode), each write under the model's next change number
	// (last_seq; last_put the last a vector written took), which every
	// server's in-memory index follows;
	// palace_vector_deletes journals the deletions by change number too,
	// for those indexes, pruned after a while (pruned_seq: an index
	// behind it loads again).
	// palace_vault_docs, _chunks and _links are the Markdown vaults'
	// documents, their chunks (text as bytea; folded, what the substring
	// search looks through, under pg_trgm when the server has it; seq the
	// change number the servers' keyword indexes of the chunks follow) and
	// their links (package palace's vault_*).
	`CREATE TABLE palace_meta (
		key   text PRIMARY KEY,
		value bigint NOT NULL
	);
	CREATE SEQUENCE palace_turns_change;
	CREATE TABLE palace_turns (
		seq         bigint PRIMARY KEY CHECK (seq > 0),
		id          text NOT NULL UNIQUE,
		namespace   text NOT NULL,
		session     text NOT NULL,
		role        text NOT NULL,
		speaker     text NOT NULL,
		content     bytea NOT NULL,
		ts          bigint,
		meta        text,
		received_at bigint,
		change      bigint NOT NULL DEFAULT nextval('palace_turns_change')
	);
	CREATE INDEX palace_turns_session ON palace_turns (namespace, session, ts, seq);
	CREATE INDEX palace_turns_change_idx ON palace_turns (change);
	CREATE INDEX palace_turns_timeline ON palace_turns (namespace, coalesce(ts, -9223372036854775808) DESC, seq DESC);
	CREATE TABLE palace_turn_text (
		seq    bigint PRIMARY KEY,
		folded text NOT NULL,
		grams  text[]
	);
	CREATE INDEX palace_turn_text_grams ON palace_turn_text USING gin (grams);
	CREATE TABLE palace_forgotten (
		id  text PRIMARY KEY,
		seq bigint NOT NULL,
		at  bigint NOT NULL
	);
	CREATE TABLE palace_turn_skips (
		seq        bigint PRIMARY KEY,
		id         text NOT NULL,
		reason     text NOT NULL,
		stored_seq bigint,
		at         bigint NOT NULL
	);
	CREATE TABLE palace_layer_skips (
		worker   text NOT NULL,
		from_seq bigint NOT NULL,
		to_seq   bigint NOT NULL,
		error    text NOT NULL,
		at       bigint NOT NULL,
		PRIMARY KEY (worker, from_seq)
	);
	CREATE TABLE palace_units (
		n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id        text NOT NULL UNIQUE,
		kind      text NOT NULL CHECK (kind IN ('session', 'scene')),
		namespace text NOT NULL,
		session   text NOT NULL,
		start_ts  bigint,
		end_ts    bigint,
		turns     integer NOT NULL,
		bytes     integer NOT NULL,
		seq       bigint NOT NULL UNIQUE
	);
	CREATE INDEX palace_units_session ON palace_units (namespace, session, kind, n);
	CREATE TABLE palace_unit_turns (
		unit_n   bigint NOT NULL,
		turn_seq bigint NOT NULL,
		PRIMARY KEY (unit_n, turn_seq)
	);
	CREATE INDEX palace_unit_turns_turn ON palace_unit_turns (turn_seq);
	CREATE TABLE palace_job_state (
		name         text PRIMARY KEY,
		last_run     bigint,
		last_success bigint,
		last_error   text NOT NULL DEFAULT '',
		failures     integer NOT NULL DEFAULT 0 CHECK (failures >= 0)
	);
	CREATE TABLE palace_scenes (
		n            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id           text NOT NULL UNIQUE,
		namespace    text NOT NULL,
		session      text NOT NULL,
		title        bytea NOT NULL,
		summary      bytea NOT NULL,
		start_ts     bigint,
		end_ts       bigint,
		participants text[] NOT NULL,
		turns        text[] NOT NULL,
		draft        bytea,
		seq          bigint NOT NULL UNIQUE
	);
	CREATE INDEX palace_scenes_open ON palace_scenes (namespace, session, n) WHERE draft IS NOT NULL;
	CREATE INDEX palace_scenes_start ON palace_scenes (start_ts DESC NULLS LAST, n DESC);
	CREATE INDEX palace_scenes_turns ON palace_scenes USING gin (turns);
	CREATE TABLE palace_persona_facets (
		namespace text NOT NULL,
		speaker   text NOT NULL,
		facet     text NOT NULL,
		key       text NOT NULL,
		value     bytea NOT NULL,
		since     bigint,
		evidence  text[] NOT NULL,
		history   text NOT NULL DEFAULT '[]',
		updated   bigint,
		PRIMARY KEY (namespace, speaker, facet, key)
	);
	CREATE TABLE palace_kg_entities (
		n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		namespace text NOT NULL,
		name      text NOT NULL,
		norm      text COLLATE "C" NOT NULL,
		UNIQUE (namespace, norm)
	);
	CREATE TABLE palace_kg_aliases (
		namespace text NOT NULL,
		norm      text COLLATE "C" NOT NULL,
		alias     text NOT NULL,
		entity    bigint NOT NULL REFERENCES palace_kg_entities (n),
		PRIMARY KEY (namespace, norm)
	);
	CREATE INDEX palace_kg_aliases_entity ON palace_kg_aliases (entity);
	CREATE TABLE palace_kg_statements (
		namespace text NOT NULL,
		chain     text NOT NULL,
		at        bigint NOT NULL,
		subject   bigint NOT NULL REFERENCES palace_kg_entities (n),
		predicate text COLLATE "C" NOT NULL,
		object    bigint NOT NULL REFERENCES palace_kg_entities (n),
		sources   text[] NOT NULL,
		memory    text NOT NULL DEFAULT '',
		PRIMARY KEY (namespace, chain, at, predicate, object)
	);
	CREATE INDEX palace_kg_statements_subject ON palace_kg_statements (subject);
	CREATE INDEX palace_kg_statements_object ON palace_kg_statements (object);
	CREATE INDEX palace_kg_statements_sources ON palace_kg_statements USING gin (sources);
	CREATE INDEX palace_kg_statements_memory ON palace_kg_statements (memory) WHERE memory <> '';
	CREATE TABLE palace_kg_triples (
		n          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id         text NOT NULL UNIQUE,
		namespace  text NOT NULL,
		chain      text NOT NULL,
		subject    bigint NOT NULL REFERENCES palace_kg_entities (n),
		predicate  text COLLATE "C" NOT NULL,
		object     bigint NOT NULL REFERENCES palace_kg_entities (n),
		valid_from bigint NOT NULL,
		valid_to   bigint,
		confidence double precision NOT NULL,
		sources    text[] NOT NULL,
		memory     text NOT NULL DEFAULT '',
		corrected  text,
		text       text NOT NULL,
		seq        bigint NOT NULL UNIQUE
	);
	CREATE INDEX palace_kg_triples_subject ON palace_kg_triples (subject, predicate, valid_from);
	CREATE INDEX palace_kg_triples_chain ON palace_kg_triples (namespace, chain, valid_from, predicate, object);
	CREATE INDEX palace_kg_triples_object ON palace_kg_triples (object);
	CREATE INDEX palace_kg_triples_sources ON palace_kg_triples USING gin (sources);
	CREATE INDEX palace_persona_facets_evidence ON palace_persona_facets USING gin (evidence);
	CREATE TABLE palace_memories (
		n             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id            text NOT NULL UNIQUE,
		namespace     text NOT NULL,
		type          text NOT NULL,
		subject       text NOT NULL DEFAULT '',
		text          bytea NOT NULL,
		rationale     bytea NOT NULL,
		entities      text NOT NULL DEFAULT '[]',
		importance    double precision NOT NULL,
		ts            bigint,
		valid_from    bigint,
		sources       text[] NOT NULL,
		rel_subject   text,
		rel_predicate text,
		rel_object    text,
		rel_subj_norm text,
		rel_obj_norm  text,
		dedup_key     text NOT NULL,
		superseded_by text,
		wrong         boolean NOT NULL DEFAULT false,
		corrected     text,
		extracted     bytea,
		seq           bigint NOT NULL UNIQUE
	);
	CREATE INDEX palace_memories_dedup ON palace_memories (namespace, dedup_key) WHERE superseded_by IS NULL;
	CREATE INDEX palace_memories_relation ON palace_memories (namespace, rel_subj_norm, rel_predicate) WHERE superseded_by IS NULL;
	CREATE INDEX palace_memories_ts ON palace_memories (namespace, ts);
	CREATE INDEX palace_memories_sources ON palace_memories USING gin (sources);
	CREATE INDEX palace_memories_superseded ON palace_memories (superseded_by) WHERE superseded_by IS NOT NULL;
	CREATE INDEX palace_memories_corrected ON palace_memories (corrected) WHERE corrected IS NOT NULL;
	CREATE TABLE palace_memory_merges (
		id     text PRIMARY KEY,
		memory text NOT NULL
	);
	CREATE INDEX palace_memory_merges_memory ON palace_memory_merges (memory);
	CREATE TABLE palace_memory_nearkeys (
		grp  bigint NOT NULL,
		tok  bigint NOT NULL,
		size integer NOT NULL,
		n    bigint NOT NULL,
		PRIMARY KEY (grp, tok, n)
	);
	CREATE INDEX palace_memory_nearkeys_n ON palace_memory_nearkeys (n);
	CREATE TABLE palace_corrections (
		n      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id     text NOT NULL UNIQUE,
		target text NOT NULL,
		ns     text NOT NULL,
		key    text NOT NULL,
		alt    text NOT NULL DEFAULT '',
		body   text NOT NULL
	);
	CREATE INDEX palace_corrections_key ON palace_corrections (target, key);
	CREATE INDEX palace_corrections_ns ON palace_corrections (ns);
	CREATE INDEX palace_corrections_alt ON palace_corrections (target, alt) WHERE alt <> '';
	CREATE TABLE palace_vector_models (
		model        text PRIMARY KEY,
		dim          integer NOT NULL CHECK (dim > 0),
		state        text NOT NULL CHECK (state IN ('active', 'building', 'retired')),
		created_at   bigint NOT NULL,
		activated_at bigint,
		last_seq     bigint NOT NULL DEFAULT 0,
		last_put     bigint NOT NULL DEFAULT 0,
		embedded_seq bigint NOT NULL DEFAULT 0,
		synced_seq   bigint NOT NULL DEFAULT 0,
		pruned_seq   bigint NOT NULL DEFAULT 0
	);
	CREATE UNIQUE INDEX palace_vector_models_active ON palace_vector_models (state) WHERE state = 'active';
	CREATE TABLE palace_vectors (
		model     text NOT NULL REFERENCES palace_vector_models (model) ON DELETE CASCADE,
		id        text NOT NULL,
		kind      text NOT NULL,
		namespace text NOT NULL,
		ts        bigint,
		vec       bytea NOT NULL,
		seq       bigint NOT NULL,
		PRIMARY KEY (model, id)
	);
	CREATE UNIQUE INDEX palace_vectors_seq ON palace_vectors (model, seq);
	CREATE INDEX palace_vectors_id ON palace_vectors (id);
	CREATE TABLE palace_vector_deletes (
		model text NOT NULL REFERENCES palace_vector_models (model) ON DELETE CASCADE,
		seq   bigint NOT NULL,
		id    text NOT NULL,
		at    bigint NOT NULL,
		PRIMARY KEY (model, seq)
	);
	CREATE TABLE palace_vault_docs (
		n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		vault     text NOT NULL,
		namespace text NOT NULL,
		path      text NOT NULL,
		title     text NOT NULL,
		type      text NOT NULL DEFAULT '',
		tags      text[] NOT NULL,
		aliases   text[] NOT NULL,
		date      bigint,
		hash      text NOT NULL,
		size      bigint NOT NULL,
		mod_time  bigint NOT NULL,
		warnings  text[] NOT NULL,
		UNIQUE (vault, path)
	);
	CREATE TABLE palace_vault_chunks (
		n          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id         text NOT NULL UNIQUE,
		doc        bigint NOT NULL REFERENCES palace_vault_docs (n),
		idx        integer NOT NULL,
		heading    text[] NOT NULL,
		text       bytea NOT NULL,
		folded     text NOT NULL,
		start_line integer NOT NULL,
		end_line   integer NOT NULL,
		seq        bigint NOT NULL UNIQUE
	);
	CREATE INDEX palace_vault_chunks_doc ON palace_vault_chunks (doc, idx);
	CREATE TABLE palace_vault_links (
		n         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		vault     text NOT NULL,
		from_path text NOT NULL,
		chunk     integer NOT NULL,
		target    text NOT NULL,
		heading   text NOT NULL DEFAULT '',
		alias     text NOT NULL DEFAULT '',
		kind      text NOT NULL,
		line      integer NOT NULL,
		to_path   text
	);
	CREATE INDEX palace_vault_links_from ON palace_vault_links (vault, from_path);
	CREATE INDEX palace_vault_links_to ON palace_vault_links (vault, to_path);
	COMMENT ON TABLE palace_turns IS 'engram palace: the archived turns as the indexer stores them';`,
}

// fills are the migrations' steps in Go, after the version they follow.
var fills = map[int]func(ctx context.Context, tx pgx.Tx) error{1: trigramIndex}

// trigramIndex indexes the folded text of the turns and of the vault
// chunks by trigrams (pg_trgm), for the substring searches, when the
// server has the extension and lets the user create it (it is trusted:
// the owner of the database may). Without it a substring search reads
// every row: slower, the same results.
func trigramIndex(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SAVEPOINT trigram`); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm;
		CREATE INDEX palace_turn_text_folded ON palace_turn_text USING gin (folded gin_trgm_ops);
		CREATE INDEX palace_vault_chunks_folded ON palace_vault_chunks USING gin (folded gin_trgm_ops)`)
	if err != nil {
		_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT trigram`)
	}
	return err
}

// DB is a palace in a PostgreSQL database. It is safe for concurrent use,
// by this process and by other servers on the same database.
type DB struct {
	pool *pgxpool.Pool
	now  func() time.Time
	kw   *kwindex.SeqCache // the turns' keyword index (search.go)
	ukw  *kwindex.SeqCache // the units' keyword index, one a kind (units.go)
	skw  *kwindex.SeqCache // the scenes' keyword index (scenes.go)
	gkw  *kwindex.SeqCache // the triples' keyword index (kg.go)
	mkw  *kwindex.SeqCache // the memories' keyword index (memories.go)
	vkw  *kwindex.SeqCache // the vault chunks' keyword index (vault.go)

	vectors    *pgvectors.Stores // each model's store
	vectorPoll time.Duration     // how often an index looks for the other servers' writes; 0: never
	closed     atomic.Bool
}

// Open connects to the database at url, applies the palace's missing
// migrations and returns the palace. EUNAVAILABLE when the database does
// not answer; postgres.ErrSchemaTooNew when a newer engram migrated it.
func Open(ctx context.Context, url string) (*DB, error) {
	pool, err := postgres.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	if _, err := postgres.Migrate(ctx, pool, component, migrations, fills); err != nil {
		pool.Close()
		return nil, err
	}
	db := &DB{pool: pool, now: time.Now, vectorPoll: pgvectors.Poll}
	db.vectors = pgvectors.New(pgvectors.Host{
		Pool: pool,
		Now:  func() time.Time { return db.now() },
		Poll: func() time.Duration { return db.vectorPoll },
		Update: func(ctx context.Context, op string, fn func(pgx.Tx) error) error {
			return db.update(ctx, op, func(tx pgx.Tx) error {
				if err := lock(ctx, tx, vectorLockKey); err != nil {
					return err
				}
				return fn(tx)
			})
		},
		Wrap:   wrap,
		Closed: db.closed.Load,
		SetWatermark: func(ctx context.Context, tx pgx.Tx, worker string, seq int64) error {
			return setMeta(ctx, tx, workerKey(worker), seq)
		},
		Turns: func(ctx context.Context, where string, args ...any) ([]engram.Turn, error) {
			return db.turns(ctx, `SELECT `+turnColumns+` FROM palace_turns t WHERE `+where, args...)
		},
	})
	db.kw = kwindex.NewSeqCache(tableSource{db, "palace_turns", "change", keyTurnsDeleted, turnChanges}, false, "").WithSecond(speakerWeight)
	db.ukw = kwindex.NewSeqCache(tableSource{db, "palace_units", "seq", keyUnitsDeleted, unitChanges}, true, engram.UnitSession, engram.UnitScene)
	db.skw = kwindex.NewSeqCache(tableSource{db, "palace_scenes", "seq", keyScenesDeleted, sceneChanges}, true, "")
	db.mkw = kwindex.NewSeqCache(tableSource{db, "palace_memories", "seq", keyMemoriesDeleted, memoryChanges}, true, "")
	db.vkw = kwindex.NewSeqCache(tableSource{db, "palace_vault_chunks", "seq", keyChunksDeleted, chunkChanges}, false, "").WithSecond(1)
	db.gkw = kwindex.NewSeqCache(tableSource{db, "palace_kg_triples", "seq", keyTriplesDeleted, tripleChanges}, false, "")
	return db, nil
}

// Close releases the palace's connections, after a load of the keyword
// index in the background.
func (db *DB) Close() error {
	db.closed.Store(true)
	db.vectors.Close()
	for _, c := range db.indexes() {
		c.Wait()
	}
	db.pool.Close()
	return nil
}

// writeLockKey is the advisory lock every write that takes change numbers
// holds to its commit, so that the rows commit in the order of their
// change numbers and a server that read past one never misses a row
// below it. It reads "engram" in ASCII, then a number, as the archive's.
const writeLockKey int64 = 0x656e6772616d_10

// The other write locks: of the graph (its triples' change numbers, the
// chains rebuilt), of the personas (a facet read and written again), and
// of the memories (their change numbers, a repeat merged), and of the
// vectors (every model's change numbers).
// A transaction takes the locks it needs in the order of their keys, the
// turns' first, so that two never wait for each other.
const (
	graphLockKey   = writeLockKey + 1
	personaLockKey = writeLockKey + 2
	memoryLockKey  = writeLockKey + 3
	vectorLockKey  = writeLockKey + 4
)

// lockWrites takes the palace's write lock in tx: the turns', and the
// others of keys.
func lockWrites(ctx context.Context, tx pgx.Tx, keys ...int64) error {
	return lock(ctx, tx, append([]int64{writeLockKey}, keys...)...)
}

// lock takes the write locks of keys alone in tx, in their order.
func lock(ctx context.Context, tx pgx.Tx, keys ...int64) error {
	if len(keys) == 1 { // the acknowledged writes': one round trip as plain as can be
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, keys[0])
		return err
	}
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(k) FROM unnest($1::bigint[]) AS k ORDER BY k`, keys)
	return err
}

// update runs fn in a transaction, committed if fn returns nil. A
// transaction that loses to a concurrent one (a serialization failure, a
// deadlock) runs again, a few times.
func (db *DB) update(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	var err error
	for range 5 {
		err = pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, fn)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "40001" && pe.Code != "40P01") {
			break
		}
	}
	return wrap(op, err)
}

// wrap names the operation in err. A request that did not reach the
// database or got no answer (no connection, a connection lost or closed,
// a timeout), and the server's own trouble (connection exceptions, its
// resources, an operator's shutdown), are EUNAVAILABLE, a full disk
// ENOSPACE; an error of the statement itself stays as it is.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var ee *engram.Error
	if errors.As(err, &ee) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("pgpalace: %s: %w", op, err)
	}
	if bad := postgres.RefusedText(err, "pgpalace: "+op); bad != nil {
		return bad
	}
	var (
		pe *pgconn.PgError
		ce *pgconn.ConnectError
		ne net.Error
	)
	switch {
	case errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || pgconn.Timeout(err):
	case !errors.As(err, &pe):
		return fmt.Errorf("pgpalace: %s: %w", op, err) // the request's own (a value it cannot send)
	case pe.Code == "53100":
		return &engram.Error{Code: engram.ENOSPACE, Message: "pgpalace: " + op + ": the database's disk is full", Err: err}
	case pe.Code == "54000": // an index row over PostgreSQL's bound
		return &engram.Error{Code: engram.ETOOLARGE, Err: err,
			Message: "pgpalace: " + op + ": a name, key or text is longer than the database's index takes"}
	case !strings.HasPrefix(pe.Code, "08") && !strings.HasPrefix(pe.Code, "53") && !strings.HasPrefix(pe.Code, "57"):
		return fmt.Errorf("pgpalace: %s: %w", op, err)
	}
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "pgpalace: " + op + ": the database does not answer", Err: err}
}

// metaIn reads a palace_meta counter, 0 when it was never set.
func metaIn(ctx context.Context, q pgxQuerier, key string) (int64, error) {
	var v int64
	err := q.QueryRow(ctx, `SELECT value FROM palace_meta WHERE key = $1`, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// setMeta raises a palace_meta counter to v (it never moves back).
func setMeta(ctx context.Context, tx pgx.Tx, key string, v int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO palace_meta (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = greatest(palace_meta.value, excluded.value)`, key, v)
	return err
}

// pgxQuerier is a pool or a transaction.
type pgxQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Vectors returns the vector store of model (pgvectors.Stores.Vectors):
// dim 0 takes the dimension stored.
func (db *DB) Vectors(ctx context.Context, model string, dim int) (*pgvectors.Store, error) {
	return db.vectors.Vectors(ctx, model, dim)
}

// ActiveModel returns the active vector model and its dimension; ok is
// false when no model is active.
func (db *DB) ActiveModel(ctx context.Context) (model string, dim int, ok bool, err error) {
	return db.vectors.ActiveModel(ctx)
}

// ActivateModel makes model the active one and retires the one that was.
func (db *DB) ActivateModel(ctx context.Context, model string) error {
	return db.vectors.ActivateModel(ctx, model)
}

// SetModelState sets the state of model (pgvectors.ModelActive and so on).
func (db *DB) SetModelState(ctx context.Context, model, state string) error {
	return db.vectors.SetModelState(ctx, model, state)
}

// DropModel deletes model and all its vectors.
func (db *DB) DropModel(ctx context.Context, model string) error {
	return db.vectors.DropModel(ctx, model)
}
