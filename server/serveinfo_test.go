package server_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/server"
)

// TestServeInfo: what a server writes, a CLI command reads back, and a
// stopping server removes; a missing, broken or empty file finds nothing.
func TestServeInfo(t *testing.T) {
	home := t.TempDir()
	if _, err := server.ReadServeInfo(home); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no file: %v", err)
	}
	if err := server.WriteServeInfo(home, "127.0.0.1:30001"); err != nil {
		t.Fatal(err)
	}
	info, err := server.ReadServeInfo(home)
	if err != nil || info.Addr != "127.0.0.1:30001" || info.PID != os.Getpid() || info.StartedAt.IsZero() {
		t.Fatalf("read %+v, %v", info, err)
	}
	if st, err := os.Stat(filepath.Join(home, homedir.ServeFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("stat %v, %v", st, err)
	}
	if err := server.RemoveServeInfo(home); err != nil {
		t.Fatal(err)
	}
	if err := server.RemoveServeInfo(home); err != nil {
		t.Fatalf("removed twice: %v", err)
	}
	for _, bad := range []string{"{", `{"pid": 7}`} {
		os.WriteFile(filepath.Join(home, homedir.ServeFile), []byte(bad), 0o600)
		if _, err := server.ReadServeInfo(home); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
