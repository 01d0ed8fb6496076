package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/backupdir"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine/archives"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/internal/fspath"
	"github.com/engram-dev/engram/palace"
)

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
		return engram.BackupReport{}, archives.ErrFilesOnly("engram backup", "back up the database with pg_dump, or write its turns as JSONL files with engram archive export")
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
	f, ok := e.file()
	if !ok {
		return engram.BackupReport{}, &engram.Error{Code: engram.EUNSUPPORTED, Message: "this home's palace is in a database server, which engram backup does not copy: " +
			"back it up with the database's own tools (pg_dump) and engram archive export (docs/operations.md)"}
	}
	dir := filepath.Clean(req.Dir)
	if !filepath.IsAbs(dir) {
		return engram.BackupReport{}, engram.FieldError("dir", "dir %q must be an absolute path", req.Dir)
	}
	home := backupdir.RealPath(e.cfg.Home)
	if real := backupdir.RealPath(dir); real == home || fspath.Within(home, real) || fspath.Within(real, home) {
		return engram.BackupReport{}, engram.FieldError("dir",
			"backup folder %s and the home %s overlap (one holds the other): a backup must not be lost with the home, nor replace it; choose a folder outside the home", dir, e.cfg.Home)
	}
	replace, err := backupdir.CheckDir(dir, req.Force)
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

	man := backupdir.Manifest{Version: backupdir.Format, CreatedAt: time.Now().UTC(), EngramVersion: e.cfg.Version}
	pinfo, err := f.Backup(ctx, filepath.Join(tmp, homedir.PalaceFile))
	if err != nil {
		return engram.BackupReport{}, err
	}
	man.Palace = backupdir.Palace{SchemaVersion: pinfo.SchemaVersion, IndexedSeq: pinfo.IndexedSeq, Turns: pinfo.Turns}
	pf, err := backupdir.HashFile(filepath.Join(tmp, homedir.PalaceFile))
	if err != nil {
		return engram.BackupReport{}, err
	}
	man.Files = append(man.Files, backupdir.File{Path: homedir.PalaceFile, Size: pf.Size, SHA256: pf.SHA256})

	ainfo, err := e.archive.Backup(ctx, filepath.Join(tmp, homedir.ArchiveDir))
	if err != nil {
		return engram.BackupReport{}, err
	}
	man.Archive = backupdir.Archive{LastSeq: ainfo.LastSeq, Turns: ainfo.Turns}
	if pinfo.IndexedSeq > ainfo.LastSeq {
		return engram.BackupReport{}, engram.Errorf(engram.EINTERNAL,
			"backup: the palace copy is indexed to seq %d, past the archive copy's last seq %d", pinfo.IndexedSeq, ainfo.LastSeq)
	}
	for _, f := range ainfo.Files {
		man.Files = append(man.Files, backupdir.File{Path: homedir.ArchiveDir + "/" + f.Path, Size: f.Size, SHA256: f.SHA256})
	}

	if size, sum, ok, err := e.journal.Backup(filepath.Join(tmp, archive.CorrectionsFile)); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: copy %s: %w", archive.CorrectionsFile, err)
	} else if ok {
		man.Files = append(man.Files, backupdir.File{Path: archive.CorrectionsFile, Size: size, SHA256: sum})
	}

	cf, err := backupdir.CopyHashed(filepath.Join(e.cfg.Home, config.ConfigFile), filepath.Join(tmp, config.ConfigFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return engram.BackupReport{}, fmt.Errorf("backup: copy %s: %w", config.ConfigFile, err)
	default:
		man.Files = append(man.Files, backupdir.File{Path: config.ConfigFile, Size: cf.Size, SHA256: cf.SHA256})
	}
	slices.SortFunc(man.Files, func(a, b backupdir.File) int { return strings.Compare(a.Path, b.Path) })

	b, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return engram.BackupReport{}, err
	}
	if err := atomicfile.WriteFile(filepath.Join(tmp, backupdir.ManifestName), append(b, '\n'), 0o600); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: write the manifest: %w", err)
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return engram.BackupReport{}, fmt.Errorf("backup: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return engram.BackupReport{}, err
	}
	if err := backupdir.SwapInto(tmp, dir, replace); err != nil {
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

// checkPalaceCopy checks the restored palace file against the manifest
// before it replaces anything.
func checkPalaceCopy(ctx context.Context, path string, man backupdir.Manifest) error {
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
