package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/migrations"
)

// MustOpenDB opens a palace in a fresh temporary directory and closes it at
// the end of the test, after checking its invariants. The palace starts as
// a copy of a new one that Open made once for the package's tests
// (newPalace): applying every migration to each test's new file took
// most of a short test's time. Tests of what Open does to a new file open
// one of their own (MustOpenDBAt).
func MustOpenDB(tb testing.TB) *DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "palace.db")
	newPalace.CopyTo(tb, path)
	return MustOpenDBAt(tb, path, Options{})
}

// newPalace is a palace Open made on a new file and closed, made once for
// the package's tests. A clean Close leaves everything in the main file
// (TestClose_KeepsWALFiles), so a copy of that file is the palace.
var newPalace = testutil.FileFixture{Make: func(path string) error {
	db, err := Open(path, Options{})
	if err != nil {
		return err
	}
	return db.Close()
}}

func TestMain(m *testing.M) {
	code := m.Run()
	newPalace.Remove()
	os.Exit(code)
}

// MustOpenDBAt opens the palace at path; see MustOpenDB.
func MustOpenDBAt(tb testing.TB, path string, opts Options) *DB {
	tb.Helper()
	db, err := Open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if !db.closed.Load() {
			checkInvariants(tb, db)
		}
		if err := db.Close(); err != nil {
			tb.Error(err)
		}
	})
	return db
}

// checkInvariants verifies the database, that the full-text indexes hold
// exactly the stored turns, and the vectors (checkVectorInvariants).
func checkInvariants(tb testing.TB, db *DB) {
	tb.Helper()
	ctx := context.Background()
	err := db.Update(ctx, func(tx *sql.Tx) error {
		var ok string
		if err := tx.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil {
			return err
		}
		if ok != "ok" {
			tb.Errorf("integrity_check: %s", ok)
		}
		for _, table := range []string{"turns_fts", "turns_trigram", "turns_cjk"} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (`+table+`) VALUES ('integrity-check')`); err != nil {
				tb.Errorf("%s integrity-check: %v", table, err)
			}
			if table == "turns_cjk" {
				var orphans int
				q := `SELECT count(*) FROM turns_cjk c WHERE NOT EXISTS (SELECT 1 FROM turns t WHERE t.seq = c.rowid)`
				if err := tx.QueryRowContext(ctx, q).Scan(&orphans); err != nil {
					return err
				}
				if orphans != 0 {
					tb.Errorf("turns_cjk: %d rows without a turn", orphans)
				}
				continue // only turns with CJK text have a row
			}
			// Past trigram_seq a turn waits for its substring row
			// (PutTurnsSearchable's second transaction, or Open's
			// backfill).
			upTo := "(SELECT max(seq) FROM turns)"
			if table == "turns_trigram" {
				upTo = "(SELECT value FROM palace_meta WHERE key = 'trigram_seq')"
			}
			var missing int
			q := `SELECT count(*) FROM turns t WHERE NOT EXISTS (SELECT 1 FROM ` + table + ` f WHERE f.rowid = t.seq)
				AND t.seq <= coalesce(` + upTo + `, 0)`
			if err := tx.QueryRowContext(ctx, q).Scan(&missing); err != nil {
				return err
			}
			var turns, docs int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE seq <= coalesce(`+upTo+`, 0)`).Scan(&turns); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&docs); err != nil {
				return err
			}
			if missing != 0 || turns != docs {
				tb.Errorf("%s: %d rows for %d turns, %d turns missing", table, docs, turns, missing)
			}
		}
		return checkUnitInvariants(ctx, tb, tx)
	})
	if err != nil {
		tb.Errorf("check invariants: %v", err)
	}
	checkVectorInvariants(tb, db)
}

