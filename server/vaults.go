package server

import (
	"context"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
)

// SyncVaults syncs through be the vault at root, or every vault when root
// is "". A running server that does not know a vault config.toml records
// (added after the server read the file) is named as the reason: restart
// it.
func SyncVaults(ctx context.Context, be Backend, cfg Config, root string) ([]engram.VaultSyncReport, error) {
	reports, err := be.SyncVaults(ctx, root)
	if _, remote := be.(*httpapi.Client); remote && engram.ErrorCode(err) == engram.ENOTFOUND && cfg.HasVault(root) {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s was added after `engram serve` started: restart the server to sync it", root)
	}
	return reports, err
}

// Vaults lists be's vaults; through a running server, the vaults
// config.toml records that it does not serve yet (added after it started)
// come too, with Pending set.
func Vaults(ctx context.Context, be Backend, cfg Config) ([]engram.VaultStatus, error) {
	vs, err := be.Vaults(ctx)
	if _, remote := be.(*httpapi.Client); remote && err == nil {
		vs = cfg.WithPending(vs)
	}
	return vs, err
}
