package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/engram-dev/engram"
)

// BackupFile is a file Backup copied.
type BackupFile struct {
	// Path is relative to the archive directory, with forward slashes
	// (2026/05/2026-05-01.jsonl, quarantine/2026-05-01.1746108180000000000.torn).
	Path   string
	Size   int64
	SHA256 string // lowercase hex
}

// BackupInfo describes the copy Backup made.
type BackupInfo struct {
	// LastSeq is the seq of the last turn in the copy: every turn up to it
	// that was readable in the archive is in the copy, and none after it.
	LastSeq int64
	// Turns counts the readable turns in the copy.
	Turns int64
	// Files lists the copied files in name order.
	Files []BackupFile
}

// Backup copies the archive into dst, a directory that must not exist or
// be empty, while Appends go on. The copy is a cut at one commit: under the
// lock the writer takes to publish a commit, Backup records every day file
// with its committed length (every byte up to it fsynced, ending at a line
// end) and LastSeq; it then copies each file up to that length. The files
// are append-only and a failed write is cut back to the committed length,
// so those bytes never change: the copy holds complete lines only, the
// turns 1..LastSeq, whatever is appended meanwhile. The quarantine
// directory is copied too (its files are written at Open only); the LOCK
// is not.
//
// Files are created 0600, directories 0700, each fsynced, with its
// directory. Backup returns EUNAVAILABLE after Close and ctx.Err() when
// ctx ends; dst may then hold part of a copy, for the caller to remove.
func (a *Archive) Backup(ctx context.Context, dst string) (BackupInfo, error) {
	a.rwMu.RLock()
	defer a.rwMu.RUnlock()
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return BackupInfo{}, errClosed()
	}
	files := slices.Clone(a.files)
	info := BackupInfo{LastSeq: a.lastSeq}
	a.mu.RUnlock()
	for _, fi := range files {
		info.Turns += fi.turns - fi.gone
	}

	dst = filepath.Clean(dst)
	if err := a.checkEmptyDir(dst); err != nil {
		return BackupInfo{}, err
	}
	for _, fi := range files {
		bf, err := a.copyPrefix(ctx, fi.path, dst, fi.size, true)
		if err != nil {
			return BackupInfo{}, err
		}
		info.Files = append(info.Files, bf)
	}

	qdir := filepath.Join(a.dir, quarantineDir)
	entries, err := a.fs.ReadDir(qdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return BackupInfo{}, fmt.Errorf("archive: backup: list %s: %w", qdir, err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), tempSuffix) {
			continue // a temp file is a quarantine in progress or a crash's leftover
		}
		path := filepath.Join(qdir, e.Name())
		st, err := a.fs.Stat(path)
		if err != nil {
			return BackupInfo{}, fmt.Errorf("archive: backup: %w", err)
		}
		bf, err := a.copyPrefix(ctx, path, dst, st.Size(), false)
		if err != nil {
			return BackupInfo{}, err
		}
		info.Files = append(info.Files, bf)
	}
	if err := a.syncDir(dst); err != nil {
		return BackupInfo{}, fmt.Errorf("archive: backup: %w", err)
	}
	return info, nil
}

// checkEmptyDir creates dir if it is missing and refuses one that holds
// anything: Backup never mixes a copy with older files.
func (a *Archive) checkEmptyDir(dir string) error {
	entries, err := a.fs.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := a.ensureDir(dir); err != nil {
			return fmt.Errorf("archive: backup: create %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("archive: backup: %w", err)
	case len(entries) > 0:
		return engram.Errorf(engram.ECONFLICT, "archive backup: %s is not empty", dir)
	}
	return nil
}

// copyPrefix copies the first size bytes of the archive file src to the
// same relative path under dst, fsyncs the copy and returns its hash. With
// lines, it checks that the copy ends at a line end.
func (a *Archive) copyPrefix(ctx context.Context, src, dst string, size int64, lines bool) (BackupFile, error) {
	if err := ctx.Err(); err != nil {
		return BackupFile{}, err
	}
	rel, err := filepath.Rel(a.dir, src)
	if err != nil {
		return BackupFile{}, fmt.Errorf("archive: backup: %w", err)
	}
	in, err := a.fs.OpenFile(src, os.O_RDONLY, 0)
	if err != nil {
		return BackupFile{}, fmt.Errorf("archive: backup: %w", err)
	}
	defer in.Close()
	target := filepath.Join(dst, rel)
	out, err := a.createFile(target, os.O_WRONLY)
	if err != nil {
		return BackupFile{}, fmt.Errorf("archive: backup: create %s: %w", target, err)
	}
	h := sha256.New()
	err = copyN(ctx, io.MultiWriter(out, h), io.NewSectionReader(in, 0, size), size)
	if err == nil && lines && size > 0 {
		err = endsWithNewline(in, size)
	}
	if err == nil {
		err = a.sync(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return BackupFile{}, fmt.Errorf("archive: backup: copy %s: %w", src, err)
	}
	return BackupFile{Path: filepath.ToSlash(rel), Size: size, SHA256: hexSum(h)}, nil
}

// copyN copies exactly n bytes, checking ctx between chunks so that a
// cancelled backup of a large file stops soon.
func copyN(ctx context.Context, w io.Writer, r io.Reader, n int64) error {
	const chunk = 4 << 20
	for n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := io.CopyN(w, r, min(n, chunk))
		n -= m
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("file is %d bytes shorter than its committed length: %w", n, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// endsWithNewline checks that byte size-1 of f is '\n'. A committed length
// always ends at a line end; a copy that ended elsewhere would hold a torn
// line, so the check is cheap insurance.
func endsWithNewline(f io.ReaderAt, size int64) error {
	var b [1]byte
	if _, err := f.ReadAt(b[:], size-1); err != nil {
		return err
	}
	if b[0] != '\n' {
		return fmt.Errorf("committed length %d is not at a line end", size)
	}
	return nil
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// DirLock is the lock of an archive directory taken without opening the
// archive; see LockDir.
type DirLock struct {
	l *lockFile
}

// LockDir takes the lock an open Archive holds on dir (an archive
// directory, which must exist), without reading the archive: a tool that
// replaces the archive's files, such as a restore, holds it so that no
// engram opens the archive meanwhile. It returns an *engram.Error with code
// ELOCKED when an Archive (in this process or another) holds dir.
func LockDir(dir string) (*DirLock, error) {
	l, err := acquireLock(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	return &DirLock{l: l}, nil
}

// Unlock releases the lock.
func (d *DirLock) Unlock() error { return d.l.release() }
