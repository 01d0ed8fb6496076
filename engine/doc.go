// Package engine opens an engram home in one process and owns its parts:
// the L0 archive (which takes the home's lock), the palace, the indexer
// between them, the vector side (embedder, vector index, re-embeds), recall,
// the layer workers and the other scheduled jobs, and the Markdown vaults.
// Open and Close bracket them; the Engine implements every service of the
// root package, so `engram serve` (package server, which puts the HTTP API,
// the MCP tools and the web view on top), the CLI when no server owns the
// home and the tests all run the same code. The engine has no transport:
// it imports none of httpapi, mcp and ui.
//
// Beside the engine are the operations on a home: Backup and Restore (a
// consistent copy while serving, checked file by file), Doctor and
// DoctorHome (every store checked against the others and its dependencies),
// ReindexVectors (the vector index rebuilt from SQLite), Rebuild (every
// index rebuilt from the archive and the vaults into a new palace, swapped
// in with one rename), Reembed, SyncVaults, and Config (defaults, then
// config.toml, then ENGRAM_*).
//
// The layer workers are wired in one place (layerJobs), for the scheduler
// and for a rebuild; so is the vault syncer (newSyncer).
//
// # Caveats
//
// One process owns a home: Open returns ELOCKED while another holds it (a
// CLI command finds the running server through serve.json instead). A
// vault added to config.toml while a server runs is synced only after the
// server restarts. Rebuild needs the home to itself.
package engine
