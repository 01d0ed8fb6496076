package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/vault"
)

// SyncVaults syncs the vault at root of cfg's home, or every vault when
// root is "" (none, without opening the home, when config.toml records
// none): through the running server when one answers, else on the home
// opened here with logger (OpenBackend). A running server that does not
// know a vault config.toml records (added after the server read the file)
// is named as the reason: restart it.
func SyncVaults(ctx context.Context, cfg Config, root string, logger *slog.Logger) ([]engram.VaultSyncReport, error) {
	if root == "" && len(cfg.Vaults) == 0 {
		return nil, nil
	}
	be, err := OpenBackend(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	reports, err := be.SyncVaults(ctx, root)
	if _, remote := be.(*httpapi.Client); remote && engram.ErrorCode(err) == engram.ENOTFOUND && cfg.HasVault(root) {
		return nil, engram.Errorf(engram.ENOTFOUND, "%s was added after `engram serve` started: restart the server to sync it", root)
	}
	return reports, err
}

// Vaults lists the vaults of cfg's home: through the running server when
// one answers, with the vaults config.toml records that it does not serve
// yet (added after it started, Pending set); else on the home opened here
// with logger, unless it configures none.
func Vaults(ctx context.Context, cfg Config, logger *slog.Logger) ([]engram.VaultStatus, error) {
	var be Backend
	if c := Discover(ctx, cfg); c != nil {
		be = c
	} else if len(cfg.Vaults) == 0 {
		return nil, nil
	} else {
		var err error
		if be, err = OpenBackend(ctx, cfg, logger); err != nil {
			return nil, err
		}
	}
	defer be.Close()
	vs, err := be.Vaults(ctx)
	if _, remote := be.(*httpapi.Client); remote && err == nil {
		vs = cfg.WithPending(vs)
	}
	return vs, err
}

// AddedVault is what AddVault did.
type AddedVault struct {
	Root   string // the vault's folder, absolute
	Config string // the path of the config.toml that records it
	// Served is set when a server answers for the home: it reads
	// config.toml only when it starts, so it syncs the vault once
	// restarted, and nothing was synced here.
	Served  bool
	Reports []engram.VaultSyncReport // the sync here
}

// AddVault records the folder dir as a vault of cfg's home, its documents
// in namespace (engine.AddVault; getenv as LoadConfig's), then, unless a
// server answers for the home, syncs it on the home opened here with the
// configuration load returns, read again now that config.toml names the
// vault, and the logger newLogger makes of it. Root and Config are set
// once the vault is recorded, even when the sync then fails.
func AddVault(ctx context.Context, cfg Config, dir, namespace string, getenv func(string) string,
	load func() (Config, error), newLogger func(Config) *slog.Logger) (AddedVault, error) {
	var a AddedVault
	var err error
	if a.Root, a.Config, err = engine.AddVault(cfg.Config, dir, namespace, getenv); err != nil {
		return AddedVault{}, err
	}
	if Discover(ctx, cfg) != nil {
		a.Served = true
		return a, nil
	}
	if cfg, err = load(); err != nil {
		return a, err
	}
	e, err := engine.Open(ctx, cfg.Config, newLogger(cfg))
	if err != nil {
		return a, fmt.Errorf("the vault is recorded, but could not be indexed now (run `engram vault sync %s` later): %w", a.Root, err)
	}
	defer e.Close()
	a.Reports, err = e.SyncVaults(ctx, a.Root)
	return a, err
}

// DocGraph returns through be the graph of doc, depth links deep, in the
// vault at dir ("": any vault; made absolute). doc is a path in the vault,
// a title, an alias or a wiki-link name, or a full path, which names its
// vault too (config.Config.VaultPath). The graph's lists are empty, not
// nil, as the HTTP API writes them.
func DocGraph(ctx context.Context, be Backend, cfg Config, dir, doc string, depth int) (engram.DocGraph, error) {
	root := ""
	if dir != "" {
		var err error
		if root, err = filepath.Abs(dir); err != nil {
			return engram.DocGraph{}, err
		}
	}
	if filepath.IsAbs(doc) {
		doc, root = cfg.VaultPath(doc, root)
	}
	g, err := be.DocGraph(ctx, root, doc, depth)
	g.Linked, g.Backlinks, g.Unresolved = orEmpty(g.Linked), orEmpty(g.Backlinks), orEmpty(g.Unresolved)
	return g, err
}

// orEmpty is s, or an empty slice for nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// VaultHook installs, in the git post-commit hook of the repository that
// holds the vault at dir, the block that syncs the vault after each commit
// with this process's binary on cfg's home (vault.InstallHook), or, when
// install is false, takes the block out (vault.UninstallHook); what it did
// is written to w. Installing refuses (ENOTFOUND) a folder config.toml
// records as no vault; taking a block out does not.
func VaultHook(ctx context.Context, cfg Config, dir string, install bool, w io.Writer) error {
	root, err := config.VaultDir(dir)
	if err != nil {
		return err
	}
	hooks, err := vault.GitHooksDir(ctx, root)
	if err != nil {
		return err
	}
	if !install {
		return vault.UninstallHook(hooks, root, w)
	}
	if !cfg.HasVault(root) {
		return engram.Errorf(engram.ENOTFOUND, "%s is not a configured vault: run `engram vault add %s` first", root, root)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the engram binary: %w", err)
	}
	return vault.InstallHook(hooks, vault.HookBlock(exe, cfg.Home, root), root, w)
}