// checkUnitInvariants verifies the retrieval units: every stored turn is in
// exactly one session part, of its own session; each unit's turn count
// matches its members and its bounds; each unit has one row in its kind's
// keyword index.
func checkUnitInvariants(ctx context.Context, tb testing.TB, tx *sql.Tx) error {
	tb.Helper()
	for _, c := range []struct{ what, q string }{
		// Past units_seq a turn waits for its unit (PutTurnsSearchable's
		// second transaction, or Open's backfill).
		{"turns in no session unit", `SELECT count(*) FROM turns t WHERE NOT EXISTS (SELECT 1 FROM unit_turns ut JOIN units u ON u.n = ut.unit_n
			WHERE ut.turn_seq = t.seq AND u.kind = 'session')
			AND t.seq <= coalesce((SELECT value FROM palace_meta WHERE key = 'units_seq'), 0)`},
		{"turns in no session unit, the units caught up", `SELECT count(*) FROM turns t WHERE NOT EXISTS (SELECT 1 FROM unit_turns ut JOIN units u ON u.n = ut.unit_n
			WHERE ut.turn_seq = t.seq AND u.kind = 'session')
			AND coalesce((SELECT value FROM palace_meta WHERE key = 'units_seq'), 0) >= coalesce((SELECT value FROM palace_meta WHERE key = 'indexed_seq'), 0)`},
		{"turns in two session units", `SELECT count(*) FROM (SELECT ut.turn_seq FROM unit_turns ut JOIN units u ON u.n = ut.unit_n
			WHERE u.kind = 'session' GROUP BY ut.turn_seq HAVING count(*) > 1)`},
		{"session units holding a turn of another session", `SELECT count(*) FROM unit_turns ut JOIN units u ON u.n = ut.unit_n
			JOIN turns t ON t.seq = ut.turn_seq WHERE u.kind = 'session' AND (t.namespace != u.namespace OR t.session != u.session)`},
		{"units whose count is off", `SELECT count(*) FROM units u WHERE u.turns != (SELECT count(*) FROM unit_turns WHERE unit_n = u.n)`},
		{"session parts over their bounds", fmt.Sprintf(`SELECT count(*) FROM units WHERE kind = 'session' AND (turns > %d OR (turns > 1 AND bytes > %d))`, UnitMaxTurns, UnitMaxBytes)},
		{"members of no unit", `SELECT count(*) FROM unit_turns ut WHERE NOT EXISTS (SELECT 1 FROM units u WHERE u.n = ut.unit_n)`},
	} {
		var n int
		if err := tx.QueryRowContext(ctx, c.q).Scan(&n); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		if n != 0 {
			tb.Errorf("units: %d %s", n, c.what)
		}
	}
	for kind, table := range unitFTS {
		var units, docs int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM units WHERE kind = ?`, kind).Scan(&units); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&docs); err != nil {
			return err
		}
		if units != docs {
			tb.Errorf("%s: %d rows for %d units of kind %s", table, docs, units, kind)
		}
	}
	return nil
}

func TestOpen_FileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	db := MustOpenDBAt(t, path, Options{})
	if err := db.PutTurns(context.Background(), []engram.Turn{testTurn(1, "hello")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s has mode %o, want 600", filepath.Base(p), mode)
		}
	}
}

// TestClose_WaitsForReads: a read in flight when the palace closes keeps
// its connection until it ends; Close waits for it before the writer
// closes, so the writer is the last connection and the WAL files stay
// (a reader closing last would remove them after Close returned).
func TestClose_WaitsForReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.PutTurns(ctx, []engram.Turn{testTurn(1, "kept")}); err != nil {
		t.Fatal(err)
	}
	reading, release, read := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		read <- db.View(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRow(`SELECT count(*) FROM turns`).Scan(&n); err != nil {
				return err
			}
			close(reading)
			<-release
			return nil
		})
	}()
	<-reading
	var once sync.Once
	end := func() { once.Do(func() { close(release) }) }
	db.closeWaiting = end // the read ends once Close waits for it
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	end() // a Close that did not wait has returned with the read still going
	if err := <-read; err != nil {
		t.Fatalf("the read in flight: %v", err)
	}
	if fi, err := os.Stat(path + "-shm"); err != nil || fi.Size() == 0 {
		t.Fatalf("WAL index after close: %v %v, want it kept", fi, err)
	}
}

// TestClose_KeepsWALFiles: a clean close folds the WAL into the database
// and empties it, but keeps it and its index file, so that the next open
// allocates nothing (on a full disk it could not); the data is all in the
// main file.
func TestClose_KeepsWALFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutTurns(context.Background(), []engram.Turn{testTurn(1, "kept")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() != 0 {
		t.Fatalf("WAL after close: %v %v, want an empty file", fi, err)
	}
	if fi, err := os.Stat(path + "-shm"); err != nil || fi.Size() == 0 {
		t.Fatalf("WAL index after close: %v %v, want it kept", fi, err)
	}
	info, err := ReadInfo(context.Background(), path) // the main file alone
	if err != nil || info.Turns != 1 {
		t.Fatalf("main file after close: %+v %v", info, err)
	}
	db = MustOpenDBAt(t, path, Options{})
	if n, _ := db.CountTurns(context.Background(), ""); n != 1 {
		t.Fatalf("reopened: %d turns", n)
	}
}

func TestOpen_OddPath(t *testing.T) {
	// '?', '#' and '%' would end or escape a DSN's path if not escaped.
	path := filepath.Join(t.TempDir(), "a?b#c%20 d.db")
	MustOpenDBAt(t, path, Options{})
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not created at the given path: %v", err)
	}
}

func TestOpen_NoDirectory(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing", "palace.db"), Options{}); err == nil {
		t.Fatal("Open in a missing directory succeeded")
	}
	if _, err := Open("", Options{}); engram.ErrorCode(err) != engram.EINVALID {
		t.Fatalf("Open(\"\") = %v, want EINVALID", err)
	}
}

func TestOpen_Pragmas(t *testing.T) {
	db := MustOpenDBAt(t, filepath.Join(t.TempDir(), "palace.db"), Options{})
	ctx := context.Background()
	want := map[string]string{
		"journal_mode": "wal",
		"synchronous":  "1", // NORMAL
		"foreign_keys": "1",
		"busy_timeout": "5000",
	}
	check := func(name string, tx *sql.Tx, queryOnly string, mmap int64) error {
		var gotMmap int64
		if err := tx.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&gotMmap); err != nil {
			return err
		}
		if gotMmap != mmap {
			t.Errorf("%s: mmap_size = %d, want %d", name, gotMmap, mmap)
		}
		for p, v := range want {
			var got string
			if err := tx.QueryRowContext(ctx, "PRAGMA "+p).Scan(&got); err != nil {
				return err
			}
			if got != v {
				t.Errorf("%s: %s = %s, want %s", name, p, got, v)
			}
		}
		var got string
		if err := tx.QueryRowContext(ctx, "PRAGMA query_only").Scan(&got); err != nil {
			return err
		}
		if got != queryOnly {
			t.Errorf("%s: query_only = %s, want %s", name, got, queryOnly)
		}
		return nil
	}
	// Only the readers of View map the file (readMmapSize).
	if err := db.Update(ctx, func(tx *sql.Tx) error { return check("writer", tx, "0", 0) }); err != nil {
		t.Fatal(err)
	}
	if err := db.View(ctx, func(tx *sql.Tx) error { return check("reader", tx, "1", readMmapSize) }); err != nil {
		t.Fatal(err)
	}
	if err := db.viewLoad(ctx, func(tx *sql.Tx) error { return check("loader", tx, "1", 0) }); err != nil {
		t.Fatal(err)
	}
	err := db.View(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO palace_meta (key, value) VALUES ('x', 1)`)
		return err
	})
	if err == nil {
		t.Error("View allowed a write")
	}
}

