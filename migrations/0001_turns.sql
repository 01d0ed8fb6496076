-- Turns: the palace's copy of the L0 archive, keyed by the archive's
-- sequence number. Every row can be rebuilt from the archive.
--
-- ts and received_at are Unix nanoseconds (UTC), NULL for a zero time.
-- meta is the turn's raw JSON object, stored and returned byte for byte.
CREATE TABLE turns (
	seq         INTEGER PRIMARY KEY,
	id          TEXT    NOT NULL UNIQUE,
	namespace   TEXT    NOT NULL,
	session     TEXT    NOT NULL,
	role        TEXT    NOT NULL,
	speaker     TEXT    NOT NULL DEFAULT '',
	content     TEXT    NOT NULL,
	ts          INTEGER,
	meta        TEXT,
	received_at INTEGER
);

CREATE INDEX turns_namespace_ts ON turns (namespace, ts);
CREATE INDEX turns_session_ts ON turns (session, ts);

-- Small key/value state of the palace, such as the indexer's watermark
-- (key 'indexed_seq').
CREATE TABLE palace_meta (
	key   TEXT PRIMARY KEY,
	value ANY
) STRICT;

-- Keyword index: rowid = turns.seq. Column text holds the content after NFKC
-- normalisation with Chinese and Japanese runs split into words (see
-- palace/text.go); speaker is normalised the same way. Contentless, since the
-- indexed text is derived and the original lives in turns; contentless_delete
-- lets a turn be removed later.
CREATE VIRTUAL TABLE turns_fts USING fts5(
	text, speaker,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

-- rank = bm25 with matches in the text weighted above matches in the speaker
-- name, so that "what did Alice say about X" is ranked by X.
INSERT INTO turns_fts (turns_fts, rank) VALUES ('rank', 'bm25(1.0, 0.4)');

-- Substring index over the NFKC content, for terms hidden inside longer
-- tokens (KafkaConsumer, port:30001x). rowid = turns.seq.
CREATE VIRTUAL TABLE turns_trigram USING fts5(
	content,
	content = '',
	contentless_delete = 1,
	tokenize = 'trigram'
);

-- Every Chinese and Japanese character and pair of adjacent characters of the
-- content and speaker, for query terms of one or two characters: gse may
-- have merged them into a longer word (会議 into 会議室) and trigrams need
-- three characters. Holds rows only for turns with such text; detail=none
-- since only single-token lookups are made. rowid = turns.seq.
CREATE VIRTUAL TABLE turns_cjk USING fts5(
	grams,
	content = '',
	contentless_delete = 1,
	tokenize = 'unicode61',
	detail = none
);
