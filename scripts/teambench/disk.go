package main

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/jackc/pgx/v5"
)

// diskReport is what a configuration left on disk after its phases: the
// bytes of each server's home (files' apparent sizes) and, for the
// configurations on PostgreSQL, the database's size and the part of it
// its engram tables hold with their indexes and TOAST, by prefix.
type diskReport struct {
	Homes         map[string]int64 `json:"home_bytes"` // by server name
	Database      int64            `json:"database_bytes,omitempty"`
	ArchiveTables int64            `json:"archive_tables_bytes,omitempty"`
	PalaceTables  int64            `json:"palace_tables_bytes,omitempty"`
}

// homeBytes sums the sizes of the regular files under dir.
func homeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("the size of %s: %w", dir, err)
	}
	return n, nil
}

// databaseBytes reads the size of the database at url and of its archive_
// and palace_ tables (each with its indexes and TOAST).
func databaseBytes(ctx context.Context, url string, d *diskReport) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to measure %s: %w", redactURL(url), err)
	}
	defer conn.Close(ctx)
	const q = `SELECT pg_database_size(current_database()),
		coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE 'archive\_%'), 0)::bigint,
		coalesce(sum(pg_total_relation_size(c.oid)) FILTER (WHERE c.relname LIKE 'palace\_%'), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname = current_schema()`
	if err := conn.QueryRow(ctx, q).Scan(&d.Database, &d.ArchiveTables, &d.PalaceTables); err != nil {
		return fmt.Errorf("the size of %s: %w", redactURL(url), err)
	}
	return nil
}