func TestUpdate_RollsBackOnError(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.Update(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO palace_meta (key, value) VALUES ('x', 1)`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want boom", err)
	}
	var n int
	err = db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM palace_meta WHERE key = 'x'`).Scan(&n)
	})
	if err != nil || n != 0 {
		t.Fatalf("after rollback: n = %d, err = %v", n, err)
	}
}

func TestMigrations_AppliedAndRecorded(t *testing.T) {
	now := time.Date(2026, 5, 1, 14, 3, 0, 0, time.UTC)
	db := MustOpenDBAt(t, filepath.Join(t.TempDir(), "palace.db"), Options{Now: func() time.Time { return now }})
	want, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	got := appliedMigrations(t, db)
	if len(got) != len(want) {
		t.Fatalf("recorded %d migrations, want %d", len(got), len(want))
	}
	for i, m := range want {
		if got[i].version != m.Version || got[i].name != m.Name || got[i].appliedAt != "2026-05-01T14:03:00Z" {
			t.Errorf("migration %d recorded as %+v", m.Version, got[i])
		}
	}
}

type applied struct {
	version         int
	name, appliedAt string
}

func appliedMigrations(tb testing.TB, db *DB) []applied {
	tb.Helper()
	var out []applied
	ctx := context.Background()
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a applied
			if err := rows.Scan(&a.version, &a.name, &a.appliedAt); err != nil {
				return err
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestMigrations_ReopenIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	first := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open(path, Options{Now: func() time.Time { return first }})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutTurns(context.Background(), []engram.Turn{testTurn(1, "kept across reopen")}); err != nil {
		t.Fatal(err)
	}
	before := appliedMigrations(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = MustOpenDBAt(t, path, Options{Now: func() time.Time { return first.AddDate(1, 0, 0) }})
	after := appliedMigrations(t, db)
	if len(after) != len(before) {
		t.Fatalf("reopen recorded %d migrations, before %d", len(after), len(before))
	}
	for i := range before {
		if after[i] != before[i] {
			t.Errorf("migration %d changed on reopen: %+v -> %+v", before[i].version, before[i], after[i])
		}
	}
	if n, err := db.CountTurns(context.Background(), ""); err != nil || n != 1 {
		t.Fatalf("CountTurns after reopen = %d, %v", n, err)
	}
}

func TestMigrations_TooNewRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "palace.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', '2030-01-01T00:00:00Z')`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{})
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a schema newer than the binary")
	}
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("Open = %v, want ErrSchemaTooNew", err)
	}
	t.Log(err)
}

