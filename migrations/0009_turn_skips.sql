-- Archived turns the indexer passed over instead of stopping on them:
--   a turn whose id the palace holds under another seq (stored_seq): the
--   re-send of a turn whose archive line was damaged, which the archive
--   (skipping that line) did not know and archived again; the palace keeps
--   the copy it has;
--   a turn the palace cannot store (a time outside the range of int64 Unix
--   nanoseconds, from a line edited by hand).
-- Recorded so that /v1/health and the doctor show them; indexing goes on.
-- at is Unix nanoseconds.
CREATE TABLE turn_skips (
	seq        INTEGER PRIMARY KEY, -- the archive's seq of the turn not stored
	id         TEXT    NOT NULL,
	reason     TEXT    NOT NULL,
	stored_seq INTEGER,             -- for a duplicate id: the seq the palace holds it under
	at         INTEGER NOT NULL
) STRICT;
