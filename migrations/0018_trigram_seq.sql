-- The watermark of the turns' substring index (turns_trigram): the seq
-- through which every stored turn has its row. A turn's trigram row is
-- now written in the transaction after the one that stores the turn, with
-- its session unit (palace.PutTurnsSearchable), so that a write's
-- acknowledgement does not wait for it; until now it was written in the
-- same transaction, so every turn the indexer has stored has its row.
INSERT OR IGNORE INTO palace_meta (key, value)
	SELECT 'trigram_seq', coalesce((SELECT value FROM palace_meta WHERE key = 'indexed_seq'), 0);
