// Package backupdir is the layout of a backup folder, as homedir is a
// home's: the manifest (its format, and the check that every path it
// names stays inside the backup), and the file work of writing a backup
// and restoring one (a folder that may take a backup, the swap of a
// finished one into place, copies hashed and verified against the
// manifest). The engine's Backup and Restore use it.
package backupdir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/atomicfile"
)

// A backup folder holds a copy of a home and its manifest:
//
//	engram-backup.json   the manifest: format version, counts, every file with its size and SHA-256
//	palace.db            the palace, a VACUUM INTO snapshot
//	archive/YYYY/MM/...  the archive's day files, cut at one commit; archive/quarantine/ too
//	corrections.jsonl    the corrections journal, when the home has one
//	config.toml          when the home has one
const (
	// ManifestName is the manifest's file name, and Format the version
	// of the manifest this engram writes and reads.
	ManifestName     = "engram-backup.json"
	Format           = 1
	maxManifestBytes = 64 << 20
)

// Manifest is engram-backup.json.
type Manifest struct {
	Version       int       `json:"version"`
	CreatedAt     time.Time `json:"created_at"`
	EngramVersion string    `json:"engram_version"`
	Archive       Archive   `json:"archive"`
	Palace        Palace    `json:"palace"`
	Files         []File    `json:"files"`
}

// Archive is what the manifest says of the archive copied.
type Archive struct {
	LastSeq int64 `json:"last_seq"`
	Turns   int64 `json:"turns"`
}

// Palace is what the manifest says of the palace copied.
type Palace struct {
	SchemaVersion int   `json:"schema_version"`
	IndexedSeq    int64 `json:"indexed_seq"`
	Turns         int64 `json:"turns"`
}

// File is a file of the backup; Path is relative to the backup
// folder (and to the home), with forward slashes.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// CheckDir says whether dir may take a backup: it may be missing or
// empty; with force it may hold an earlier backup, which is then replaced
// (replace is true). Any other folder with something in it is refused,
// even with force: a mistyped path must not cost someone their files.
func CheckDir(dir string, force bool) (replace bool, err error) {
	if st, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err == nil && !st.IsDir() {
		// A file in the way is a bad dir, as one the server cannot make.
		return false, engram.FieldError("dir", "backup folder %s exists and is a file, not a folder; choose a new or empty folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("backup: %w", err)
	}
	if len(entries) == 0 {
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
		return false, &engram.Error{Code: engram.ECONFLICT, Field: "dir", Message: fmt.Sprintf(
			"backup folder %s is not empty and holds no engram backup (no %s); choose a new or empty folder", dir, ManifestName)}
	}
	if !force {
		return false, &engram.Error{Code: engram.ECONFLICT, Field: "dir", Message: fmt.Sprintf(
			"backup folder %s holds an earlier backup; choose a new folder, or --force to replace it", dir)}
	}
	return true, nil
}

// SwapInto renames the finished backup tmp to dir: over an empty dir, or,
// with replace, over an earlier backup, which is moved aside first and
// removed once the new one is in place.
func SwapInto(tmp, dir string, replace bool) error {
	old := ""
	if replace {
		old = fmt.Sprintf("%s.old-%d", dir, time.Now().UnixNano())
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("backup: move the earlier backup aside: %w", err)
		}
	} else if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Only an empty folder is removed; one filled meanwhile stays.
		return engram.Errorf(engram.ECONFLICT, "backup folder %s is no longer empty: %v", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("backup: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("backup: remove the replaced backup %s: %w", old, err)
		}
	}
	return nil
}

// HashFile returns the size and SHA-256 of a file.
func HashFile(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// CopyHashed copies src to the new file dst (0600), fsyncs it and returns
// the size and SHA-256 of what it copied.
func CopyHashed(src, dst string) (File, error) {
	in, err := os.Open(src)
	if err != nil {
		return File{}, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return File{}, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return File{}, err
	}
	return File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// RealPath resolves the symbolic links of path, or of its longest existing
// parent, so that two names of one folder compare equal.
func RealPath(path string) string {
	path = filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(RealPath(parent), filepath.Base(path))
}

// ReadManifest reads and checks the manifest of the backup in dir:
// its format, and that every path stays inside the backup.
func ReadManifest(dir string) (Manifest, error) {
	var man Manifest
	path := filepath.Join(dir, ManifestName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return man, engram.Errorf(engram.ENOTFOUND, "%s is not an engram backup: it has no %s", dir, ManifestName)
	}
	if err != nil {
		return man, fmt.Errorf("restore: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return man, fmt.Errorf("restore: %w", err)
	}
	bad := func(format string, args ...any) error {
		return engram.Errorf(engram.EINVALID, "backup %s is damaged: %s %s", dir, ManifestName, fmt.Sprintf(format, args...))
	}
	if len(b) > maxManifestBytes {
		return man, bad("is over %d bytes", maxManifestBytes)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return man, bad("does not parse: %v", err)
	}
	if man.Version != Format {
		return man, engram.Errorf(engram.EUNSUPPORTED, "backup %s has format version %d; this engram reads version %d (upgrade engram)",
			dir, man.Version, Format)
	}
	seen := make(map[string]bool, len(man.Files))
	for _, f := range man.Files {
		p := filepath.FromSlash(f.Path)
		switch {
		case !filepath.IsLocal(p) || strings.Contains(f.Path, `\`):
			return man, bad("names a file outside the backup: %q", f.Path)
		case seen[f.Path]:
			return man, bad("names %s twice", f.Path)
		case f.Size < 0 || len(f.SHA256) != sha256.Size*2:
			return man, bad("has a bad size or SHA-256 for %s", f.Path)
		case f.Path == ManifestName || filepath.Base(p) == "LOCK" || f.Path == homedir.ServeFile:
			return man, bad("lists %s, which a backup never holds", f.Path)
		}
		seen[f.Path] = true
	}
	if !seen[homedir.PalaceFile] {
		return man, bad("lists no %s", homedir.PalaceFile)
	}
	return man, nil
}

// CopyVerified copies the backup file f from the folder dir to the same
// path under home, hashing it on the way, and fails unless its size and
// SHA-256 are the manifest's.
func CopyVerified(dir, home string, f File) error {
	src := filepath.Join(dir, filepath.FromSlash(f.Path))
	dst := filepath.Join(home, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	got, err := CopyHashed(src, dst)
	if errors.Is(err, fs.ErrNotExist) {
		return engram.Errorf(engram.EINVALID, "backup %s is damaged: %s is missing", dir, f.Path)
	}
	if err != nil {
		return fmt.Errorf("restore: copy %s: %w", f.Path, err)
	}
	if got.Size != f.Size || got.SHA256 != f.SHA256 {
		return engram.Errorf(engram.EINVALID, "backup %s is damaged: %s has %d bytes with SHA-256 %s; the manifest says %d bytes with %s",
			dir, f.Path, got.Size, got.SHA256, f.Size, f.SHA256)
	}
	if filepath.Dir(f.Path) != "." {
		return atomicfile.SyncDir(filepath.Dir(dst))
	}
	return nil
}

// IsDir reports whether path is a folder.
func IsDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
