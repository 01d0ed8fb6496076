package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// mustOpenBackupStack serves the real engine of a temporary home
// (engine.Open, as `engram serve` opens it), POST /v1/backup included.
func mustOpenBackupStack(tb testing.TB, cfg httpapi.Config) *stack {
	tb.Helper()
	s, _ := mustOpenEngineStack(tb, cfg)
	return s
}

// TestPostBackupWhileIngesting backs up through the API while clients post
// turns: the copy's palace is never ahead of its archive, and the copy
// opens as a home of its own.
func TestPostBackupWhileIngesting(t *testing.T) {
	s := mustOpenBackupStack(t, httpapi.Config{})
	stop := postWhile(t, s, 3, func(w, i int) string {
		return fmt.Sprintf(`{"turns":[{"session":"w%d","content":"turn %d about the cache port"},{"session":"w%d","content":"and %d more"}]}`, w, i, w, i)
	})
	var reports []map[string]any
	for i := range 3 {
		seq := int64(100 * (i + 1))
		testutil.WaitUntil(t, fmt.Sprintf("the archive to reach seq %d", seq), func() bool { return s.LastSeq() >= seq })
		dir := filepath.Join(t.TempDir(), "backup")
		code, out := s.do(t, "POST", "/v1/backup", []byte(`{"dir":`+quote(dir)+`}`))
		if code != 200 {
			t.Fatalf("POST /v1/backup: %d %v", code, out)
		}
		if out["indexed_seq"].(float64) > out["archive_seq"].(float64) || out["dir"] != dir {
			t.Errorf("backup %d: %v", i, out)
		}
		reports = append(reports, out)
	}
	stop()

	for _, rep := range reports {
		dir := rep["dir"].(string)
		a, err := archive.Open(filepath.Join(dir, "archive"), archive.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := palace.Open(filepath.Join(dir, "palace.db"), palace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ix := pipeline.NewIndexer(a, p)
		if err := ix.Open(context.Background()); err != nil { // refuses a palace ahead of its archive
			t.Errorf("open the copy in %s: %v", dir, err)
		} else if ix.Indexed() != a.LastSeq() || float64(a.LastSeq()) != rep["archive_seq"].(float64) {
			t.Errorf("copy in %s: indexed %d, archive %d; reported %v", dir, ix.Indexed(), a.LastSeq(), rep)
		}
		ix.Close()
		p.Close()
		a.Close()
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

func TestPostBackupBadInput(t *testing.T) {
	s := mustOpenBackupStack(t, httpapi.Config{})
	abs := filepath.Join(t.TempDir(), "b")
	for _, c := range []struct {
		body  string
		field string
	}{
		{``, "body"},
		{`[]`, "body"},
		{`{}`, "dir"},
		{`{"dir": null}`, "dir"},
		{`{"dir": "relative/backup"}`, "dir"},
		{`{"dir": 7}`, "dir"},
		{`{"dir": ` + quote(abs) + `, "force": "yes"}`, "force"},
		{`{"dir": ` + quote(abs) + `, "path": "/x"}`, "path"},
		{"{\"dir\": \"/tmp/\xff\"}", "body"},
	} {
		code, out := s.do(t, "POST", "/v1/backup", []byte(c.body))
		e, _ := out["error"].(map[string]any)
		if code != 400 || e["code"] != engram.EINVALID || e["field"] != c.field {
			t.Errorf("%q: %d %v; want 400 on field %s", c.body, code, out, c.field)
		}
	}
	if _, err := os.Stat(abs); err == nil {
		t.Errorf("a refused request wrote %s", abs)
	}

	// Folders no file system takes, or the server cannot make: 400 on dir,
	// never a 500.
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o600)
	for _, dir := range []string{
		"/proc/engram-bk",                      // a virtual file system
		"/tmp/engram\x00bk",                    // a NUL
		"/tmp/engram\nbk",                      // a newline
		"/tmp/" + strings.Repeat("b", 10<<10),  // a 10 KB name
		"/tmp/" + strings.Repeat("dir/", 1100), // a path over PATH_MAX
		filepath.Join(file, "bk"),              // a file where a folder must be
		file,                                   // the backup folder is a file
	} {
		body, _ := json.Marshal(map[string]string{"dir": dir})
		code, out := s.do(t, "POST", "/v1/backup", body)
		e, _ := out["error"].(map[string]any)
		if code != 400 || e["code"] != engram.EINVALID || e["field"] != "dir" {
			t.Errorf("backup into %.60q: %d %v; want 400 on field dir", dir, code, out)
		}
	}

	// A folder that is not empty: the service's ECONFLICT is a 409.
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o600)
	code, out := s.do(t, "POST", "/v1/backup", []byte(`{"dir":`+quote(full)+`}`))
	if e, _ := out["error"].(map[string]any); code != 409 || e["code"] != engram.ECONFLICT || e["field"] != "dir" {
		t.Errorf("backup into a full folder: %d %v, want 409 on field dir", code, out)
	}
}

func TestPostBackupNotServed(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{}) // no BackupService
	code, out := s.do(t, "POST", "/v1/backup", []byte(`{"dir":"/tmp/x"}`))
	if e, _ := out["error"].(map[string]any); code != 501 || e["code"] != engram.EUNSUPPORTED {
		t.Errorf("POST /v1/backup without a service: %d %v", code, out)
	}
}

func TestPostBackupNeedsToken(t *testing.T) {
	s := mustOpenBackupStack(t, httpapi.Config{Token: "s3cret"})
	s.Token = ""
	code, out := s.do(t, "POST", "/v1/backup", []byte(`{"dir":"/tmp/x"}`))
	if code != 401 {
		t.Errorf("POST /v1/backup without the token: %d %v", code, out)
	}
}
