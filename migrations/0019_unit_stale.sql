-- The session parts whose keyword index (unit_sessions_fts) lags behind
-- their turns. palace.IndexSecondary adds turns to their parts a step at a
-- time and re-indexes the text of each part they extended once, after the
-- steps have caught up, instead of once per step: a part of 64 turns was
-- re-tokenized by every step that added to it. A part is listed in the
-- transaction that extends it and leaves the list in the one that indexes
-- it again.
CREATE TABLE unit_stale (
	n INTEGER PRIMARY KEY -- units.n of a session part
);
