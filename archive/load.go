package archive

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// load reads every day file at Open: it rebuilds the id map, the per-file
// ranges, the tail cache and LastSeq, and recovers from a crash.
func (a *Archive) load() error {
	if err := a.removeStaleTemps(); err != nil {
		return err
	}
	days, err := a.listDays()
	if err != nil {
		return err
	}
	for _, day := range days {
		if err := a.loadFile(day); err != nil {
			return err
		}
	}
	a.ids.trim()
	if n := len(a.files); n > 0 {
		// A last file holding no readable turn still sets a floor on
		// received_at, or the next write could go to an earlier day file
		// and break name order == seq order.
		if start, err := time.Parse(time.DateOnly, a.files[n-1].day); err == nil && start.After(a.lastRecv) {
			a.lastRecv = start
		}
	}
	return nil
}

// listDays returns the days that have a file, in order. Entries that are
// not <YYYY>/<MM>/<YYYY-MM-DD>.jsonl are logged and left alone.
func (a *Archive) listDays() ([]string, error) {
	var days []string
	years, err := a.fs.ReadDir(a.dir)
	if err != nil {
		return nil, fmt.Errorf("archive: list %s: %w", a.dir, err)
	}
	for _, y := range years {
		if !y.IsDir() || !allDigits(y.Name(), 4) {
			continue // LOCK, quarantine/ and whatever else lives at the top
		}
		ydir := filepath.Join(a.dir, y.Name())
		months, err := a.fs.ReadDir(ydir)
		if err != nil {
			return nil, fmt.Errorf("archive: list %s: %w", ydir, err)
		}
		for _, m := range months {
			mdir := filepath.Join(ydir, m.Name())
			if !m.IsDir() || !allDigits(m.Name(), 2) {
				a.log.Warn("archive: not an archive month directory; ignored", logKeyPath, mdir)
				continue
			}
			entries, err := a.fs.ReadDir(mdir)
			if err != nil {
				return nil, fmt.Errorf("archive: list %s: %w", mdir, err)
			}
			for _, e := range entries {
				if isRewriteTemp(e.Name()) {
					// A rewrite a crash interrupted: the day file is
					// still the old one, whole.
					tmp := filepath.Join(mdir, e.Name())
					if err := a.fs.Remove(tmp); err != nil {
						return nil, fmt.Errorf("archive: remove stale temp file: %w", err)
					}
					a.log.Warn("archive: removed the temporary file of an interrupted rewrite", logKeyPath, tmp)
					continue
				}
				day, ok := strings.CutSuffix(e.Name(), fileExt)
				if _, perr := time.Parse(time.DateOnly, day); !ok || perr != nil || e.IsDir() ||
					day[0:4] != y.Name() || day[5:7] != m.Name() {
					a.log.Warn("archive: not an archive file; ignored", logKeyPath, filepath.Join(mdir, e.Name()))
					continue
				}
				days = append(days, day)
			}
		}
	}
	return days, nil // ReadDir sorts by name, so days are in order
}

// loadFile scans one day file. A complete line that does not decode stays
// where it is (it may be repaired by hand; it is counted and logged). A torn
// last line, the mark of a crash in the middle of a write, is copied to the
// quarantine directory and cut off, since the next write would glue its
// first line onto it.
func (a *Archive) loadFile(day string) error {
	path := a.dayPath(day)
	f, err := a.fs.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("archive: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("archive: stat %s: %w", path, err)
	}
	size := st.Size()
	fi := fileInfo{day: day, path: path}
	end, err := eachLine(f, size, func(line []byte, num int, _ int64) error {
		t, err := DecodeLine(line)
		if err != nil {
			a.stats.CorruptLines++
			a.log.Warn("archive: unreadable line kept in place and skipped; engram doctor names it and its fix (engram repair restores it from the palace)",
				logKeyPath, path, logKeyLine, num, logKeyErr, err)
			return nil
		}
		if t.Seq <= a.lastSeq {
			a.stats.CorruptLines++
			a.log.Warn("archive: line with a seq out of order kept in place and skipped",
				logKeyPath, path, logKeyLine, num, logKeySeq, t.Seq)
			return nil
		}
		_, wasGone := a.goneIDs[t.ID]
		if s, dup := a.ids.get(t.ID); dup && !wasGone {
			// Two lines, one id: only a hand edit or a copied file does
			// this. Both stay readable; a re-send maps to the first.
			a.log.Warn("archive: id archived twice; re-sends map to the first",
				logKeyPath, path, logKeyLine, num, logKeyID, t.ID, logKeySeq, s)
			a.copies[t.ID] = append(a.copies[t.ID], t.Seq)
		} else {
			// New, or archived again after it was forgotten.
			a.ids.set(t.ID, t.Seq)
			delete(a.goneIDs, t.ID)
			if t.IsTombstone() {
				a.goneIDs[t.ID] = struct{}{}
			}
		}
		a.lastSeq = t.Seq
		if t.ReceivedAt.After(a.lastRecv) {
			a.lastRecv = t.ReceivedAt
		}
		fi.add(&t)
		a.tail.push(t)
		if t.IsTombstone() {
			a.stats.Forgotten++
		} else {
			a.stats.Turns++
			a.stats.countRedaction(&t, 1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("archive: read %s: %w", path, err)
	}
	if end < size {
		if err := a.quarantineTail(f, day, end, size); err != nil {
			return fmt.Errorf("archive: quarantine the torn end of %s: %w", path, err)
		}
	}
	fi.size = end
	a.files = append(a.files, fi)
	return nil
}

// quarantineTail moves bytes [from, to) of a day file, a torn last line,
// to <dir>/quarantine/<day>.<unix-nanos>.torn and cuts the file at from.
// The copy is durable before the cut, so a crash in between loses nothing.
func (a *Archive) quarantineTail(f File, day string, from, to int64) error {
	qdir := filepath.Join(a.dir, quarantineDir)
	name := filepath.Join(qdir, fmt.Sprintf("%s.%d.torn", day, a.now().UnixNano()))
	tmp := name + tempSuffix
	q, err := a.createFile(tmp, os.O_WRONLY)
	if err != nil {
		return err
	}
	_, err = io.Copy(q, io.NewSectionReader(f, from, to-from))
	if err == nil {
		err = a.sync(q)
	}
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = a.fs.Rename(tmp, name)
	}
	if err == nil {
		err = a.syncDir(qdir)
	}
	if err != nil {
		a.fs.Remove(tmp)
		return err
	}
	if err := f.Truncate(from); err != nil {
		return err
	}
	if err := a.sync(f); err != nil {
		return err
	}
	a.stats.TornTails++
	a.log.Warn("archive: torn last line (a crash during a write) moved to quarantine",
		logKeyPath, a.dayPath(day), logKeyBytes, to-from, logKeyTo, name)
	return nil
}

// removeStaleTemps removes temp files a crash left in the quarantine
// directory; their content is still in the day file they were copied from.
func (a *Archive) removeStaleTemps() error {
	qdir := filepath.Join(a.dir, quarantineDir)
	entries, err := a.fs.ReadDir(qdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("archive: list %s: %w", qdir, err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), tempSuffix) {
			if err := a.fs.Remove(filepath.Join(qdir, e.Name())); err != nil {
				return fmt.Errorf("archive: remove stale temp file: %w", err)
			}
		}
	}
	return nil
}

func allDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
