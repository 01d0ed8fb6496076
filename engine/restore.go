package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/backupdir"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/internal/fspath"
)

// Backup is a backup folder whose manifest has been read and checked, ready
// to restore into a home.
type Backup struct {
	dir, home string
	man       backupdir.Manifest
}

// RestoreReport is what a restore did.
type RestoreReport struct {
	Turns      int64     // archived turns in the restored home
	LastSeq    int64     // the backup archive's last seq
	CreatedAt  time.Time // when the backup was made
	IndexedSeq int64     // the backup palace's watermark: the indexer caught up from there
	Aside      string    // where the home that was there was moved ("" if none)
}

// OpenBackup reads and checks the manifest of the backup in dir (its
// format, and that every path stays inside the backup) for a restore into
// home. ENOTFOUND when dir holds no backup, EINVALID when the manifest is
// damaged or dir and home overlap, EUNSUPPORTED for a format this engram
// does not read.
func OpenBackup(dir, home string) (*Backup, error) {
	man, err := backupdir.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if real, h := backupdir.RealPath(dir), backupdir.RealPath(home); real == h || fspath.Within(h, real) || fspath.Within(real, h) {
		return nil, engram.Errorf(engram.EINVALID, "backup folder %s and the home %s overlap; restore into another home", dir, home)
	}
	return &Backup{dir: dir, home: home, man: man}, nil
}

// Restore restores the backup into its home: checks every file against the
// manifest's SHA-256, copies the files into a new folder beside the home and
// renames it into place, then opens the home with open and checks that its
// counts match the manifest. A home that holds anything is refused
// (ECONFLICT) unless force, which moves it aside to
// <home>.before-restore-<time>; a home that holds files engram did not write
// is refused even with force (a *homedir.ForeignError): another program's files
// are never moved. The home's lock is held until then, so no
// engram opens it meanwhile; a server running on it must be stopped first.
func (b *Backup) Restore(ctx context.Context, force bool, open func(context.Context) (*Engine, error)) (RestoreReport, error) {
	dir, home, man := b.dir, b.home, b.man
	rep := RestoreReport{LastSeq: man.Archive.LastSeq, CreatedAt: man.CreatedAt, IndexedSeq: man.Palace.IndexedSeq}
	entries, err := os.ReadDir(home)
	exists := err == nil
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return rep, fmt.Errorf("restore: %w", err)
	}
	if err := homedir.Check(home); err != nil {
		return rep, err
	}
	switch {
	case len(entries) > 0 && !force:
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return rep, engram.Errorf(engram.ECONFLICT,
			"home %s holds data (%s); restore into a new home with --home, or --force to move this one aside to %s.before-restore-<time>",
			home, strings.Join(names, ", "), home)
	}
	// The old home's lock is held until the home is moved aside, so that no
	// engram opens it meanwhile; it moves with the folder.
	var lock *archive.DirLock
	if exists && backupdir.IsDir(filepath.Join(home, homedir.ArchiveDir)) {
		if lock, err = archive.LockDir(filepath.Join(home, homedir.ArchiveDir)); err != nil {
			return rep, err
		}
	}
	unlock := func() {
		if lock != nil {
			lock.Unlock()
			lock = nil
		}
	}
	defer unlock()

	parent := filepath.Dir(home)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return rep, fmt.Errorf("restore: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(home)+".restore-tmp-")
	if err != nil {
		return rep, fmt.Errorf("restore: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	for _, f := range man.Files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if err := backupdir.CopyVerified(dir, tmp, f); err != nil {
			return rep, err
		}
	}
	if err := checkPalaceCopy(ctx, filepath.Join(tmp, homedir.PalaceFile), man); err != nil {
		return rep, err
	}

	aside := ""
	if exists {
		if len(entries) > 0 {
			aside = fmt.Sprintf("%s.before-restore-%s", home, time.Now().UTC().Format("20060102T150405.000000000Z"))
			if err := os.Rename(home, aside); err != nil {
				return rep, fmt.Errorf("restore: move the old home aside: %w", err)
			}
		} else if err := os.Remove(home); err != nil {
			return rep, fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, home); err != nil {
		if aside != "" {
			os.Rename(aside, home)
		}
		return rep, fmt.Errorf("restore: %w", err)
	}
	done = true
	unlock()
	if err := atomicfile.SyncDir(parent); err != nil {
		return rep, fmt.Errorf("restore: %w", err)
	}

	// Open the restored home as any command would: the indexer catches the
	// palace up with the archive turns the palace snapshot did not hold.
	e, err := open(ctx)
	if err != nil {
		return rep, err
	}
	defer e.Close()
	st, err := e.archive.Stats(ctx)
	if err != nil {
		return rep, err
	}
	palaceTurns, err := e.palace.CountTurns(ctx, "")
	if err != nil {
		return rep, err
	}
	switch last := e.archive.LastSeq(); {
	case last != man.Archive.LastSeq || st.Turns != man.Archive.Turns:
		return rep, engram.Errorf(engram.EINTERNAL, "restored into %s, but its archive holds %d turns up to seq %d; the manifest says %d up to %d",
			home, st.Turns, last, man.Archive.Turns, man.Archive.LastSeq)
	case e.indexer.Indexed() != last || palaceTurns != st.Turns:
		return rep, engram.Errorf(engram.EINTERNAL, "restored into %s, but its palace holds %d turns indexed to seq %d, for %d archived turns up to seq %d",
			home, palaceTurns, e.indexer.Indexed(), st.Turns, last)
	}
	rep.Turns, rep.Aside = st.Turns, aside
	return rep, nil
}
