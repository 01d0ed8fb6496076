-- Forgotten turns (issue 18). The archive keeps a tombstone in place of a
-- forgotten turn's line; the palace keeps its id and seq here, so that the
-- indexer never stores the turn again from a read that began before the
-- forget, and the doctor can check that no index still holds it.
CREATE TABLE forgotten (
	id  TEXT    PRIMARY KEY,
	seq INTEGER NOT NULL, -- the archive's seq of the tombstone
	at  INTEGER NOT NULL  -- when it was forgotten, Unix nanoseconds
) STRICT;
