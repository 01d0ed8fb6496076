// Package bench measures engram the way a client sees it: each benchmark
// starts a private engram in its own home (server.Start, exactly as
// `engram serve`), talks to it only through its HTTP API (httpapi.Client),
// and reports what it measured. `engram bench NAME` runs them.
//
// LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents",
// ACL 2024) measures retrieval: RunLocomo ingests every conversation,
// asks every question of categories 1-4 in each recall mode, and scores the
// answers against the questions' evidence turns.
package bench