func TestMigrate_NewAndFailing(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	list, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	next := len(list) + 1
	bad := append(append([]migrations.Migration(nil), list...),
		migrations.Migration{Version: next, Name: "bad", SQL: `CREATE TABLE extra (x); SELECT no_such_function();`})
	if err := db.migrate(ctx, bad); err == nil {
		t.Fatal("a failing migration succeeded")
	}
	if got := appliedMigrations(t, db); len(got) != len(list) {
		t.Fatalf("failing migration recorded: %+v", got)
	}
	var n int
	err = db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = 'extra'`).Scan(&n)
	})
	if err != nil || n != 0 {
		t.Fatalf("failing migration left table extra (n=%d, err=%v)", n, err)
	}

	good := append(append([]migrations.Migration(nil), list...),
		migrations.Migration{Version: next, Name: "extra", SQL: `CREATE TABLE extra (x); INSERT INTO extra VALUES (1);`})
	for range 2 {
		if err := db.migrate(ctx, good); err != nil {
			t.Fatal(err)
		}
	}
	if got := appliedMigrations(t, db); len(got) != next || got[next-1].name != "extra" {
		t.Fatalf("recorded %+v", got)
	}
	err = db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM extra`).Scan(&n)
	})
	if err != nil || n != 1 {
		t.Fatalf("migration ran %d times (err %v), want once", n, err)
	}
}

func TestClosed(t *testing.T) {
	db := MustOpenDB(t)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	ctx := context.Background()
	for name, err := range map[string]error{
		"PutTurns": db.PutTurns(ctx, []engram.Turn{testTurn(1, "x")}),
		"IndexedSeq": func() error {
			_, err := db.IndexedSeq(ctx)
			return err
		}(),
		"SearchTurns": func() error {
			_, err := db.SearchTurns(ctx, engram.TextQuery{Text: "x"})
			return err
		}(),
		"Stats": func() error {
			_, err := db.Stats(ctx)
			return err
		}(),
	} {
		if !errors.Is(err, ErrClosed) || engram.ErrorCode(err) != engram.EUNAVAILABLE {
			t.Errorf("%s after Close = %v, want ErrClosed (EUNAVAILABLE)", name, err)
		}
	}
}

