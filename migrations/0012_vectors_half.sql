-- Vectors on disk in half precision. vec was dim little-endian float32
-- values as written (2 KB at 512 dimensions, just over half a 4 KB page, so
-- every row took a page of its own); it is now the unit vector in dim
-- little-endian IEEE 754 half-precision values, 2 bytes a dimension. Recall
-- compares directions only; the length a vector was written with is not
-- kept. engram_half_unit is a function the palace registers with SQLite
-- (palace/vecenc.go). The palace reclaims the old table's pages (VACUUM)
-- after this migration.
CREATE TABLE vectors_half (
	model     TEXT    NOT NULL REFERENCES vector_models (model),
	id        TEXT    NOT NULL,
	kind      TEXT    NOT NULL,
	namespace TEXT    NOT NULL,
	ts        INTEGER,
	dim       INTEGER NOT NULL,
	vec       BLOB    NOT NULL CHECK (length(vec) = 2 * dim),
	seq       INTEGER NOT NULL,
	PRIMARY KEY (model, id)
) STRICT;

INSERT INTO vectors_half (model, id, kind, namespace, ts, dim, vec, seq)
	SELECT model, id, kind, namespace, ts, dim, engram_half_unit(vec), seq FROM vectors;

DROP TABLE vectors;
ALTER TABLE vectors_half RENAME TO vectors;
CREATE UNIQUE INDEX vectors_model_seq ON vectors (model, seq);
