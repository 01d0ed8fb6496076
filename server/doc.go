// Package server is what `engram serve` runs: an engine (package engine)
// with its transports on top, the HTTP API (package httpapi) with the MCP
// tools at /mcp (package mcp) and the web view at /ui/ (package ui), the
// scheduled jobs and the vault watcher running. The benchmarks and the tests
// start a private one the same way (Start).
//
// It owns the settings of config.toml that only a server reads (addr,
// token, allowed_hosts, allowed_origins, max_body_bytes: Config; the keys
// and ENGRAM_* variables are those the engine read before), and the home's
// serve.json, by which CLI commands find the server that holds the home's
// lock and talk to it instead (Discover, OpenBackend), or refuse to run
// beside it when they need the home to themselves (CheckNotServed).
//
// The work of the CLI's commands that either go through that server or
// run on the home opened here is here too, so that cmd/engram is flags and
// printing: the re-embed and the vector reindex (Reembed, ReindexVectors),
// the Claude Code hook (RunHook), MCP on stdio (ServeMCPIO), the doctor
// (Doctor), the vaults (AddVault, Vaults, SyncVaults, DocGraph, VaultHook),
// and the operations that need the home to themselves (Rebuild, Restore,
// Repair).
package server
