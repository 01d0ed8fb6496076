package archive

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/engram-dev/engram"
)

// load reads every day file at Open: it rebuilds the id map, the per-file
// ranges, the tail cache and LastSeq, and recovers from a crash. After a
// clean Close it takes them from the checkpoint instead (checkpoint.go).
func (a *Archive) load() error {
	if err := a.removeStaleTemps(); err != nil {
		return err
	}
	days, err := a.listDays()
	if err != nil {
		return err
	}
	a.fromCheckpoint = a.loadCheckpoint(days)
	if !a.fromCheckpoint {
		for _, day := range days {
			if err := a.loadFile(day); err != nil {
				return err
			}
		}
		a.ids.trim()
		close(a.idsReady)
	}
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

// loadBatchLines is the number of lines a load worker decodes at once:
// enough to make handing a batch over cheap, few enough to keep the bytes
// in flight small.
const loadBatchLines = 512

// loadBatch is a run of consecutive complete lines of a day file: copied
// by the reader, decoded by a worker, applied in order by the reader.
type loadBatch struct {
	buf   []byte // the lines' bytes, one after the other
	ends  []int  // where each line ends in buf
	first int    // the number of the first line in its file
	turns []engram.Turn
	errs  []error
	done  chan struct{} // closed when decoded
}

func (b *loadBatch) decode() {
	n := len(b.ends)
	b.turns, b.errs = slices.Grow(b.turns[:0], n)[:n], slices.Grow(b.errs[:0], n)[:n]
	clear(b.turns)
	clear(b.errs)
	start := 0
	for i, end := range b.ends {
		b.turns[i], b.errs[i] = DecodeLine(b.buf[start:end])
		start = end
	}
	close(b.done)
}

// loadFile scans one day file. A complete line that does not decode stays
// where it is (it may be repaired by hand; it is counted and logged). A torn
// last line, the mark of a crash in the middle of a write, is copied to the
// quarantine directory and cut off, since the next write would glue its
// first line onto it. Decoding, most of the time of a start, runs on
// a.loaders goroutines; what the lines mean is applied in file order.
func (a *Archive) loadFile(day string) (err error) {
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

	jobs := make(chan *loadBatch, a.loaders)
	var wg sync.WaitGroup
	for range a.loaders {
		wg.Go(func() {
			for b := range jobs {
				b.decode()
			}
		})
	}
	var pending []*loadBatch // handed to the workers, not applied yet
	var free []*loadBatch    // applied: their buffers are used again
	apply := func(keep int) {
		for len(pending) > keep {
			b := pending[0]
			<-b.done
			a.applyBatch(&fi, b)
			pending = pending[1:]
			free = append(free, b)
		}
	}
	defer func() {
		close(jobs)
		if err == nil {
			apply(0)
		}
		wg.Wait()
	}()
	newBatch := func(first, bytes int) *loadBatch {
		if n := len(free); n > 0 {
			b := free[n-1]
			free = free[:n-1]
			*b = loadBatch{first: first, buf: b.buf[:0], ends: b.ends[:0], turns: b.turns[:0], errs: b.errs[:0], done: make(chan struct{})}
			return b
		}
		return &loadBatch{first: first, buf: make([]byte, 0, bytes), ends: make([]int, 0, loadBatchLines), done: make(chan struct{})}
	}
	cur := newBatch(1, 64<<10)
	send := func() {
		jobs <- cur
		pending = append(pending, cur)
		// The reader runs ahead of the applier by at most two batches a
		// worker: what is in flight stays a few megabytes.
		apply(2 * a.loaders)
		// The next batch's lines are likely as long as these.
		cur = newBatch(cur.first+len(cur.ends), len(cur.buf)+len(cur.buf)/8)
	}
	end, err := eachLine(f, size, func(line []byte, _ int, _ int64) error {
		cur.buf = append(cur.buf, line...)
		cur.ends = append(cur.ends, len(cur.buf))
		if len(cur.ends) == loadBatchLines {
			send()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("archive: read %s: %w", path, err)
	}
	if len(cur.ends) > 0 {
		send()
	}
	apply(0)
	if end < size {
		if err := a.quarantineTail(f, day, end, size); err != nil {
			return fmt.Errorf("archive: quarantine the torn end of %s: %w", path, err)
		}
	}
	fi.size = end
	a.files = append(a.files, fi)
	return nil
}

// applyBatch takes the decoded lines of b into the id map, the file's
// ranges, the tail cache and the counts, in file order.
func (a *Archive) applyBatch(fi *fileInfo, b *loadBatch) {
	for i := range b.turns {
		num, t := b.first+i, &b.turns[i]
		if err := b.errs[i]; err != nil {
			a.stats.CorruptLines++
			a.log.Warn("archive: unreadable line kept in place and skipped; engram doctor names it and its fix (engram repair restores it from the palace)",
				logKeyPath, fi.path, logKeyLine, num, logKeyErr, err)
			continue
		}
		if t.Seq <= a.lastSeq {
			a.stats.CorruptLines++
			a.log.Warn("archive: line with a seq out of order kept in place and skipped",
				logKeyPath, fi.path, logKeyLine, num, logKeySeq, t.Seq)
			continue
		}
		_, wasGone := a.goneIDs[t.ID]
		if s, dup := a.ids.get(t.ID); dup && !wasGone {
			// Two lines, one id: only a hand edit or a copied file does
			// this. Both stay readable; a re-send maps to the first.
			a.log.Warn("archive: id archived twice; re-sends map to the first",
				logKeyPath, fi.path, logKeyLine, num, logKeyID, t.ID, logKeySeq, s)
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
		fi.add(t)
		a.tail.push(*t)
		if t.IsTombstone() {
			a.stats.Forgotten++
		} else {
			a.stats.Turns++
			a.stats.countRedaction(t, 1)
		}
	}
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
