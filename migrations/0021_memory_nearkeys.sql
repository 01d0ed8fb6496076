-- The near-duplicate keys of every memory (package neardup): a memory of
-- group grp (its namespace, type and subject) with size content words is
-- found under each of its keys tok. Storing a memory reads the rows of
-- its own keys to find the memories it may repeat (palace.nearDuplicate),
-- instead of a full-text query whose matches grew with the palace and
-- were most of the cost of storing memories. Rows are kept for superseded
-- memories too (a forget can make one active again); the lookup reads the
-- memory's row for that. A key's rows are read newest first (by n), up to
-- a bound, so a common word costs no more than a rare one.
CREATE TABLE memory_nearkeys (
	grp  INTEGER NOT NULL,
	tok  INTEGER NOT NULL,
	size INTEGER NOT NULL,
	n    INTEGER NOT NULL,
	PRIMARY KEY (grp, tok, n)
) WITHOUT ROWID;
INSERT OR IGNORE INTO memory_nearkeys (grp, tok, size, n)
	SELECT engram_near_group(m.namespace, m.type, m.subject), k.value, engram_near_size(m.dedup_key), m.n
	FROM memories m, json_each(engram_near_keys(m.dedup_key)) k;
-- The index 0013 made for the full-text lookup this table replaces; no
-- other statement reads by it.
DROP INDEX memories_group;
