package archive_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// TestJournal appends corrections, reads them back after a reopen, skips a
// torn last line (a crash before the fsync: never acknowledged) and cuts it
// off at the next append.
func TestJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), archive.CorrectionsFile)
	j, err := archive.OpenJournal(path)
	if err != nil || len(j.All()) != 0 {
		t.Fatalf("a missing journal: %v %v", j, err)
	}
	for _, id := range []string{"c1", "c2"} {
		if err := j.Append(engram.Correction{ID: id, Target: engram.CorrectMemory, Of: "m1", Wrong: true}); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"c3","tar`)
	f.Close()
	j, err = archive.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := j.All(); len(got) != 2 || got[0].ID != "c1" || got[1].ID != "c2" || !got[1].Wrong {
		t.Fatalf("read back: %+v", got)
	}
	if err := j.Append(engram.Correction{ID: "c4", Target: engram.CorrectFact, Of: "kg-1", Object: "Porto"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), `"c3"`) || strings.Count(string(b), "\n") != 3 {
		t.Fatalf("the torn line was not cut off: %q", b)
	}
	backup := filepath.Join(t.TempDir(), "copy.jsonl")
	size, sum, ok, err := j.Backup(backup)
	if err != nil || !ok || size != int64(len(b)) || len(sum) != 64 {
		t.Fatalf("backup: %d %s %v %v", size, sum, ok, err)
	}
	// A line that is whole but not JSON is damage, not a torn tail.
	os.WriteFile(path, []byte("{\"id\":\"c1\"}\nnot json\n"), 0o600)
	if _, err := archive.OpenJournal(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a damaged line: %v", err)
	}
}
