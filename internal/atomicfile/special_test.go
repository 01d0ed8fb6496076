//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileToAPipe checks that a path naming a named pipe (as
// /dev/null names a device) is written to, not replaced by a file: `engram
// bench --out /dev/null` run as root replaced the machine's /dev/null.
func TestWriteFileToAPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	// Opened for reading without waiting for a writer, so that neither
	// side blocks; the data fits the pipe's buffer.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFile(path, []byte("through the pipe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
	buf := make([]byte, 64)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "through the pipe\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}

func TestWriteFileToAFolder(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, []byte("x"), 0o644); err == nil {
		t.Fatal("writing over a folder: no error")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the folder is gone: %v", err)
	}
}
