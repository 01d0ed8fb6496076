package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/internal/fspath"
	"github.com/engram-dev/engram/palace"
)

// A backup folder holds a copy of a home and its manifest:
//
//	engram-backup.json   the manifest: format version, counts, every file with its size and SHA-256
//	palace.db            the palace, a VACUUM INTO snapshot
//	archive/YYYY/MM/...  the archive's day files, cut at one commit; archive/quarantine/ too
//	corrections.jsonl    the corrections journal, when the home has one
//	config.toml          when the home has one
const (
	backupManifestName = "engram-backup.json"
	backupFormat       = 1
	maxManifestBytes   = 64 << 20
)

// backupManifest is engram-backup.json.
type backupManifest struct {
	Version       int           `json:"version"`
	CreatedAt     time.Time     `json:"created_at"`
	EngramVersion string        `json:"engram_version"`
	Archive       backupArchive `json:"archive"`
	Palace        backupPalace  `json:"palace"`
	Files         []backupFile  `json:"files"`
}

type backupArchive struct {
	LastSeq int64 `json:"last_seq"`
	Turns   int64 `json:"turns"`
}

type backupPalace struct {
	SchemaVersion int   `json:"schema_version"`
	IndexedSeq    int64 `json:"indexed_seq"`
	Turns         int64 `json:"turns"`
}

// backupFile is a file of the backup; Path is relative to the backup
// folder (and to the home), with forward slashes.
type backupFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

var _ engram.BackupService = (*Engine)(nil)

// Backup implements engram.BackupService: `engram backup` runs it in the
// server that owns the home, or in its own process when none does.
//
// The palace is copied first, the archive second, and that order is what
// makes the pair consistent. The palace only ever holds turns the archive
// had committed (the indexer reads committed turns only), so at the moment
// of the palace snapshot its watermarks (indexed_seq, the workers' and the
// vector models' seqs) are at most the archive's LastSeq then, which is at
// most the LastSeq of the archive cut taken after. The copy's palace is
// therefore never ahead of its archive: opening it, the indexer catches the
// palace up with the turns archived in between, as after any restart. The
// other order could leave the palace holding turns the archive copy lacks,
// which the indexer refuses to open. The check below makes the argument a
// guarantee.
//
// A folder the server cannot make or write is EINVALID on dir (its cause
// named: permission, a read-only or virtual file system, a file in the
// way, a name too long), a full disk ENOSPACE: the client's to change.
func (e *Engine) Backup(ctx context.Context, req engram.BackupRequest) (engram.BackupReport, error) {
	if e.cfg.Store == config.StorePostgres {
		return engram.BackupReport{}, errFilesOnly("engram backup", "back up the database with pg_dump, or write its turns as JSONL files with engram archive export")
	}
	if err := engram.CheckPath("dir", req.Dir); err != nil {
		return engram.BackupReport{}, err
	}
	rep, err := e.backup(ctx, req)
	return rep, destError("dir", filepath.Clean(req.Dir), err)
}

// destError is err, from writing into the folder dir a client named on
// field, as the client's error where it is the folder's fault: ENOSPACE
// for a full disk or quota, EINVALID for a folder the server cannot make or
// write. Application errors and the rest pass as they are.
func destError(field, dir string, err error) error {
	var ae *engram.Error
	switch {
	case err == nil || errors.As(err, &ae):
		return err
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || palace.IsDiskFull(err):
		return &engram.Error{Code: engram.ENOSPACE, Field: field, Err: err,
			Message: fmt.Sprintf("the disk holding %s is full; nothing was written", dir)}
	}
	for _, c := range []struct {
		errno syscall.Errno
		why   string
	}{
		{syscall.EACCES, "permission denied"},
		{syscall.EPERM, "the file system does not allow it"},
		{syscall.EROFS, "the file system is read-only"},
		{syscall.ENOENT, "a folder above it cannot be made there (a virtual file system such as /proc?)"},
		{syscall.ENOTDIR, "a file stands where a folder of the path must be"},
		{syscall.ENAMETOOLONG, "the name is too long"},
		{syscall.EINVAL, "the file system refuses the name"},
		{syscall.EXDEV, "it is on another file system than its parent"},
	} {
		if errors.Is(err, c.errno) {
			return &engram.Error{Code: engram.EINVALID, Field: field, Err: err,
				Message: fmt.Sprintf("cannot write a backup into %s: %s; choose another folder", dir, c.why)}
		}
	}
	return err
}

