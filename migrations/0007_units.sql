-- Retrieval units: documents that deep recall scores besides single turns,
-- because an answer often sits in a turn whose own words miss the question
-- while the conversation around it matches. Two kinds:
--   'session' a part of a session: its turns in arrival order, up to 64 turns
--             or 32 KB of text (a longer session has several consecutive
--             parts), written by PutTurns in the transaction that stores the
--             turns, so a new turn extends its session's document at once;
--   'scene'   an L2 scene, written with the scene by PutScenes.
-- Every unit is derived from turns and rebuilt with them. seq is the change
-- number (each insert or growth takes the next), which the vector worker
-- follows. ts columns are Unix nanoseconds.
CREATE TABLE units (
	n         INTEGER PRIMARY KEY,
	id        TEXT    NOT NULL UNIQUE,
	kind      TEXT    NOT NULL CHECK (kind IN ('session', 'scene')),
	namespace TEXT    NOT NULL,
	session   TEXT    NOT NULL,
	start_ts  INTEGER,
	end_ts    INTEGER,
	turns     INTEGER NOT NULL,
	bytes     INTEGER NOT NULL,
	seq       INTEGER NOT NULL UNIQUE
) STRICT;

CREATE INDEX units_session ON units (namespace, session, kind, n);

-- The turns of each unit (turns.seq).
CREATE TABLE unit_turns (
	unit_n   INTEGER NOT NULL,
	turn_seq INTEGER NOT NULL,
	PRIMARY KEY (unit_n, turn_seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX unit_turns_turn ON unit_turns (turn_seq);

-- Keyword indexes of the units' full text ("speaker: content" per turn,
-- segmented like turns), one per kind so that BM25's statistics (document
-- frequencies, average length) are those of one kind of document:
-- rowid = units.n.
CREATE VIRTUAL TABLE unit_sessions_fts USING fts5(
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE VIRTUAL TABLE unit_scenes_fts USING fts5(
	text,
	content = '',
	contentless_delete = 1,
	tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Scenes are rebuilt by the l2-scenes worker so that each gets its unit;
-- their vectors are embedded again.
INSERT INTO scenes_fts (scenes_fts) VALUES ('delete-all');
DELETE FROM scenes;
DELETE FROM palace_meta WHERE key = 'worker:l2-scenes' OR key LIKE 'worker:vec:%:scenes';
