package vault

import (
	"testing"

	"golang.org/x/text/unicode/norm"
)

func TestResolver(t *testing.T) {
	r := NewResolver([]DocRef{
		{Path: "README.md", Title: "Platform team handbook"},
		{Path: "docs/adrs/0007-use-postgres.md", Title: "ADR-0007 Use Postgres for billing", Aliases: []string{"ADR-0007", "Billing DB"}},
		{Path: "docs/adrs/0008-缓存策略.md", Title: "ADR-0008 缓存策略", Aliases: []string{"缓存决策"}},
		{Path: "docs/rules/db-migrations.md", Title: "Database migration rules"},
		{Path: "docs/rules/connection-pools.md", Title: "Connection pool rules"},
		{Path: "docs/rules/on-call/escalation.md", Title: "On-call escalation"},
		{Path: "docs/runbooks/Restart.markdown", Title: "Restart"},
		// Two files with one base name: "index" is ambiguous.
		{Path: "docs/adrs/index.md", Title: "ADR index"},
		{Path: "docs/incidents/index.md", Title: "Incident index"},
		// Two docs sharing an alias.
		{Path: "notes/a.md", Title: "A", Aliases: []string{"shared"}},
		{Path: "notes/b.md", Title: "B", Aliases: []string{"Shared"}},
		// Case variants of one path (a case-sensitive file system).
		{Path: "notes/Case.md", Title: "Case upper"},
		{Path: "notes/case.md", Title: "Case lower"},
		// A file named like another doc's title.
		{Path: "notes/Connection pool rules.md", Title: "Something else"},
		// macOS stores names decomposed (NFD).
		{Path: norm.NFD.String("notes/プロジェクト.md"), Title: "p"},
	})
	tests := []struct {
		name, from, target, want string
	}{
		{"exact path", "README.md", "docs/rules/db-migrations.md", "docs/rules/db-migrations.md"},
		{"exact path without .md", "README.md", "docs/rules/db-migrations", "docs/rules/db-migrations.md"},
		{"exact path .markdown", "README.md", "docs/runbooks/Restart", "docs/runbooks/Restart.markdown"},
		{"exact path, other case", "README.md", "DOCS/Rules/DB-Migrations.md", "docs/rules/db-migrations.md"},
		{"vault-absolute", "docs/adrs/x.md", "/README", "README.md"},
		{"relative ../", "docs/adrs/0007-use-postgres.md", "../rules/connection-pools.md", "docs/rules/connection-pools.md"},
		{"relative same folder", "docs/rules/db-migrations.md", "connection-pools.md", "docs/rules/connection-pools.md"},
		{"relative ./", "docs/rules/db-migrations.md", "./on-call/escalation", "docs/rules/on-call/escalation.md"},
		{"relative, ambiguous base name resolved by folder", "docs/adrs/x.md", "./index.md", "docs/adrs/index.md"},
		{"relative, folder wins over base name", "docs/incidents/x.md", "index", "docs/incidents/index.md"},
		{"base name", "docs/incidents/x.md", "0007-use-postgres", "docs/adrs/0007-use-postgres.md"},
		{"base name, any case", "x.md", "ESCALATION", "docs/rules/on-call/escalation.md"},
		{"base name with .md", "x.md", "db-migrations.md", "docs/rules/db-migrations.md"},
		{"path suffix", "docs/adrs/0007-use-postgres.md", "rules/db-migrations", "docs/rules/db-migrations.md"},
		{"path suffix from a subfolder", "notes/x.md", "on-call/escalation", "docs/rules/on-call/escalation.md"},
		{"CJK base name", "x.md", "0008-缓存策略", "docs/adrs/0008-缓存策略.md"},
		{"NFC link to an NFD name", "x.md", norm.NFC.String("プロジェクト"), norm.NFD.String("notes/プロジェクト.md")},
		{"title", "x.md", "ADR-0007 Use Postgres for billing", "docs/adrs/0007-use-postgres.md"},
		{"title, any case", "x.md", "database MIGRATION rules", "docs/rules/db-migrations.md"},
		{"alias", "x.md", "ADR-0007", "docs/adrs/0007-use-postgres.md"},
		{"alias, any case", "x.md", "billing db", "docs/adrs/0007-use-postgres.md"},
		{"CJK alias", "x.md", "缓存决策", "docs/adrs/0008-缓存策略.md"},
		{"file name beats a title", "x.md", "Connection pool rules", "notes/Connection pool rules.md"},
		{"exact case beats folded", "x.md", "notes/Case", "notes/Case.md"},
		{"exact case beats folded, lower", "x.md", "notes/case.md", "notes/case.md"},
		{"trimmed", "x.md", "  ADR-0007 ", "docs/adrs/0007-use-postgres.md"},

		{"unknown", "x.md", "does-not-exist", ""},
		{"empty", "x.md", "", ""},
		{"ambiguous base name", "notes/x.md", "index", ""},
		{"ambiguous alias", "x.md", "shared", ""},
		{"ambiguous folded path", "x.md", "notes/CASE", ""},
		{"outside the vault", "README.md", "../../etc/passwd.md", ""},
		{"suffix must be whole components", "x.md", "migrations", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := r.Resolve(tt.from, tt.target)
			if ok != (tt.want != "") || ok && got != tt.want {
				t.Errorf("Resolve(%q, %q) = %q, %v; want %q", tt.from, tt.target, got, ok, tt.want)
			}
		})
	}
}

func TestResolverEmpty(t *testing.T) {
	r := NewResolver(nil)
	if p, ok := r.Resolve("a.md", "a"); ok {
		t.Errorf("empty resolver resolved %q", p)
	}
	r = NewResolver([]DocRef{{Path: ""}, {Path: "a.md"}, {Path: "a.md", Title: "dup"}})
	if p, ok := r.Resolve("", "a"); !ok || p != "a.md" {
		t.Errorf("Resolve(a) = %q, %v", p, ok)
	}
}
