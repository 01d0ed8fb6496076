-- Vector models: one row per embedding model whose vectors the palace
-- holds. At most one model is 'active' (the one recall searches); a model
-- being filled by a re-embed is 'building'; the model an activation replaced
-- is 'retired' and keeps its vectors until it is dropped.
--
-- Times are Unix nanoseconds (UTC). Three counters per model:
--   embedded_seq  the archive seq through which every turn is embedded (the
--                 pipeline's watermark), advanced in the transaction that
--                 writes the vectors;
--   last_seq      the last change number given to a row of vectors;
--   synced_seq    the change number through which vectors were pushed to an
--                 external index (ChromaDB), so that missed ones can be
--                 pushed later.
CREATE TABLE vector_models (
	model        TEXT    PRIMARY KEY,
	dim          INTEGER NOT NULL CHECK (dim > 0),
	state        TEXT    NOT NULL CHECK (state IN ('active', 'building', 'retired')),
	created_at   INTEGER NOT NULL,
	activated_at INTEGER,
	embedded_seq INTEGER NOT NULL DEFAULT 0,
	last_seq     INTEGER NOT NULL DEFAULT 0,
	synced_seq   INTEGER NOT NULL DEFAULT 0
) STRICT;

-- At most one active model.
CREATE UNIQUE INDEX vector_models_active ON vector_models (state) WHERE state = 'active';

-- Every vector of every model, the source the in-memory index loads from and
-- an external index is rebuilt from. vec is the vector as written, dim
-- little-endian float32 values (not normalised). ts is Unix nanoseconds, NULL
-- for a zero time. seq is the model's change number: each upsert gives the
-- row the next one (vector_models.last_seq), so rows with seq > synced_seq
-- are the ones an external index has not seen.
--
-- A rowid table: at 2 KB a row (512 dimensions) the rows are too large for
-- WITHOUT ROWID.
CREATE TABLE vectors (
	model     TEXT    NOT NULL REFERENCES vector_models (model),
	id        TEXT    NOT NULL,
	kind      TEXT    NOT NULL,
	namespace TEXT    NOT NULL,
	ts        INTEGER,
	dim       INTEGER NOT NULL,
	vec       BLOB    NOT NULL CHECK (length(vec) = 4 * dim),
	seq       INTEGER NOT NULL,
	PRIMARY KEY (model, id)
) STRICT;

CREATE UNIQUE INDEX vectors_model_seq ON vectors (model, seq);
