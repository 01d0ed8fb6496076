package vault_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchVault writes n Markdown files of an engineering vault (ADRs linking
// rules, incidents linking ADRs), each about 2 KB in a few sections.
func benchVault(tb testing.TB, n int) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "vault")
	for i := range n {
		dir := []string{"adrs", "incidents", "rules", "notes"}[i%4]
		p := filepath.Join(root, "docs", dir, fmt.Sprintf("%04d-doc.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		body := fmt.Sprintf(`---
title: Document %d
tags: [bench, %s]
date: 2026-03-%02d
---
# Document %d

## Context

Service %d talks to the billing database through the pool on port %d. The
error code E%05d appeared during the load test of week %d; see [[%04d-doc]] and
[[%04d-doc|the rule]] for the background.

## Decision

We keep connection pooling in front of Postgres and cap each service at %d
connections. Retries back off exponentially from 100 ms to 5 s.

`+"```"+`yaml
pool:
  size: %d
  timeout: 5s
`+"```"+`

## Consequences

Deploys must run the migration checks first. On-call reads the runbook
before restarting the pooler; restarts drop in-flight transactions.
`, i, dir, 1+i%28, i, i%97, 6000+i%1000, i, i%52, (i+1)%n, (i+4)%n, 10+i%40, 10+i%40)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// BenchmarkSync measures `engram vault sync` over 1,000 files with the
// builtin embedder into a real palace: a full index, a re-index after one
// file changed, and a sync with every file unchanged.
//
//	go test -run x -bench Sync -benchtime 5x ./vault/
func BenchmarkSync(b *testing.B) {
	const n = 1000
	ctx := context.Background()
	root := benchVault(b, n)
	b.Run("full-1000", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s, _, _ := mustSyncer(b)
			b.StartTimer()
			rep, err := s.Sync(ctx, root, "bench")
			if err != nil || len(rep.Indexed) != n {
				b.Fatalf("%+v %v", rep.Indexed, err)
			}
		}
	})
	s, _, _ := mustSyncer(b)
	if _, err := s.Sync(ctx, root, "bench"); err != nil {
		b.Fatal(err)
	}
	b.Run("one-changed", func(b *testing.B) {
		p := filepath.Join(root, "docs", "adrs", "0000-doc.md")
		orig, _ := os.ReadFile(p)
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			if err := os.WriteFile(p, append(orig, fmt.Sprintf("\nRevision %d.\n", i)...), 0o644); err != nil {
				b.Fatal(err)
			}
			os.Chtimes(p, time.Now(), time.Now().Add(time.Duration(i)*time.Second))
			b.StartTimer()
			rep, err := s.Sync(ctx, root, "bench")
			if err != nil || len(rep.Indexed) != 1 {
				b.Fatalf("%+v %v", rep, err)
			}
		}
	})
	b.Run("unchanged-1000", func(b *testing.B) {
		for b.Loop() {
			rep, err := s.Sync(ctx, root, "bench")
			if err != nil || len(rep.Indexed) != 0 || rep.Unchanged != n {
				b.Fatalf("%+v %v", rep, err)
			}
		}
	})
}
