-- Vectors on disk as int8 codes. vec was the unit vector in dim
-- little-endian half-precision values (2 bytes a dimension, 0012); it is now
-- the codes the in-memory matrix scans, dim signed bytes, followed by their
-- scale as a little-endian float32 (the codes times the scale are a unit
-- vector): 516 bytes at 512 dimensions where half precision took 1,024.
-- engram_unit_codes is a function the palace registers with SQLite
-- (palace/vecenc.go). The palace reclaims the old table's pages (VACUUM)
-- after this migration.
CREATE TABLE vectors_int8 (
	model     TEXT    NOT NULL REFERENCES vector_models (model),
	id        TEXT    NOT NULL,
	kind      TEXT    NOT NULL,
	namespace TEXT    NOT NULL,
	ts        INTEGER,
	dim       INTEGER NOT NULL,
	vec       BLOB    NOT NULL CHECK (length(vec) = dim + 4),
	seq       INTEGER NOT NULL,
	PRIMARY KEY (model, id)
) STRICT;

INSERT INTO vectors_int8 (model, id, kind, namespace, ts, dim, vec, seq)
	SELECT model, id, kind, namespace, ts, dim, engram_unit_codes(vec), seq FROM vectors;

DROP TABLE vectors;
ALTER TABLE vectors_int8 RENAME TO vectors;
CREATE UNIQUE INDEX vectors_model_seq ON vectors (model, seq);
