-- Corrections of derived memories and graph facts (issue 18). The home's
-- corrections journal (corrections.jsonl) is their source of truth; this
-- table holds them for the palace to apply, and is filled again from the
-- journal by a rebuild. key is the memory's id, or for a fact
-- "namespace|subject norm|predicate|object norm"; alt matches a memory
-- whose extraction gave it another id (namespace|type|extracted text).
-- The last correction of a key (by n) is its state; a restore ends it.
CREATE TABLE corrections (
	n      INTEGER PRIMARY KEY,
	id     TEXT    NOT NULL UNIQUE,
	target TEXT    NOT NULL,
	ns     TEXT    NOT NULL,
	key    TEXT    NOT NULL,
	alt    TEXT    NOT NULL DEFAULT '',
	body   TEXT    NOT NULL
) STRICT;

CREATE INDEX corrections_key ON corrections (target, key);
CREATE INDEX corrections_ns ON corrections (ns);
CREATE INDEX corrections_alt ON corrections (target, alt) WHERE alt <> '';

-- A memory marked wrong is left out wherever active memories are read;
-- corrected names the correction that set its text, extracted keeps the
-- text extraction produced.
ALTER TABLE memories ADD COLUMN wrong INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN corrected TEXT;
ALTER TABLE memories ADD COLUMN extracted TEXT;

-- A triple made from corrected statements names the fact key of the
-- correction, so that the fact can be corrected again or restored.
ALTER TABLE kg_triples ADD COLUMN corrected TEXT;
