package engram

import "context"

// Graph depths of GET /v1/graph.
const (
	DefaultGraphDepth = 2
	MaxGraphDepth     = 6
)

// VaultAdmin lists and syncs the configured vaults (the Markdown folders of
// `[[vaults]]` in config.toml). The engine (package engine) implements it, and httpapi.Client through a running server.
type VaultAdmin interface {
	// Vaults lists the configured vaults with their indexed counts.
	Vaults(ctx context.Context) ([]VaultStatus, error)
	// SyncVaults syncs every configured vault (vault "") or the one whose
	// root is vault, and returns a report per vault. A vault that failed
	// has its Error set; the error returned is for the request as a whole:
	// ENOTFOUND when vault is not configured, or ctx's error.
	SyncVaults(ctx context.Context, vault string) ([]VaultSyncReport, error)
}

// VaultStatus is a configured vault as GET /v1/vaults lists it.
type VaultStatus struct {
	Path            string `json:"path"`
	Namespace       string `json:"namespace"`
	Docs            int    `json:"docs"`
	Chunks          int    `json:"chunks"`
	UnresolvedLinks int    `json:"unresolved_links"`
	// Pending, set by `engram vault list` for a vault config.toml records
	// but the running server does not serve yet (added after it started),
	// says so; the counts are then 0.
	Pending string `json:"pending,omitempty"`
}

// VaultSyncReport is what a sync of one vault did.
type VaultSyncReport struct {
	Vault     string        `json:"vault"`
	Namespace string        `json:"namespace"`
	Files     int           `json:"files"`     // Markdown files in the folder
	Unchanged int           `json:"unchanged"` // left as they were indexed
	Indexed   []string      `json:"indexed"`   // new or changed files
	Removed   []string      `json:"removed"`   // deleted or renamed away
	Skipped   []SkippedFile `json:"skipped"`   // could not be read or parsed
	// UnresolvedLinks counts the vault's links to no document after the
	// sync; Unresolved lists them.
	UnresolvedLinks int       `json:"unresolved_links"`
	Unresolved      []DocLink `json:"unresolved"`
	TookMS          float64   `json:"took_ms"`
	// Error says why the sync of this vault failed; what it indexed
	// before stays indexed.
	Error string `json:"error,omitempty"`
}

// SkippedFile is a file a sync left out, with the reason.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
