-- The timeline of every namespace, newest first (GET /v1/turns without a
-- namespace), pages by time: turns_namespace_ts serves one namespace only.
CREATE INDEX turns_ts ON turns (ts);
