// Package migrations holds the palace's SQL schema as numbered migrations,
// embedded in the binary, and the SQL functions some of them call
// (functions.go), registered with SQLite when the package loads.
//
// Each file is named NNNN_name.sql, where NNNN is the version (starting at 1,
// without gaps). A migration is applied once, in its own transaction, and
// recorded in the schema_migrations table; files are never edited after they
// ship, a change is a new file. The palace package applies them when it opens
// a database.
package migrations

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Migration is one schema step.
type Migration struct {
	Version int    // 1, 2, ...; applied in this order
	Name    string // the file name without version and extension, e.g. "turns"
	SQL     string // one or more statements
}

// All returns the embedded migrations in version order. It fails if a file
// name is malformed, a version repeats or the versions have a gap, so that a
// bad file is caught by the tests rather than at a user's first open.
func All() ([]Migration, error) {
	return parse(files)
}

func parse(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var list []Migration
	for _, file := range names {
		stem := strings.TrimSuffix(file, ".sql")
		num, name, ok := strings.Cut(stem, "_")
		if !ok || name == "" || len(num) != 4 {
			return nil, fmt.Errorf("migrations: %s: want a name like 0001_name.sql", file)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("migrations: %s: version %q is not a positive number", file, num)
		}
		body, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		list = append(list, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Version < list[j].Version })
	for i, m := range list {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations: version %d (%s) out of sequence: want %d", m.Version, m.Name, i+1)
		}
	}
	return list, nil
}
