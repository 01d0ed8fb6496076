-- The session parts' full-text rows (unit_sessions_fts) are written behind
-- the turns by the palace's unit text follower (palace/unittext.go), no
-- longer in the transaction that stores a turn. 'unit_text_seq' is the
-- change number of the units (units.seq) through which those rows are
-- current: every part is current in a palace written before.
INSERT INTO palace_meta (key, value)
	SELECT 'unit_text_seq', coalesce(max(seq), 0) FROM units WHERE true
	ON CONFLICT (key) DO NOTHING;
