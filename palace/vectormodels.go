package palace

import (
	"context"
	"database/sql"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The states of a vector model.
const (
	// ModelActive is the model recall searches; at most one is active.
	ModelActive = "active"
	// ModelBuilding is a model being filled (a re-embed); DB.Vectors
	// creates new models in this state.
	ModelBuilding = "building"
	// ModelRetired is a model an activation replaced. It keeps its vectors
	// until DropModel, so switching back costs no re-embed.
	ModelRetired = "retired"
)

// ActiveModel returns the active vector model and its dimension; ok is
// false when no model is active (a new palace).
func (db *DB) ActiveModel(ctx context.Context) (model string, dim int, ok bool, err error) {
	err = db.View(ctx, func(tx *sql.Tx) (err error) {
		ok, err = sqlrow.One(tx.QueryRowContext(ctx, `SELECT model, dim FROM vector_models WHERE state = ?`, ModelActive), &model, &dim)
		return err
	})
	if err != nil {
		return "", 0, false, vecErr("active vector model", err)
	}
	return model, dim, ok, nil
}

// ActivateModel makes model the active one and, in the same transaction,
// retires the model that was active, which keeps its vectors until
// DropModel. Activating the active model does nothing.
//
// The retired model's in-memory index stays loaded, so that recall can
// go on querying it until the caller has switched to the new model; the
// caller then releases it (vecindex.Index.Unload).
//
// Errors: ENOTFOUND for a model the palace does not hold.
func (db *DB) ActivateModel(ctx context.Context, model string) error {
	err := db.Update(ctx, func(tx *sql.Tx) error {
		if err := modelExists(ctx, tx, model); err != nil {
			return err
		}
		var prev string
		if _, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT model FROM vector_models WHERE state = ?`, ModelActive), &prev); err != nil {
			return err
		}
		if prev == model {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE vector_models SET state = ? WHERE state = ?`, ModelRetired, ModelActive); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE vector_models SET state = ?, activated_at = ? WHERE model = ?`,
			ModelActive, db.now().UnixNano(), model)
		return err
	})
	return vecErr("activate vector model "+model, err)
}

// SetModelState sets the state of model. ModelActive is ActivateModel;
// ModelBuilding and ModelRetired leave the other models as they are (so
// retiring the active model leaves none active). No in-memory matrix is
// loaded or released (see vecindex.Index.Unload).
//
// Errors: EINVALID for an unknown state; ENOTFOUND for a model the palace
// does not hold.
func (db *DB) SetModelState(ctx context.Context, model, state string) error {
	switch state {
	case ModelActive:
		return db.ActivateModel(ctx, model)
	case ModelBuilding, ModelRetired:
	default:
		return engram.Errorf(engram.EINVALID, "palace: unknown vector model state %q (want %s, %s or %s)",
			state, ModelActive, ModelBuilding, ModelRetired)
	}
	err := db.Update(ctx, func(tx *sql.Tx) error {
		if err := modelExists(ctx, tx, model); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE vector_models SET state = ? WHERE model = ?`, state, model)
		return err
	})
	return vecErr("set state of vector model "+model, err)
}

// DropModel deletes model and all its vectors, and releases the in-memory
// index attached to its store. The VectorStore of the model (and an index
// on it) fails with ENOTFOUND from then on; DB.Vectors creates the model
// afresh.
//
// Errors: ENOTFOUND for a model the palace does not hold; ECONFLICT for the
// active model (activate another, or retire it, first).
func (db *DB) DropModel(ctx context.Context, model string) error {
	// Hold the cache so that no DB.Vectors hands out the index meanwhile,
	// and the index's writer lock so that no write of it interleaves.
	db.vectors.mu.Lock()
	defer db.vectors.mu.Unlock()
	v := db.vectors.byModel[model]
	if v != nil {
		v.wmu.Lock()
		defer v.wmu.Unlock()
	}
	err := db.Update(ctx, func(tx *sql.Tx) error {
		var state string
		found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT state FROM vector_models WHERE model = ?`, model), &state)
		if err == nil && !found {
			err = errNoModel(model)
		}
		if err != nil {
			return err
		}
		if state == ModelActive {
			return engram.Errorf(engram.ECONFLICT, "palace: vector model %q is active; activate another model or retire it before dropping it", model)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE model = ?`, model); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM vector_models WHERE model = ?`, model)
		return err
	})
	if err != nil {
		return vecErr("drop vector model "+model, err)
	}
	if v != nil {
		v.dropped.Store(true)
		v.release()
		delete(db.vectors.byModel, model)
	}
	return nil
}

func modelExists(ctx context.Context, tx *sql.Tx, model string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM vector_models WHERE model = ?`, model).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return errNoModel(model)
	}
	return nil
}

func errNoModel(model string) error {
	return engram.Errorf(engram.ENOTFOUND, "palace: no vector model %q", model)
}
