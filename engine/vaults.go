package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/vault"
)

// syncVaults syncs the configured vaults (only the one at path when path is
// set; ENOTFOUND if it is not configured) and returns a report per vault.
// The chunks are embedded with the active vector model; a vault not yet
// embedded with that model (after a re-embed, say) is indexed again whole.
func (e *Engine) syncVaults(ctx context.Context, path string) ([]vault.SyncReport, error) {
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = filepath.Clean(abs)
	}
	// One sync at a time: the job, a hook, the watcher and the CLI may race.
	var reports []vault.SyncReport
	err := e.work.Serial(ctx, serialVaults, func() error {
		var err error
		reports, err = e.syncVaultsNow(ctx, path)
		return err
	})
	return reports, err
}

// serialVaults is the name of every run that syncs vaults
// (work.Scheduler.Serial).
const serialVaults = "vaults"

// syncVaultsNow is syncVaults, the other syncs excluded.
func (e *Engine) syncVaultsNow(ctx context.Context, path string) ([]vault.SyncReport, error) {
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	syncer, model := e.newSyncer(nil, nil), ""
	if side != nil {
		syncer, model = e.newSyncer(side.store, side.vx.Embedder()), side.model
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
		marker := vaultMarker(model, root)
		if model != "" {
			done, err := e.palace.WorkerSeq(ctx, marker)
			if err != nil {
				return reports, err
			}
			syncer.Full = done == 0
		}
		rep, err := syncer.Sync(ctx, root, v.NamespaceOrDefault())
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

// vaultStore is the vaults' tables of the palace, as search and the
// listings read them.
func (e *Engine) vaultStore() vault.Store { return e.palace.Vault(nil) }

// newSyncer returns the syncer of the configured vaults into the palace,
// which embeds the chunks with emb into vectors when vectors is set (and
// leaves them to keyword search otherwise): the one place a vault.Syncer
// is made, for a sync, a rebuild and a reindex alike.
func (e *Engine) newSyncer(vectors vectorRows, emb engram.Embedder) *vault.Syncer {
	s := &vault.Syncer{Store: e.vaultStore(), Logger: e.logger.With("component", "vault")}
	if vectors != nil {
		s.Store, s.Embedder = e.palace.Vault(vectors), emb
	}
	return s
}

// vaultMarker is the worker key that records that the vault at root is
// embedded with model: a vault without it is indexed again whole.
func vaultMarker(model, root string) string { return vaultMarkerPrefix(model) + root }

func vaultMarkerPrefix(model string) string { return "vault-model:" + model + ":" }

// reconcileVaults is the vault-reconcile job.
func (e *Engine) reconcileVaults(ctx context.Context) error {
	reports, err := e.syncVaults(ctx, "")
	for _, r := range reports {
		if len(r.Indexed) > 0 || len(r.Removed) > 0 || len(r.Skipped) > 0 {
			e.logger.Info("vault synced", "vault", r.Vault, "indexed", len(r.Indexed), "removed", len(r.Removed),
				"skipped", len(r.Skipped), "unresolved_links", r.Unresolved, "took_ms", r.TookMS)
		}
	}
	return err
}

// Vaults implements engram.VaultAdmin.
func (e *Engine) Vaults(ctx context.Context) ([]engram.VaultStatus, error) {
	out := make([]engram.VaultStatus, 0, len(e.cfg.Vaults))
	for _, v := range e.cfg.Vaults {
		root := filepath.Clean(v.Path)
		docs, err := e.vaultStore().Docs(ctx, root)
		if err != nil {
			return nil, err
		}
		un, err := e.vaultStore().UnresolvedLinks(ctx, root)
		if err != nil {
			return nil, err
		}
		st := engram.VaultStatus{Path: root, Namespace: v.NamespaceOrDefault(), Docs: len(docs), UnresolvedLinks: len(un)}
		for _, d := range docs {
			st.Chunks += d.Chunks
		}
		out = append(out, st)
	}
	return out, nil
}

// SyncVaults implements engram.VaultAdmin: one engine sync per vault, so
// that a vault's failure lands in its own report.
func (e *Engine) SyncVaults(ctx context.Context, root string) ([]engram.VaultSyncReport, error) {
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		root = filepath.Clean(abs)
		if !e.cfg.HasVault(root) {
			return nil, engram.Errorf(engram.ENOTFOUND, "%s is not a configured vault: run `engram vault add %s` first", root, root)
		}
	}
	var out []engram.VaultSyncReport
	for _, v := range e.cfg.Vaults {
		vr := filepath.Clean(v.Path)
		if root != "" && vr != root {
			continue
		}
		reps, err := e.syncVaults(ctx, vr)
		if err != nil && ctx.Err() != nil {
			return out, ctx.Err()
		}
		r := engram.VaultSyncReport{Vault: vr, Namespace: v.NamespaceOrDefault(), Indexed: []string{}, Removed: []string{}, Skipped: []engram.SkippedFile{}}
		if len(reps) > 0 {
			rep := reps[0]
			r.Files, r.Unchanged, r.Indexed, r.Removed, r.TookMS = rep.Files, rep.Unchanged, nonNil(rep.Indexed), nonNil(rep.Removed), rep.TookMS
			for _, s := range rep.Skipped {
				r.Skipped = append(r.Skipped, engram.SkippedFile{Path: s.Path, Reason: s.Reason})
			}
		}
		if err != nil {
			r.Error = engram.ErrorText(err)
			e.logger.Warn("vault sync failed", "vault", vr, "err", err)
		}
		// The count after this sync, also when it changed nothing (the
		// syncer resolves links again only after a change).
		if r.Unresolved, err = e.vaultStore().UnresolvedLinks(ctx, vr); err != nil {
			return out, err
		}
		r.UnresolvedLinks = len(r.Unresolved)
		out = append(out, r)
	}
	return out, nil
}

// DocGraph implements engram.VaultService. doc is a path, a title or an
// alias, or a wiki-link target resolved as a [[link]] in the vault resolves
// (vault.Resolver: the file name without its extension, a trailing part of
// the path); "[[name#heading|text]]" as pasted from a note works too.
// ENOTFOUND for an unknown document; EINVALID for a name that resolves to
// several documents.
func (e *Engine) DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error) {
	g, err := e.vaultStore().DocGraph(ctx, vault, doc, depth)
	if engram.ErrorCode(err) != engram.ENOTFOUND {
		return g, err
	}
	root, path, rerr := e.resolveDoc(ctx, vault, linkTarget(doc))
	if rerr != nil || path == "" {
		if rerr != nil {
			return g, rerr
		}
		return g, err
	}
	return e.vaultStore().DocGraph(ctx, root, path, depth)
}

