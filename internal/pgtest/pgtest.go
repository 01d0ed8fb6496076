// Package pgtest gives tests a real PostgreSQL: the server that `make test`
// (scripts/testenv.sh, through scripts/postgres.sh) starts, a database of
// their own on it, or a cluster of their own to stop and start. Only tests
// import it.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/engram-dev/engram/internal/testutil"
	"github.com/jackc/pgx/v5"
)

// EnvURL names the environment variable that points the tests at a running
// server, e.g.
// ENGRAM_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5433/engram?sslmode=disable
// as printed by scripts/postgres.sh up 5433.
const EnvURL = "ENGRAM_TEST_POSTGRES_URL"

// URL returns the test server's URL. Without one, -short skips the test and
// a full run fails: a missing server must never pass silently.
func URL(tb testing.TB) string {
	tb.Helper()
	return testutil.Servers(tb, EnvURL)[EnvURL]
}

var dbSeq atomic.Int64

// NewDatabase creates an empty database on the test server for this test
// alone, returns its URL and drops it when the test ends. Its name holds
// the test's name, this process's pid and a counter, so that the packages
// `make test` runs side by side never share one.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, "")
}

// NewUTF8Database is NewDatabase with the database's character classes
// and case mapping those of the locale C.UTF-8 (its order is still the
// code points'), where the test cluster's own are C's: lower() and
// upper() then change letters beyond ASCII, as on the servers teams run
// (initdb takes the system's UTF-8 locale), so that a test comparing
// with SQLite's ASCII-only case rules can tell them apart. The test
// fails when the server does not know the locale.
func NewUTF8Database(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, " TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'")
}

func newDatabase(tb testing.TB, with string) string {
	tb.Helper()
	base := URL(tb)
	ctx := context.Background()
	name := dbName(tb.Name(), os.Getpid(), dbSeq.Add(1))
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+with); err != nil {
		tb.Fatalf("create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("connect to drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := WithDatabase(base, name)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// WithDatabase returns the URL rawURL with its database replaced by name.
func WithDatabase(rawURL, name string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("pgtest: %s is not a postgres:// URL", EnvURL)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

// dbName makes a database name of at most 63 bytes (PostgreSQL's limit)
// out of a test's name.
func dbName(test string, pid int, n int64) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 40 {
		s = s[:40]
	}
	return fmt.Sprintf("t_%s_%d_%d", s, pid, n)
}

// Cluster is a PostgreSQL cluster of one test's own (scripts/postgres.sh
// on a free port), for the tests that stop the database under engram.
type Cluster struct {
	script string
	port   int
	url    string
}

// StartCluster makes and starts a cluster with an empty database engram
// and deletes it when the test ends. Like URL, it skips the test with
// -short and fails it in a full run when the test server is not
// configured: where there is no test server, there is no PostgreSQL to
// start either.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	URL(tb)
	c := &Cluster{script: filepath.Join(repoRoot(tb), "scripts", "postgres.sh"), port: freePort(tb)}
	tb.Cleanup(func() {
		if out, err := exec.Command(c.script, "stop", strconv.Itoa(c.port)).CombinedOutput(); err != nil {
			tb.Errorf("postgres.sh stop %d: %v\n%s", c.port, err, out)
		}
	})
	c.url = strings.TrimSpace(c.run(tb, "start"))
	return c
}

// URL returns the URL of the cluster's database engram.
func (c *Cluster) URL() string { return c.url }

// Kill stops the server at once, as a crash would (pg_ctl stop -m
// immediate): what was committed must survive it.
func (c *Cluster) Kill(tb testing.TB) {
	tb.Helper()
	c.run(tb, "kill")
}

// Start starts the server again on the same data and port.
func (c *Cluster) Start(tb testing.TB) {
	tb.Helper()
	c.run(tb, "start")
}

func (c *Cluster) run(tb testing.TB, cmd string) string {
	tb.Helper()
	var stderr strings.Builder
	x := exec.Command(c.script, cmd, strconv.Itoa(c.port))
	x.Stderr = &stderr
	out, err := x.Output()
	if err != nil {
		tb.Fatalf("postgres.sh %s %d: %v\n%s", cmd, c.port, err, stderr.String())
	}
	return string(out)
}

// freePort returns a loopback port nothing listened on a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// repoRoot returns the repository's root: the first directory up from the
// test's that holds scripts/postgres.sh.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "scripts", "postgres.sh")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("scripts/postgres.sh not found above the test's directory")
		}
		dir = parent
	}
}

// MustHoldNowhere fails tb for every column of every table of the database
// at url that holds one of words, in any case: what a test of a forget or
// a redaction checks of the database, as internal/filetest does of a home.
// A bytea column is read as its bytes (the archive's lines are bytea).
func MustHoldNowhere(tb testing.TB, url string, words ...string) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name, column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		tb.Fatal(err)
	}
	type column struct{ table, name, typ string }
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var c column
		return c, r.Scan(&c.table, &c.name, &c.typ)
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range cols {
		expr := pgx.Identifier{c.name}.Sanitize() + "::text"
		if c.typ == "bytea" {
			expr = "encode(" + pgx.Identifier{c.name}.Sanitize() + ", 'escape')"
		}
		rows, err := conn.Query(ctx, "SELECT "+expr+" FROM "+pgx.Identifier{c.table}.Sanitize()+" WHERE "+expr+" IS NOT NULL")
		if err != nil {
			tb.Fatal(err)
		}
		values, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			tb.Fatal(err)
		}
		for _, v := range values {
			for _, w := range words {
				if strings.Contains(strings.ToLower(v), strings.ToLower(w)) {
					tb.Errorf("%s.%s still holds %q", c.table, c.name, w)
				}
			}
		}
	}
}
