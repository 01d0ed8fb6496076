-- The active memories of one namespace, type and subject, newest first: the
-- near-duplicate lookup of storing a memory reads them, keeping those its
-- full-text expression matches (palace.qNearDuplicates). It walked the
-- full-text matches of all memories instead, filtering each by a lookup of
-- its row: thousands of rows a memory at 100,000 turns.
CREATE INDEX memories_group ON memories (namespace, type, subject) WHERE superseded_by IS NULL;
