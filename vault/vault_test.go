package vault

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testVault is testdata/vault, the test vault shared by every package's
// tests: a platform team's handbook, 12 Markdown documents, a binary
// file named .md and three files Scan never reads.
//
//	README.md                                   root note: a table, [[ADR-0007]] by alias, a Markdown link
//	                                            by path from the root, [[db-migrations|...]] by base name
//	docs/adrs/0003-use-mysql-for-billing.md     superseded ADR; tags and aliases as strings; no type (from folder)
//	docs/adrs/0007-use-postgres.md              the ADR: full front matter (title, aliases, tags, date, type);
//	                                            links [[rules/db-migrations]] (path suffix) and
//	                                            ../rules/connection-pools.md (relative); [[x]] in code is no link
//	docs/adrs/0008-缓存策略.md                   Chinese ADR: RFC 3339 date with +08:00, "#缓存" tag, a long
//	                                            CJK paragraph, Python code with [[...]] inside, inline #tag
//	docs/incidents/2026-03-14-billing-outage.md the incident: [[ADR-0007 Use Postgres for billing|the ADR]] (title),
//	                                            [[0007-use-postgres#Consequences]], a relative Markdown link with
//	                                            #anchor, an attachment embed, the broken [[does-not-exist]]
//	docs/incidents/2026-04-02-決済タイムアウト.md Japanese incident: date 2026年4月2日, a URL-encoded Markdown
//	                                            link to the Chinese ADR
//	docs/rules/connection-pools.md              the only file with port 6432 and error code E4021; links back
//	                                            to the ADR and the incident, on to the runbook
//	docs/rules/db-migrations.md                 rule; a same-folder Markdown link with #anchor
//	docs/rules/on-call/escalation.md            a subfolder note linking by base name; type from "rules"
//	docs/runbooks/pgbouncer-restart.md          runbook; [[connection-pools#Errors]]
//	notes/tricky-front-matter.md                BOM, CRLF, tags as one string with "#", quoted date
//	                                            2026/03/01, "Type" key, nested and empty values, a --- rule
//	notes/broken-front-matter.md                invalid YAML: a warning, the body still parsed
//	attachments/corrupt.md                      binary (PNG bytes, NULs): skipped by Scan
//	.obsidian/app.json, workspace.json          Obsidian settings: in a dot folder, not walked
//	.gitattributes                              "* -text" keeps CRLF and BOM as written
//
// The chain incident -> ADR -> rules resolves; the identifiers 6432 and E4021
// appear in connection-pools.md only.
const testVault = "../testdata/vault"

// loadVault scans and parses the test vault and builds its resolver.
func loadVault(tb testing.TB, opts Options) (map[string]Doc, *Resolver, []Skipped) {
	tb.Helper()
	ctx := context.Background()
	infos, skipped, err := Scan(ctx, testVault)
	if err != nil {
		tb.Fatal(err)
	}
	docs := map[string]Doc{}
	var refs []DocRef
	for _, fi := range infos {
		d, err := ParseFile(ctx, testVault, fi.Path, opts)
		if err != nil {
			tb.Fatalf("%s: %v", fi.Path, err)
		}
		content, err := os.ReadFile(filepath.Join(testVault, filepath.FromSlash(fi.Path)))
		if err != nil {
			tb.Fatal(err)
		}
		if err := checkDoc(content, d, opts); err != nil {
			tb.Fatalf("%s: %v", fi.Path, err)
		}
		if d.Hash != fi.Hash {
			tb.Errorf("%s: ParseFile hash %s, Scan hash %s", fi.Path, d.Hash, fi.Hash)
		}
		docs[d.Path] = d
		refs = append(refs, d.Ref())
	}
	return docs, NewResolver(refs), skipped
}

