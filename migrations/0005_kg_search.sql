-- Knowledge-graph facts become searchable like memories and scenes: a
-- keyword index over each triple read as a sentence ("Alice lives in
-- Lisbon"), and a change number for the worker that embeds them.
--
-- seq is the triple's change number: a rebuilt chain's triples take new
-- ones, so the embedding worker sees them again.
ALTER TABLE kg_triples ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;

CREATE INDEX kg_triples_seq ON kg_triples (seq);

-- Keyword index of triples: rowid = kg_triples.n; text is subject,
-- predicate (underscores as spaces) and object, segmented like turns.
CREATE VIRTUAL TABLE kg_fts USING fts5(
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);
