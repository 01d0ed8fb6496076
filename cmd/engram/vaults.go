package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/vault"
)

// jobVaultReconcile is the job that syncs every configured vault: what a
// git hook or a missed event did not.
const jobVaultReconcile = "vault-reconcile"

// vaultNamespace is a vault's namespace, "default" when unset.
func (v VaultConfig) namespace() string {
	if v.Namespace == "" {
		return engram.DefaultNamespace
	}
	return v.Namespace
}

// SyncVaults syncs the configured vaults (only the one at path when path is
// set; ENOTFOUND if it is not configured) and returns a report per vault.
// The chunks are embedded with the active vector model; a vault not yet
// embedded with that model (after a re-embed, say) is indexed again whole.
func (e *engine) SyncVaults(ctx context.Context, path string) ([]vault.SyncReport, error) {
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = filepath.Clean(abs)
	}
	e.vaultMu.Lock() // one sync at a time: the job, a hook and the CLI may race
	defer e.vaultMu.Unlock()
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	store := palace.VaultIndex{DB: e.palace}
	syncer := &vault.Syncer{Store: store, Logger: e.logger.With("component", "vault")}
	model := ""
	if side != nil {
		store.Vectors = side.store
		syncer.Store, syncer.Embedder, model = store, side.vx.Embedder(), side.model
	}
	var reports []vault.SyncReport
	var errs []error
	found := path == ""
	for _, v := range e.cfg.Vaults {
		root := filepath.Clean(v.Path)
		if path != "" && root != path {
			continue
		}
		found = true
		marker := "vault-model:" + model + ":" + root
		if model != "" {
			done, err := e.palace.WorkerSeq(ctx, marker)
			if err != nil {
				return reports, err
			}
			syncer.Full = done == 0
		}
		rep, err := syncer.Sync(ctx, root, v.namespace())
		if err != nil {
			errs = append(errs, fmt.Errorf("vault %s: %w", root, err))
			continue
		}
		if model != "" && syncer.Full {
			if err := e.palace.SetWorkerSeq(ctx, marker, 1); err != nil {
				return reports, err
			}
		}
		reports = append(reports, rep)
	}
	if !found {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s is not a configured vault: run `engram vault add %s` first", path, path)
	}
	return reports, errors.Join(errs...)
}

// reconcileVaults is the vault-reconcile job.
func (e *engine) reconcileVaults(ctx context.Context) error {
	reports, err := e.SyncVaults(ctx, "")
	for _, r := range reports {
		if len(r.Indexed) > 0 || len(r.Removed) > 0 || len(r.Skipped) > 0 {
			e.logger.Info("vault synced", "vault", r.Vault, "indexed", len(r.Indexed), "removed", len(r.Removed),
				"skipped", len(r.Skipped), "unresolved_links", r.Unresolved, "took_ms", r.TookMS)
		}
	}
	return err
}
