package testutil

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/internal/sqlrow"

	_ "modernc.org/sqlite" // the palace's driver, to damage palace.db as a disk or a bug would
)

// OpenSQLite opens the SQLite file at path behind engram's back, the way an
// operator's sqlite3 would, also while engram has it open; the test's end
// closes it.
func OpenSQLite(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", sqlrow.FileDSN(path, url.Values{"_pragma": {"busy_timeout(10000)"}}))
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	return db
}

// MustExec runs q on db and returns the rows it changed.
func MustExec(tb testing.TB, db *sql.DB, q string, args ...any) int64 {
	tb.Helper()
	res, err := db.Exec(q, args...)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	n, _ := res.RowsAffected()
	return n
}

// FaultTurns returns n turns as JSON lines (as `engram ingest` reads
// them), each with a unique token (zq0000, zq0001, ...) in three sessions,
// and their contents by token.
func FaultTurns(n int) (string, map[string]string) {
	var b strings.Builder
	contents := map[string]string{}
	topics := []string{"the billing database", "a trip to Lisbon", "the cat's vet visit", "the release checklist", "a sourdough recipe"}
	for i := range n {
		tok := fmt.Sprintf("zq%04d", i)
		c := fmt.Sprintf("note %s about %s, number %d", tok, topics[i%len(topics)], i)
		contents[tok] = c
		fmt.Fprintf(&b, `{"session":"s%d","speaker":"Ana","content":%q}`+"\n", i%3, c)
	}
	return b.String(), contents
}

// DayFiles lists the day files of the archive of the engram home at home;
// it fails the test when there is none.
func DayFiles(tb testing.TB, home string) []string {
	tb.Helper()
	var out []string
	err := filepath.WalkDir(filepath.Join(home, "archive"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) == 0 {
		tb.Fatalf("day files: %v %v", out, err)
	}
	return out
}
