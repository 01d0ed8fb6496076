package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/postgres"
)

func runArchive(ctx context.Context, m *Main, args []string) error {
	return m.runGroup(ctx, group{name: "archive", missing: "want a subcommand: export",
		unknown: "unknown archive subcommand %q (want export)",
		usage:   "Usage: engram archive export [--from URL] --to DIR\n",
		subs:    []command{{"export", "", runArchiveExport}}, hint: true}, args)
}

func runArchiveExport(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("archive export", `archive export [--from URL] --to DIR

Writes the PostgreSQL archive as the file archive's JSONL day files
(DIR/YYYY/MM/YYYY-MM-DD.jsonl), each row's line as it is, from one snapshot
while servers go on appending; then opens DIR as an archive and checks its
counts, last seq, every id and the SHA-256 of the lines against the rows.
DIR must be new or empty. The URL comes from --from, else from
`+postgres.EnvURL+`; keep the password out of the flag (PGPASSWORD or
~/.pgpass serve too): it is never printed.`)
	from := fs.String("from", "", "the PostgreSQL URL (default $"+postgres.EnvURL+")")
	to := fs.String("to", "", "the folder to write the day files into (new or empty)")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	url, err := m.postgresURL(*from, "--from")
	if err != nil {
		return err
	}
	if *to == "" {
		return &usageError{msg: "want --to DIR, the folder to write the day files into"}
	}
	a, err := postgres.Open(ctx, url, postgres.Options{Logger: m.errorLogger()})
	if err != nil {
		return err
	}
	defer a.Close()
	start := time.Now()
	info, err := a.Export(ctx, *to, postgres.HomeFiles{})
	if err != nil {
		return err
	}
	printDump(m, "exported", postgres.Where(url), *to, info, time.Since(start))
	return nil
}

func runMigrate(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("migrate", `migrate --to postgres://... | --from postgres://... --to DIR

--to postgres://...: copies the home's archive (every day file's lines,
tombstones and redactions as they are) and its corrections journal into an
empty PostgreSQL database, then checks the counts and the SHA-256 of the
lines in seq order on both sides. Stop `+"`engram serve`"+` first.
--from postgres://... --to DIR: writes the database's archive and
corrections into DIR, a new home (its archive must be empty), and checks
them the same way; `+"`engram --home DIR rebuild`"+` then builds its indexes.
The home's config.toml (models, vaults, jobs; never a secret) goes with
them, and comes back into the new home. "--to postgres" or "--from postgres" takes the
URL from `+postgres.EnvURL+`; the password is never printed.`)
	from := fs.String("from", "", "the PostgreSQL URL to copy from (with --to DIR)")
	to := fs.String("to", "", "the PostgreSQL URL to copy the home into, or the new home DIR (with --from)")
	if err := parseNone(fs, args); err != nil {
		return err
	}
	start := time.Now()
	switch {
	case *to == "":
		return &usageError{msg: "want --to postgres://... (from this home) or --from postgres://... --to DIR"}
	case *from == "" && isPostgres(*to):
		url, err := m.postgresURL(*to, "--to")
		if err != nil {
			return err
		}
		home, err := m.resolveHome()
		if err != nil {
			return err
		}
		info, err := engine.MigrateToPostgres(ctx, home, url, m.errorLogger())
		if err != nil {
			return err
		}
		printDump(m, "copied", home, postgres.Where(url), info, time.Since(start))
		return nil
	case *from != "" && isPostgres(*from) && !isPostgres(*to):
		url, err := m.postgresURL(*from, "--from")
		if err != nil {
			return err
		}
		info, err := engine.MigrateFromPostgres(ctx, url, *to, m.errorLogger())
		if err != nil {
			return err
		}
		printDump(m, "copied", postgres.Where(url), *to, info, time.Since(start))
		tprintf(m.Stdout, "next: engram --home %s rebuild\n", *to)
		return nil
	default:
		return &usageError{msg: "want --to postgres://... (from this home) or --from postgres://... --to DIR"}
	}
}

// printDump prints what an export or a migration copied and checked.
func printDump(m *Main, verb, from, to string, info postgres.DumpInfo, took time.Duration) {
	tprintf(m.Stdout, "%s %d archive lines (%d turns, %d forgotten) from %s to %s in %.1f s (%.0f lines/s)\n",
		verb, info.Lines, info.Turns, info.Forgotten, from, to, took.Seconds(), float64(info.Lines)/max(took.Seconds(), 1e-9))
	if info.Damaged > 0 {
		tprintf(m.Stdout, "  %d damaged %s copied as %s: engram doctor names them\n", info.Damaged,
			noun(int(info.Damaged), "line", "lines"), noun(int(info.Damaged), "it is", "they are"))
	}
	tprintf(m.Stdout, "  checked: last seq %d, %d bytes, sha256 %s\n", info.LastSeq, info.Bytes, info.SHA256)
	if info.Corrections > 0 {
		tprintf(m.Stdout, "  %d %s, sha256 %s\n", info.Corrections, noun(int(info.Corrections), "correction", "corrections"), info.CorrectionsSHA256)
	}
	if info.Config > 0 {
		tprintf(m.Stdout, "  config.toml, %d bytes, sha256 %s\n", info.Config, info.ConfigSHA256)
	}
}

// postgresURL returns the URL a flag gives, or ENGRAM_POSTGRES_URL's when
// the flag is empty or just "postgres".
func (m *Main) postgresURL(flagValue, flagName string) (string, error) {
	if flagValue != "" && flagValue != "postgres" {
		return flagValue, nil
	}
	if url := m.Getenv(postgres.EnvURL); url != "" {
		return url, nil
	}
	return "", &usageError{msg: fmt.Sprintf("want %s postgres://user@host:port/database, or set %s", flagName, postgres.EnvURL)}
}

// isPostgres reports whether s names a PostgreSQL database: a URL, or
// "postgres" for the one ENGRAM_POSTGRES_URL names.
func isPostgres(s string) bool {
	return s == "postgres" || strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}
