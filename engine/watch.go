package engine

import (
	"context"
	"path/filepath"

	"github.com/engram-dev/engram/vault"
)

// StartVaultWatcher watches every configured vault when watch_vaults is on
// (vault.Watch), syncing a vault soon after its files change; nil when
// there is none. Close stops it.
func (e *Engine) StartVaultWatcher() (*vault.Watcher, error) {
	if len(e.cfg.Vaults) == 0 || !e.cfg.WatchVaults {
		return nil, nil
	}
	roots := make([]string, len(e.cfg.Vaults))
	for i, v := range e.cfg.Vaults {
		roots[i] = filepath.Clean(v.Path)
	}
	return vault.Watch(roots, e.watchedSync, e.logger)
}

// watchedSync syncs the vault at root after the watcher saw it change.
func (e *Engine) watchedSync(ctx context.Context, root string) {
	reports, err := e.syncVaults(ctx, root)
	if err != nil {
		e.logger.Warn("vault watch: sync failed; the reconcile job retries", "vault", root, "err", err)
		return
	}
	for _, r := range reports {
		e.logger.Info("vault synced after a change", "vault", r.Vault, "indexed", len(r.Indexed), "removed", len(r.Removed), "took_ms", r.TookMS)
	}
}