func TestVault(t *testing.T) {
	docs, r, skipped := loadVault(t, Options{})
	if len(docs) != 12 {
		t.Errorf("%d docs, want 12", len(docs))
	}
	if want := []Skipped{{Path: "attachments/corrupt.md", Reason: ReasonBinary}}; !slices.Equal(skipped, want) {
		t.Errorf("skipped %+v, want %+v", skipped, want)
	}
	for p := range docs {
		if strings.HasPrefix(p, ".") {
			t.Errorf("dot folder walked: %s", p)
		}
	}

	const (
		incident = "docs/incidents/2026-03-14-billing-outage.md"
		adr      = "docs/adrs/0007-use-postgres.md"
		pools    = "docs/rules/connection-pools.md"
		migr     = "docs/rules/db-migrations.md"
	)
	// resolved returns the vault paths a doc links to, and its broken links.
	resolved := func(p string) (to, broken []string) {
		for _, l := range docs[p].Links {
			if got, ok := r.Resolve(p, l.Target); ok {
				if !slices.Contains(to, got) {
					to = append(to, got)
				}
			} else {
				broken = append(broken, l.Target)
			}
		}
		return to, broken
	}
	to, broken := resolved(incident)
	if !slices.Contains(to, adr) || !slices.Contains(to, pools) || !slices.Contains(to, migr) {
		t.Errorf("incident links to %q", to)
	}
	if !slices.Equal(broken, []string{"does-not-exist"}) {
		t.Errorf("incident's broken links %q, want [does-not-exist]", broken)
	}
	to, broken = resolved(adr)
	if !slices.Contains(to, pools) || !slices.Contains(to, migr) || len(broken) > 0 {
		t.Errorf("ADR links to %q, broken %q", to, broken)
	}
	// Every other link of the vault resolves.
	for p := range docs {
		if p == incident {
			continue
		}
		if _, broken := resolved(p); len(broken) > 0 {
			t.Errorf("%s: broken links %q", p, broken)
		}
	}

	// The chain by traversal: incident -> ADR -> rules, in two hops.
	reach := map[string]bool{incident: true}
	frontier := []string{incident}
	for range 2 {
		var next []string
		for _, p := range frontier {
			to, _ := resolved(p)
			for _, q := range to {
				if !reach[q] {
					reach[q] = true
					next = append(next, q)
				}
			}
		}
		frontier = next
	}
	for _, p := range []string{adr, pools, migr, "docs/runbooks/pgbouncer-restart.md"} {
		if !reach[p] {
			t.Errorf("%s not reachable from the incident in two hops", p)
		}
	}

	a := docs[adr]
	if a.Title != "ADR-0007 Use Postgres for billing" || a.Type != "adr" || a.Date.Format("2006-01-02") != "2026-01-20" ||
		!slices.Equal(a.Aliases, []string{"ADR-0007", "Billing database decision"}) || !slices.Equal(a.Tags, []string{"adr", "database", "billing"}) {
		t.Errorf("ADR front matter: %+v", a)
	}
	var headings []string
	for _, c := range a.Chunks {
		headings = append(headings, strings.Join(c.Heading, " > "))
		if strings.Contains(c.Text, "CREATE TABLE") && !strings.Contains(c.Text, "not-a-link") {
			t.Error("the SQL block is split")
		}
	}
	if !slices.Contains(headings, "ADR-0007 Use Postgres for billing > Decision > Consequences") {
		t.Errorf("ADR headings %q", headings)
	}
	for _, l := range a.Links {
		if strings.Contains(l.Target, "not-a-link") {
			t.Errorf("link in code: %+v", l)
		}
	}

	// Exact identifiers live in one doc only.
	for _, id := range []string{"6432", "E4021"} {
		var in []string
		for p, d := range docs {
			for _, c := range d.Chunks {
				if strings.Contains(c.Text, id) && !slices.Contains(in, p) {
					in = append(in, p)
				}
			}
		}
		if !slices.Equal(in, []string{pools}) {
			t.Errorf("%s appears in %q, want only %s", id, in, pools)
		}
	}

	zh := docs["docs/adrs/0008-缓存策略.md"]
	if zh.Title != "ADR-0008 缓存策略" || zh.Date.IsZero() || !slices.Contains(zh.Tags, "缓存") || !slices.Contains(zh.Tags, "决策记录") {
		t.Errorf("Chinese ADR: %+v", zh)
	}
	if len(zh.Chunks) < 4 || !slices.Equal(zh.Chunks[1].Heading, []string{"ADR-0008 缓存策略", "背景"}) {
		t.Errorf("Chinese ADR chunks: %+v", summarize(zh))
	}
	ja := docs["docs/incidents/2026-04-02-決済タイムアウト.md"]
	if ja.Type != "incident" || ja.Date.Format("2006-01-02") != "2026-04-02" {
		t.Errorf("Japanese incident: %+v", ja)
	}
	if to, broken := resolved(ja.Path); !slices.Contains(to, zh.Path) || len(broken) > 0 {
		t.Errorf("Japanese incident links to %q, broken %q", to, broken)
	}

	tricky := docs["notes/tricky-front-matter.md"]
	if tricky.Title != "Tricky: front matter with a colon" || tricky.Type != "note" ||
		!slices.Equal(tricky.Tags, []string{"ops", "postgres", "review"}) || tricky.Date.Format("2006-01-02") != "2026-03-01" ||
		len(tricky.Warnings) > 0 || strings.Contains(tricky.Chunks[0].Text, "\r") {
		t.Errorf("tricky front matter: %+v", tricky)
	}
	broken0 := docs["notes/broken-front-matter.md"]
	if len(broken0.Warnings) == 0 || broken0.Title != "Broken front matter note" || len(broken0.Links) != 1 {
		t.Errorf("broken front matter: %+v", broken0)
	}
	if esc := docs["docs/rules/on-call/escalation.md"]; esc.Type != "rule" {
		t.Errorf("escalation type %q", esc.Type)
	}
	if readme := docs["README.md"]; readme.Title != "Platform team handbook" || readme.Type != "" {
		t.Errorf("README: %+v", readme)
	}
}

// TestVaultSmallChunks parses the whole vault with tiny chunks, where every
// section splits, and checks the invariants (loadVault does).
func TestVaultSmallChunks(t *testing.T) {
	for _, size := range []int{64, 150, 400} {
		docs, _, _ := loadVault(t, Options{ChunkBytes: size, OverlapBytes: size / 4})
		for _, d := range docs {
			for _, c := range d.Chunks {
				if strings.Count(c.Text, "```")%2 != 0 {
					t.Errorf("%s chunk %d (size %d) splits a code block", d.Path, c.Index, size)
				}
			}
		}
	}
}
