-- Derived layers L1-L4, written by the pipeline's workers (package
-- pipeline) from the archive. Every row can be rebuilt from the archive.
-- Times are Unix nanoseconds (UTC), NULL for a zero time; lists (sources,
-- entities, participants, turns, evidence, history) are JSON arrays.
--
-- Each worker's watermark is a palace_meta row 'worker:<name>', advanced in
-- the transaction that writes the worker's batch.

-- L1 memories. seq is the change number: every insert and every update
-- (a merged near-duplicate, a supersession) gives the row the next one, so
-- the workers that read memories (persona, graph, embedding) keep a
-- watermark on it. dedup_key identifies near-duplicates (same namespace,
-- type, subject and content words). rel_* is the memory as a triple.
CREATE TABLE memories (
	n             INTEGER PRIMARY KEY,
	id            TEXT    NOT NULL UNIQUE,
	namespace     TEXT    NOT NULL,
	type          TEXT    NOT NULL,
	subject       TEXT    NOT NULL DEFAULT '',
	text          TEXT    NOT NULL,
	rationale     TEXT    NOT NULL DEFAULT '',
	entities      TEXT    NOT NULL DEFAULT '[]',
	importance    REAL    NOT NULL,
	ts            INTEGER,
	valid_from    INTEGER,
	sources       TEXT    NOT NULL,
	rel_subject   TEXT,
	rel_predicate TEXT,
	rel_object    TEXT,
	rel_subj_norm TEXT,
	rel_obj_norm  TEXT,
	dedup_key     TEXT    NOT NULL,
	superseded_by TEXT,
	seq           INTEGER NOT NULL UNIQUE
) STRICT;

CREATE INDEX memories_dedup ON memories (namespace, dedup_key) WHERE superseded_by IS NULL;
CREATE INDEX memories_relation ON memories (namespace, rel_subj_norm, rel_predicate) WHERE superseded_by IS NULL;
CREATE INDEX memories_namespace_ts ON memories (namespace, ts);

-- The ids of memories merged into another (near-duplicates), so that a
-- memory extracted again is recognised whatever became of its target.
CREATE TABLE memory_merges (
	id     TEXT NOT NULL PRIMARY KEY,
	memory TEXT NOT NULL
) STRICT;

-- Keyword index of memories (text, rationale and entities, segmented like
-- turns): rowid = memories.n.
CREATE VIRTUAL TABLE memories_fts USING fts5(
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

-- L2 scenes. The last scene of each session stays open (draft holds the
-- segmenter's state as JSON) until a turn starts the next one; a closed
-- scene has draft NULL. seq is the change number, as for memories.
CREATE TABLE scenes (
	n            INTEGER PRIMARY KEY,
	id           TEXT    NOT NULL UNIQUE,
	namespace    TEXT    NOT NULL,
	session      TEXT    NOT NULL,
	title        TEXT    NOT NULL,
	summary      TEXT    NOT NULL,
	start_ts     INTEGER,
	end_ts       INTEGER,
	participants TEXT    NOT NULL,
	turns        TEXT    NOT NULL,
	draft        TEXT,
	seq          INTEGER NOT NULL UNIQUE
) STRICT;

CREATE INDEX scenes_open ON scenes (namespace, session) WHERE draft IS NOT NULL;
CREATE INDEX scenes_namespace_start ON scenes (namespace, start_ts);

-- Keyword index of scenes (title and summary): rowid = scenes.n.
CREATE VIRTUAL TABLE scenes_fts USING fts5(
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

-- L3 persona: one row per facet of a speaker. history holds the values the
-- facet had before, each with its [from, to) and evidence.
CREATE TABLE persona_facets (
	namespace TEXT    NOT NULL,
	speaker   TEXT    NOT NULL,
	facet     TEXT    NOT NULL,
	key       TEXT    NOT NULL,
	value     TEXT    NOT NULL,
	since     INTEGER,
	evidence  TEXT    NOT NULL,
	history   TEXT    NOT NULL DEFAULT '[]',
	updated   INTEGER,
	PRIMARY KEY (namespace, speaker, facet, key)
) STRICT;

-- L4 knowledge graph. Entities are resolved by norm (case-folded, NFKC,
-- white space collapsed); kg_aliases maps every other name (and each norm
-- itself) to its entity.
CREATE TABLE kg_entities (
	n         INTEGER PRIMARY KEY,
	namespace TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	norm      TEXT    NOT NULL,
	UNIQUE (namespace, norm)
) STRICT;

CREATE TABLE kg_aliases (
	namespace TEXT    NOT NULL,
	norm      TEXT    NOT NULL,
	alias     TEXT    NOT NULL,
	entity    INTEGER NOT NULL REFERENCES kg_entities (n),
	PRIMARY KEY (namespace, norm)
) STRICT;

CREATE INDEX kg_aliases_entity ON kg_aliases (entity);

-- Every statement the graph was told, grouped in chains: the statements
-- whose values replace each other (a subject's single-valued predicate; a
-- subject's likes and dislikes of one object; or one multi-valued fact).
-- The triples of a chain are rebuilt from its statements whenever one is
-- added, so the graph does not depend on the order statements arrive in.
CREATE TABLE kg_statements (
	namespace TEXT    NOT NULL,
	chain     TEXT    NOT NULL,
	at        INTEGER NOT NULL,
	subject   INTEGER NOT NULL REFERENCES kg_entities (n),
	predicate TEXT    NOT NULL,
	object    INTEGER NOT NULL REFERENCES kg_entities (n),
	sources   TEXT    NOT NULL,
	memory    TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (namespace, chain, at, predicate, object)
) STRICT;

-- Triples, valid in [valid_from, valid_to); valid_to NULL while still
-- valid: consecutive statements of a chain with the same value make one
-- triple, which the next value closes.
CREATE TABLE kg_triples (
	n          INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	namespace  TEXT    NOT NULL,
	chain      TEXT    NOT NULL,
	subject    INTEGER NOT NULL REFERENCES kg_entities (n),
	predicate  TEXT    NOT NULL,
	object     INTEGER NOT NULL REFERENCES kg_entities (n),
	valid_from INTEGER NOT NULL,
	valid_to   INTEGER,
	confidence REAL    NOT NULL,
	sources    TEXT    NOT NULL,
	memory     TEXT    NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX kg_triples_subject ON kg_triples (subject, predicate, valid_from);
CREATE INDEX kg_triples_chain ON kg_triples (namespace, chain);
CREATE INDEX kg_triples_object ON kg_triples (object);

-- Batches a worker skipped (an LLM's output unusable after its retries),
-- with the error, so that nothing is dropped silently.
CREATE TABLE layer_skips (
	worker   TEXT    NOT NULL,
	from_seq INTEGER NOT NULL,
	to_seq   INTEGER NOT NULL,
	error    TEXT    NOT NULL,
	at       INTEGER NOT NULL,
	PRIMARY KEY (worker, from_seq)
) STRICT;