func (e *Engine) backup(ctx context.Context, req engram.BackupRequest) (engram.BackupReport, error) {
	start := time.Now()
	dir := filepath.Clean(req.Dir)
	if !filepath.IsAbs(dir) {
		return engram.BackupReport{}, engram.FieldError("dir", "dir %q must be an absolute path", req.Dir)
	}
	home := realPath(e.cfg.Home)
	if real := realPath(dir); real == home || fspath.Within(home, real) || fspath.Within(real, home) {
		return engram.BackupReport{}, engram.FieldError("dir",
			"backup folder %s and the home %s overlap (one holds the other): a backup must not be lost with the home, nor replace it; choose a folder outside the home", dir, e.cfg.Home)
	}
	replace, err := checkBackupDir(dir, req.Force)
	if err != nil {
		return engram.BackupReport{}, err
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+".tmp-")
	if err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()

	man := backupManifest{Version: backupFormat, CreatedAt: time.Now().UTC(), EngramVersion: e.cfg.Version}
	pinfo, err := e.palace.Backup(ctx, filepath.Join(tmp, homedir.PalaceFile))
	if err != nil {
		return engram.BackupReport{}, err
	}
	man.Palace = backupPalace{SchemaVersion: pinfo.SchemaVersion, IndexedSeq: pinfo.IndexedSeq, Turns: pinfo.Turns}
	pf, err := hashFile(filepath.Join(tmp, homedir.PalaceFile))
	if err != nil {
		return engram.BackupReport{}, err
	}
	man.Files = append(man.Files, backupFile{Path: homedir.PalaceFile, Size: pf.Size, SHA256: pf.SHA256})

	ainfo, err := e.archive.Backup(ctx, filepath.Join(tmp, homedir.ArchiveDir))
	if err != nil {
		return engram.BackupReport{}, err
	}
	man.Archive = backupArchive{LastSeq: ainfo.LastSeq, Turns: ainfo.Turns}
	if pinfo.IndexedSeq > ainfo.LastSeq {
		return engram.BackupReport{}, engram.Errorf(engram.EINTERNAL,
			"backup: the palace copy is indexed to seq %d, past the archive copy's last seq %d", pinfo.IndexedSeq, ainfo.LastSeq)
	}
	for _, f := range ainfo.Files {
		man.Files = append(man.Files, backupFile{Path: homedir.ArchiveDir + "/" + f.Path, Size: f.Size, SHA256: f.SHA256})
	}

	if size, sum, ok, err := e.journal.Backup(filepath.Join(tmp, archive.CorrectionsFile)); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: copy %s: %w", archive.CorrectionsFile, err)
	} else if ok {
		man.Files = append(man.Files, backupFile{Path: archive.CorrectionsFile, Size: size, SHA256: sum})
	}

	cf, err := copyHashed(filepath.Join(e.cfg.Home, config.ConfigFile), filepath.Join(tmp, config.ConfigFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return engram.BackupReport{}, fmt.Errorf("backup: copy %s: %w", config.ConfigFile, err)
	default:
		man.Files = append(man.Files, backupFile{Path: config.ConfigFile, Size: cf.Size, SHA256: cf.SHA256})
	}
	slices.SortFunc(man.Files, func(a, b backupFile) int { return strings.Compare(a.Path, b.Path) })

	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return engram.BackupReport{}, err
	}
	if err := atomicfile.WriteFile(filepath.Join(tmp, backupManifestName), append(b, '\n'), 0o600); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: write the manifest: %w", err)
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return engram.BackupReport{}, err
	}
	if err := swapInto(tmp, dir, replace); err != nil {
		return engram.BackupReport{}, err
	}
	done = true

	rep := engram.BackupReport{Dir: dir, CreatedAt: man.CreatedAt, ArchiveSeq: man.Archive.LastSeq, ArchiveTurns: man.Archive.Turns,
		IndexedSeq: man.Palace.IndexedSeq, SchemaVersion: man.Palace.SchemaVersion, Files: len(man.Files),
		TookMS: float64(time.Since(start).Microseconds()) / 1000}
	for _, f := range man.Files {
		rep.Bytes += f.Size
	}
	e.logger.Info("backup written", "dir", dir, "archive_seq", rep.ArchiveSeq, "indexed_seq", rep.IndexedSeq,
		"bytes", rep.Bytes, "took_ms", rep.TookMS)
	return rep, nil
}