// TestConcurrentReadWrite runs searches and counts while batches are
// written, for the race detector and to show reads are not blocked.
func TestConcurrentReadWrite(t *testing.T) {
	testutil.LongRun(t)
	db := MustOpenDB(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for b := range 20 {
			batch := make([]engram.Turn, 10)
			for i := range batch {
				batch[i] = testTurn(int64(b*10+i+1), "concurrent write about the database port 数据库端口")
			}
			if err := db.PutTurns(ctx, batch); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := db.SearchTurns(ctx, engram.TextQuery{Text: "database port 端口 会議", Limit: 5}); err != nil {
					t.Error(err)
					return
				}
				if _, err := db.CountTurns(ctx, ""); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := db.CountTurns(ctx, ""); err != nil || n != 200 {
		t.Fatalf("CountTurns = %d, %v; want 200", n, err)
	}
	if seq, err := db.IndexedSeq(ctx); err != nil || seq != 200 {
		t.Fatalf("IndexedSeq = %d, %v; want 200", seq, err)
	}
}

// testTurn returns a valid turn with the given seq and content.
func testTurn(seq int64, content string) engram.Turn {
	ts := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(seq) * time.Minute)
	return engram.Turn{
		ID:         "t" + itoa(seq),
		Seq:        seq,
		Namespace:  engram.DefaultNamespace,
		Session:    "s1",
		Role:       engram.RoleUser,
		Content:    content,
		TS:         ts,
		ReceivedAt: ts.Add(time.Second),
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestOpen_FTSPageSize: every full-text table writes leaf pages of 1,000
// bytes (migration 0014), so that the merges FTS5 runs inside a commit
// stay short.
func TestOpen_FTSPageSize(t *testing.T) {
	db := MustOpenDBAt(t, filepath.Join(t.TempDir(), "palace.db"), Options{})
	ctx := context.Background()
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5%'`)
		if err != nil {
			return err
		}
		tables, err := sqlrow.All(rows, func(s *string) []any { return []any{s} })
		if err != nil {
			return err
		}
		if len(tables) < 10 {
			t.Fatalf("%d full-text tables: %v", len(tables), tables)
		}
		for _, table := range tables {
			var pgsz int
			if err := tx.QueryRowContext(ctx, `SELECT v FROM `+table+`_config WHERE k = 'pgsz'`).Scan(&pgsz); err != nil {
				t.Errorf("%s: pgsz: %v", table, err)
			} else if pgsz != 1000 {
				t.Errorf("%s: pgsz %d, want 1000", table, pgsz)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpen_PageSize: a new palace has pages of pageSize; one written with
// SQLite's default 4 KB pages (every palace before) is written anew with
// them when it opens, in WAL mode again, its turns kept and searchable.
func TestOpen_PageSize(t *testing.T) {
	ctx := context.Background()
	pageSizeOf := func(db *DB) (size int, mode string) {
		t.Helper()
		if err := db.w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
			t.Fatal(err)
		}
		if err := db.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return size, mode
	}
	if size, mode := pageSizeOf(MustOpenDBAt(t, filepath.Join(t.TempDir(), "new.db"), Options{})); size != pageSize || mode != "wal" {
		t.Fatalf("a new palace: pages of %d bytes, journal %s", size, mode)
	}

	path := filepath.Join(t.TempDir(), "palace.db")
	palaceBefore(t, path, "", func(ctx context.Context, tx *sql.Tx) error {
		return insertOldTurns(ctx, tx, "written before the pages grew")
	})
	db := MustOpenDBAt(t, path, Options{})
	if size, mode := pageSizeOf(db); size != pageSize || mode != "wal" {
		t.Fatalf("reopened: pages of %d bytes, journal %s", size, mode)
	}
	hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "pages grew", Limit: 5})
	if err != nil || len(hits) != 1 {
		t.Fatalf("after the conversion: %v, %v", hits, err)
	}
}

// palaceBefore creates a palace at path as an older engram left it: the
// migrations before the one named next (all of them for ""), SQLite's
// default 4 KB pages, and the rows fill writes in one transaction; then it
// closes it, for Open to find the rest to do.
func palaceBefore(t *testing.T, path, next string, fill func(ctx context.Context, tx *sql.Tx) error) {
	t.Helper()
	ctx := context.Background()
	list, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	upTo := len(list)
	if next != "" {
		upTo = slices.IndexFunc(list, func(m migrations.Migration) bool { return m.Name == next })
		if upTo < 0 {
			t.Fatalf("no migration named %s", next)
		}
	}
	w, err := sql.Open("sqlite", strings.Replace(dsn(path, true), fmt.Sprintf("page_size%%28%d%%29", pageSize), "page_size%284096%29", 1))
	if err != nil {
		t.Fatal(err)
	}
	old := &DB{path: path, now: time.Now, w: w}
	if err := old.migrate(ctx, list[:upTo]); err != nil {
		t.Fatal(err)
	}
	var size int
	if err := w.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil || size != 4096 {
		t.Fatalf("the old palace has pages of %d bytes (%v)", size, err)
	}
	if err := old.Update(ctx, func(tx *sql.Tx) error { return fill(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// insertOldTurns writes turns of contents (seqs from 1) with their rows in
// turns_fts and turns_trigram, as a palace of before its migrations wrote
// them.
func insertOldTurns(ctx context.Context, tx *sql.Tx, contents ...string) error {
	for i, c := range contents {
		seq := i + 1
		if _, err := tx.ExecContext(ctx, `INSERT INTO turns (seq, id, namespace, session, role, speaker, content, ts, received_at)
			VALUES (?, ?, 'default', 's', 'user', '', ?, ?, ?)`, seq, "t"+strconv.Itoa(seq), c, int64(seq)*1e9, int64(seq)*1e9); err != nil {
			return err
		}
		for _, q := range []string{`INSERT INTO turns_trigram (rowid, content) VALUES (?, ?)`, `INSERT INTO turns_fts (rowid, text, speaker) VALUES (?, ?, '')`} {
			if _, err := tx.ExecContext(ctx, q, seq, kwindex.NFKC(c)); err != nil {
				return err
			}
		}
	}
	return nil
}
