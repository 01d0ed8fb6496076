package postgres_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/postgres"
)

// history plays the same appends, forgets, redactions and resurrection
// on an archive over three days of a clock, with given ids, so that the
// file archive and the PostgreSQL one write the same lines.
func history(t *testing.T, a archivetest.Full, clock *testutil.Clock) {
	t.Helper()
	ctx := context.Background()
	turn := func(id, content string) engram.Turn {
		tn := archivetest.Turn("s-"+id[:1], content)
		tn.ID = id
		return tn
	}
	archivetest.MustAppend(t, a, turn("a1", "day one"), turn("a2", "my key is hunter2"), turn("a3", "to forget"))
	clock.Advance(24 * time.Hour)
	archivetest.MustAppend(t, a, turn("b1", "day two <b> & \"q\""), turn("b2", "日本"))
	at := clock.Now().UTC()
	if _, err := a.Forget(ctx, []string{"a3", "b2"}, engram.Forgotten{At: at, Reason: "asked"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Rewrite(ctx, []string{"a2"}, func(tn engram.Turn) (engram.Turn, bool) {
		tn.Content = "my key is [REDACTED]"
		tn.Redacted = &engram.Redaction{At: at, Spans: 1, Rules: map[string]int64{"manual": 1}}
		return tn, true
	}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour)
	again := turn("b2", "back again")
	again.Resurrect = true
	archivetest.MustAppend(t, a, again, turn("c1", "day three"))
}

// startClock is a clock at a whole second: the PostgreSQL archive keeps
// received_at to the microsecond, the file archive to the nanosecond.
func startClock() *testutil.Clock {
	return testutil.NewClock(time.Date(2026, 5, 1, 23, 0, 0, 0, time.UTC))
}

// TestExportWritesTheFileArchive checks that Export writes the day files
// the file archive writes for the same history, byte for byte, and checks
// them.
func TestExportWritesTheFileArchive(t *testing.T) {
	url := pgtest.NewDatabase(t)
	clock := startClock()
	pa := mustOpen(t, url, postgres.Options{Now: clock.Now})
	history(t, full{pa}, clock)

	fdir := t.TempDir()
	fclock := startClock()
	fa, err := archive.Open(fdir, archive.Options{Now: fclock.Now, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	history(t, fullFileArchive{fa}, fclock)
	fa.Close()

	out := filepath.Join(t.TempDir(), "export")
	info, err := pa.Export(context.Background(), out, postgres.HomeFiles{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Files != 3 || info.Lines != 7 || info.Turns != 5 || info.Forgotten != 2 || info.LastSeq != 7 || info.Damaged != 0 {
		t.Fatalf("export: %+v", info)
	}
	want, got := dayFiles(t, fdir), dayFiles(t, out)
	if !slices.Equal(keys(want), keys(got)) || len(got) != 3 {
		t.Fatalf("day files %v, the file archive's %v", keys(got), keys(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Fatalf("%s differs:\n%s\nthe file archive's:\n%s", name, got[name], b)
		}
	}

	// Into a folder that is not empty: refused.
	if _, err := pa.Export(context.Background(), out, postgres.HomeFiles{}); engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("export into a full folder: %v", err)
	}
}

// TestExportDamagedRow checks that Export copies a damaged row as it is
// and says so.
func TestExportDamagedRow(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	archivetest.MustAppend(t, a, archivetest.Turn("s", "one"), archivetest.Turn("s", "two"), archivetest.Turn("s", "three"))
	mustExec(t, connect(t, url), `UPDATE archive_turns SET line = overlay(line PLACING '\x21'::bytea
		FROM position('"content":"'::bytea IN line) + 11 FOR 1) WHERE seq = 2`)
	out := t.TempDir()
	info, err := a.Export(context.Background(), out, postgres.HomeFiles{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Lines != 3 || info.Turns != 2 || info.Damaged != 1 || info.LastSeq != 3 {
		t.Fatalf("export: %+v", info)
	}
	for _, b := range dayFiles(t, out) {
		if !bytes.Contains(b, []byte(`"content":"!wo"`)) {
			t.Fatalf("the damaged line is not copied as it is:\n%s", b)
		}
	}
}

// TestMigrateRoundTrip copies a home's archive and corrections journal
// into an empty database and back into a new home: every day file and
// the journal come back byte for byte.
func TestMigrateRoundTrip(t *testing.T) {
	url := pgtest.NewDatabase(t)
	home := t.TempDir()
	src := filepath.Join(home, "archive")
	clock := startClock()
	fa, err := archive.Open(src, archive.Options{Now: clock.Now, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	history(t, fullFileArchive{fa}, clock)
	fa.Close()
	j, err := archive.OpenJournal(filepath.Join(home, archive.CorrectionsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []engram.Correction{
		{ID: "c1", At: clock.Now(), Target: "memory", Of: "m1", Text: "the right text"},
		{ID: "c2", At: clock.Now(), Target: "fact", Of: "f1", Wrong: true, Reason: "no"},
	} {
		if err := j.Append(c); err != nil {
			t.Fatal(err)
		}
	}

	a := mustOpen(t, url, postgres.Options{})
	in, err := a.Import(context.Background(), src, postgres.HomeFiles{Journal: filepath.Join(home, archive.CorrectionsFile)})
	if err != nil {
		t.Fatal(err)
	}
	if in.Files != 3 || in.Lines != 7 || in.Turns != 5 || in.Forgotten != 2 || in.LastSeq != 7 || in.Corrections != 2 {
		t.Fatalf("import: %+v", in)
	}
	st, err := a.Stats(context.Background())
	if err != nil || st.Turns != 5 || st.Forgotten != 2 || st.Redacted != 1 || st.LastSeq != 7 || a.LastSeq() != 7 {
		t.Fatalf("stats after the import: %+v (%v)", st, err)
	}
	if gone, err := a.Forgotten(context.Background(), "a3"); err != nil || !gone {
		t.Fatalf("a3 forgotten: %v (%v)", gone, err)
	}
	// Appends go on after the copied seqs.
	if r := archivetest.MustAppend(t, a, archivetest.Turn("s", "after")); r[0].Seq != 8 {
		t.Fatalf("append after the import: %+v", r)
	}

	// Into a database that is not empty: refused, and nothing added.
	if _, err := a.Import(context.Background(), src, postgres.HomeFiles{}); engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("import into a full database: %v", err)
	}

	// Back, without the turn appended since.
	db := connect(t, url)
	mustExec(t, db, `DELETE FROM archive_turns WHERE seq = 8`)
	home2 := t.TempDir()
	out, err := a.Export(context.Background(), filepath.Join(home2, "archive"), postgres.HomeFiles{Journal: filepath.Join(home2, archive.CorrectionsFile)})
	if err != nil {
		t.Fatal(err)
	}
	if out.SHA256 != in.SHA256 || out.CorrectionsSHA256 != in.CorrectionsSHA256 || out.Corrections != 2 {
		t.Fatalf("export %+v, import %+v", out, in)
	}
	want, got := dayFiles(t, src), dayFiles(t, filepath.Join(home2, "archive"))
	if !slices.Equal(keys(want), keys(got)) {
		t.Fatalf("day files %v, the home's %v", keys(got), keys(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Fatalf("%s differs", name)
		}
	}
	wj, _ := os.ReadFile(filepath.Join(home, archive.CorrectionsFile))
	gj, _ := os.ReadFile(filepath.Join(home2, archive.CorrectionsFile))
	if !bytes.Equal(wj, gj) || len(wj) == 0 {
		t.Fatalf("the corrections journal differs:\n%s\n%s", gj, wj)
	}
}

// TestImportRefusesDamage checks that Import names a damaged line rather
// than leave it behind, and copies nothing.
func TestImportRefusesDamage(t *testing.T) {
	url := pgtest.NewDatabase(t)
	src := t.TempDir()
	fa, err := archive.Open(src, archive.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	archivetest.MustAppend(t, fa, archivetest.Turn("s", "one"), archivetest.Turn("s", "two"))
	fa.Close()
	for name := range dayFiles(t, src) {
		p := filepath.Join(src, name)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, bytes.Replace(b, []byte(`"content":"two"`), []byte(`"content":"twx"`), 1), 0o600)
	}
	a := mustOpen(t, url, postgres.Options{})
	_, err = a.Import(context.Background(), src, postgres.HomeFiles{})
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("import of a damaged archive: %v", err)
	}
	if st, _ := a.Stats(context.Background()); st.Turns != 0 {
		t.Fatalf("rows after a refused import: %+v", st)
	}
}

// fullFileArchive gives the file archive the form of archivetest.Full.
type fullFileArchive struct{ *archive.Archive }

func (f fullFileArchive) Known(_ context.Context, id string) (bool, error) {
	return f.Archive.Known(id), nil
}
func (f fullFileArchive) Forgotten(_ context.Context, id string) (bool, error) {
	return f.Archive.Forgotten(id), nil
}
func (f fullFileArchive) Tombstones(context.Context) (map[string]int64, error) {
	return f.Archive.Tombstones(), nil
}
func (f fullFileArchive) Counts(context.Context) (int64, int64, int64, error) {
	s := f.Archive.Stats()
	return s.Turns, s.Forgotten, s.Redacted, nil
}

// dayFiles returns the day files under dir by their path in it.
func dayFiles(tb testing.TB, dir string) map[string][]byte {
	tb.Helper()
	out := map[string][]byte{}
	paths, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.jsonl"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
	}
	return out
}

func keys(m map[string][]byte) []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
}