// checkBackupDir says whether dir may take a backup: it may be missing or
// empty; with force it may hold an earlier backup, which is then replaced
// (replace is true). Any other folder with something in it is refused,
// even with force: a mistyped path must not cost someone their files.
func checkBackupDir(dir string, force bool) (replace bool, err error) {
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
	if _, err := os.Stat(filepath.Join(dir, backupManifestName)); err != nil {
		return false, &engram.Error{Code: engram.ECONFLICT, Field: "dir", Message: fmt.Sprintf(
			"backup folder %s is not empty and holds no engram backup (no %s); choose a new or empty folder", dir, backupManifestName)}
	}
	if !force {
		return false, &engram.Error{Code: engram.ECONFLICT, Field: "dir", Message: fmt.Sprintf(
			"backup folder %s holds an earlier backup; choose a new folder, or --force to replace it", dir)}
	}
	return true, nil
}

// swapInto renames the finished backup tmp to dir: over an empty dir, or,
// with replace, over an earlier backup, which is moved aside first and
// removed once the new one is in place.
func swapInto(tmp, dir string, replace bool) error {
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

// hashFile returns the size and SHA-256 of a file.
func hashFile(path string) (backupFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return backupFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return backupFile{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return backupFile{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// copyHashed copies src to the new file dst (0600), fsyncs it and returns
// the size and SHA-256 of what it copied.
func copyHashed(src, dst string) (backupFile, error) {
	in, err := os.Open(src)
	if err != nil {
		return backupFile{}, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return backupFile{}, err
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
		return backupFile{}, err
	}
	return backupFile{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// realPath resolves the symbolic links of path, or of its longest existing
// parent, so that two names of one folder compare equal.
func realPath(path string) string {
	path = filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	parent := filepath.Dir(path)
	if parent == path {
		return path
	}
	return filepath.Join(realPath(parent), filepath.Base(path))
}

// readBackupManifest reads and checks the manifest of the backup in dir:
// its format, and that every path stays inside the backup.
func readBackupManifest(dir string) (backupManifest, error) {
	var man backupManifest
	path := filepath.Join(dir, backupManifestName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return man, engram.Errorf(engram.ENOTFOUND, "%s is not an engram backup: it has no %s", dir, backupManifestName)
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
		return engram.Errorf(engram.EINVALID, "backup %s is damaged: %s %s", dir, backupManifestName, fmt.Sprintf(format, args...))
	}
	if len(b) > maxManifestBytes {
		return man, bad("is over %d bytes", maxManifestBytes)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		return man, bad("does not parse: %v", err)
	}
	if man.Version != backupFormat {
		return man, engram.Errorf(engram.EUNSUPPORTED, "backup %s has format version %d; this engram reads version %d (upgrade engram)",
			dir, man.Version, backupFormat)
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
		case f.Path == backupManifestName || filepath.Base(p) == "LOCK" || f.Path == homedir.ServeFile:
			return man, bad("lists %s, which a backup never holds", f.Path)
		}
		seen[f.Path] = true
	}
	if !seen[homedir.PalaceFile] {
		return man, bad("lists no %s", homedir.PalaceFile)
	}
	return man, nil
}

// copyVerified copies the backup file f from the folder dir to the same
// path under home, hashing it on the way, and fails unless its size and
// SHA-256 are the manifest's.
func copyVerified(dir, home string, f backupFile) error {
	src := filepath.Join(dir, filepath.FromSlash(f.Path))
	dst := filepath.Join(home, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	got, err := copyHashed(src, dst)
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

// checkPalaceCopy checks the restored palace file against the manifest
// before it replaces anything.
func checkPalaceCopy(ctx context.Context, path string, man backupManifest) error {
	info, err := palace.ReadInfo(ctx, path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if info.SchemaVersion != man.Palace.SchemaVersion || info.IndexedSeq != man.Palace.IndexedSeq || info.Turns != man.Palace.Turns {
		return engram.Errorf(engram.EINVALID, "backup palace holds schema %d, %d turns indexed to seq %d; the manifest says schema %d, %d turns to seq %d",
			info.SchemaVersion, info.Turns, info.IndexedSeq, man.Palace.SchemaVersion, man.Palace.Turns, man.Palace.IndexedSeq)
	}
	if info.IndexedSeq > man.Archive.LastSeq {
		return engram.Errorf(engram.EINVALID, "backup palace is indexed to seq %d, past the archive's last seq %d", info.IndexedSeq, man.Archive.LastSeq)
	}
	return nil
}

func isDirPath(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
