-- Markdown vaults: a second source of truth beside the archive. Engram
-- indexes them and never writes to them; every row here can be rebuilt by
-- reading the vault again.
--
-- vault is the vault's root folder (absolute); path is slash-separated and
-- relative to it. Times are Unix nanoseconds; lists are JSON arrays.
CREATE TABLE vault_docs (
	n         INTEGER PRIMARY KEY,
	vault     TEXT    NOT NULL,
	namespace TEXT    NOT NULL,
	path      TEXT    NOT NULL,
	title     TEXT    NOT NULL,
	type      TEXT    NOT NULL DEFAULT '',
	tags      TEXT    NOT NULL DEFAULT '[]',
	aliases   TEXT    NOT NULL DEFAULT '[]',
	date      INTEGER,
	hash      TEXT    NOT NULL,
	size      INTEGER NOT NULL,
	mod_time  INTEGER NOT NULL,
	warnings  TEXT    NOT NULL DEFAULT '[]',
	UNIQUE (vault, path)
) STRICT;

-- Chunks: a section of a document, or part of a long one. id is derived
-- from the vault, path, position and text, so an unchanged chunk keeps its
-- id (and its vector) when its document is re-indexed.
CREATE TABLE vault_chunks (
	n          INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	doc        INTEGER NOT NULL REFERENCES vault_docs (n),
	idx        INTEGER NOT NULL,
	heading    TEXT    NOT NULL DEFAULT '[]',
	text       TEXT    NOT NULL,
	start_line INTEGER NOT NULL,
	end_line   INTEGER NOT NULL
) STRICT;

CREATE INDEX vault_chunks_doc ON vault_chunks (doc, idx);

-- Keyword index of chunks (text with the document's title and the heading
-- path, segmented like turns): rowid = vault_chunks.n.
CREATE VIRTUAL TABLE vault_chunks_fts USING fts5(
	text, heading,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Identifiers (ports, error codes, ids) are often inside longer tokens:
-- a trigram index of the chunks, as for turns. rowid = vault_chunks.n.
CREATE VIRTUAL TABLE vault_chunks_trigram USING fts5(
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'trigram'
);

-- Links from a chunk to a document, as written, and the document they
-- resolve to (to_path NULL while unresolved).
CREATE TABLE vault_links (
	vault     TEXT    NOT NULL,
	from_path TEXT    NOT NULL,
	chunk     INTEGER NOT NULL,
	target    TEXT    NOT NULL,
	heading   TEXT    NOT NULL DEFAULT '',
	alias     TEXT    NOT NULL DEFAULT '',
	kind      TEXT    NOT NULL,
	line      INTEGER NOT NULL,
	to_path   TEXT
) STRICT;

CREATE INDEX vault_links_from ON vault_links (vault, from_path);
CREATE INDEX vault_links_to ON vault_links (vault, to_path);