// linkTarget is the target of a wiki link as written or pasted:
// "[[a#b|c]]" is "a".
func linkTarget(s string) string {
	s = strings.TrimSpace(s)
	if t, ok := strings.CutPrefix(s, "[["); ok {
		s = strings.TrimSuffix(t, "]]")
	}
	if i := strings.IndexAny(s, "#|"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// resolveDoc resolves target in each indexed vault (or in vault) as a
// link in a note at its root would, and returns the one document it names
// ("" when none does).
func (e *Engine) resolveDoc(ctx context.Context, only, target string) (root, path string, err error) {
	if target == "" {
		return "", "", nil
	}
	docs, err := e.vaultStore().Docs(ctx, only)
	if err != nil {
		return "", "", err
	}
	byVault := map[string][]vault.DocRef{}
	var roots []string
	for _, d := range docs {
		if _, ok := byVault[d.Vault]; !ok {
			roots = append(roots, d.Vault)
		}
		byVault[d.Vault] = append(byVault[d.Vault], vault.DocRef{Path: d.Path, Title: d.Title, Aliases: d.Aliases})
	}
	var found []string
	for _, r := range roots {
		p, ok := vault.NewResolver(byVault[r]).Resolve("", target)
		switch {
		case ok:
			root, path = r, p
			found = append(found, r+": "+p)
		case p != "":
			return "", "", engram.FieldError("doc", "%q names several documents in the vault %s (%s, ...): give its path", target, r, p)
		}
	}
	if len(found) > 1 {
		return "", "", engram.FieldError("doc", "%q names documents in %d vaults (%s): choose one with vault", target, len(found), strings.Join(found, "; "))
	}
	return root, path, nil
}
