package config

import (
	"path/filepath"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/fspath"
)

// CheckNewVault refuses root (absolute, cleaned) as a new vault: ECONFLICT
// when it is a vault already, lies inside one, or holds one.
func (c Config) CheckNewVault(root string) error {
	for _, v := range c.Vaults {
		old := filepath.Clean(v.Path)
		switch {
		case old == root:
			return engram.Errorf(engram.ECONFLICT, "%s is already a vault (namespace %s)", root, v.NamespaceOrDefault())
		case fspath.Within(old, root):
			return engram.Errorf(engram.ECONFLICT, "%s is inside the vault %s: its notes are indexed already", root, old)
		case fspath.Within(root, old):
			return engram.Errorf(engram.ECONFLICT, "%s holds the vault %s: its notes would be indexed twice", root, old)
		}
	}
	return nil
}

// VaultPath names a file of a vault by its full path as the vault's root
// and the file's slash-separated path in it, within the vault root when
// root is set. A path in no vault comes back as it was.
func (c Config) VaultPath(path, root string) (doc, vaultRoot string) {
	for _, v := range c.Vaults {
		vr := filepath.Clean(v.Path)
		if fspath.Within(vr, filepath.Clean(path)) && (root == "" || root == vr) {
			rel, _ := filepath.Rel(vr, filepath.Clean(path))
			return filepath.ToSlash(rel), vr
		}
	}
	return path, root
}

// PendingVault is why a vault config.toml records is not served: the
// running server read config.toml before it was added.
const PendingVault = "recorded in config.toml after engram serve started; the server reads config.toml when it starts: restart it to index and serve this vault"

// WithPending adds to the vaults a running server serves those c records
// that it does not (added after it started), with Pending set.
func (c Config) WithPending(served []engram.VaultStatus) []engram.VaultStatus {
	have := map[string]bool{}
	for _, v := range served {
		have[filepath.Clean(v.Path)] = true
	}
	for _, v := range c.Vaults {
		if !have[filepath.Clean(v.Path)] {
			served = append(served, engram.VaultStatus{Path: v.Path, Namespace: v.NamespaceOrDefault(), Pending: PendingVault})
		}
	}
	return served
}

// NamespaceOrDefault is the vault's namespace, "default" when unset.
func (v VaultConfig) NamespaceOrDefault() string {
	if v.Namespace == "" {
		return engram.DefaultNamespace
	}
	return v.Namespace
}
