package archive

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/engram-dev/engram"
)

// rewriteSuffix ends the temporary file a rewrite writes next to the day
// file it replaces; Open removes any a crash left.
const rewriteSuffix = ".rewrite" + tempSuffix

// Edit returns the new version of an archived turn and true, or false to
// leave the turn as it is. The new version keeps the turn's id and seq.
type Edit func(engram.Turn) (engram.Turn, bool)

// Rewritten is one turn a Rewrite changed: as it was and as it is now.
type Rewritten struct {
	Old, New engram.Turn
	// Damaged is set when the line was damaged (RewriteDamaged): Old is
	// the copy another store kept of the turn.
	Damaged bool
}

// RewriteResult says what Rewrite did.
type RewriteResult struct {
	// Changed are the turns rewritten, in seq order.
	Changed []Rewritten
	// Copies are the other lines of an id archived on more than one line
	// (a hand edit or a copied file), rewritten with it: the palace holds
	// only the first.
	Copies []Rewritten
	// Unchanged are the ids named whose turn edit left as it was;
	// Unknown those no readable line holds.
	Unchanged []string
	Unknown   []string
	// Files counts the day files rewritten.
	Files int
	// Journal is the number of the entry of the PostgreSQL archive's
	// rewrite journal that records the rewrite (0 when none does: the
	// file archive, or nothing changed).
	Journal int64
}

// rewriteReq is a Rewrite waiting for the writer.
type rewriteReq struct {
	ids  []string
	edit Edit
	// damaged, for a RewriteDamaged, holds by day file and line number
	// the turns whose damaged lines to write again.
	damaged map[string]map[int]engram.Turn
}

// Forget rewrites the lines of the turns with the given ids as tombstones
// holding only the id, the seq, the receive time and f (see Tombstone): the
// turns' content, names and meta are gone from the archive's files. Turns
// forgotten before are reported as Unchanged. A re-sent forgotten id is a
// duplicate unless the turn asks to be resurrected (engram.Turn.Resurrect).
// Errors are those of Rewrite.
func (a *Archive) Forget(ctx context.Context, ids []string, f engram.Forgotten) (RewriteResult, error) {
	if len(f.Reason) > engram.MaxReasonBytes {
		return RewriteResult{}, engram.FieldError("reason", "reason is over %d bytes", engram.MaxReasonBytes)
	}
	return a.Rewrite(ctx, ids, func(t engram.Turn) (engram.Turn, bool) {
		if t.IsTombstone() {
			return t, false
		}
		return Tombstone(t, f), true
	})
}

// Rewrite replaces the lines of the turns with the given ids by the
// versions edit returns. The writer goroutine does it between two group
// commits, so appends wait meanwhile: each day file holding one of the
// turns is written whole to a temporary file next to it (every other line
// byte for byte, the new lines with their checksums), fsynced, and renamed
// over the day file, whose directory is then fsynced. A crash at any point
// leaves the old file or the new one, never a mix; Open removes a
// temporary file a crash left. Readers that opened the old file go on
// reading it; the tail cache and the per-file counts change with the
// rename. A Backup in progress finishes before a rewrite starts.
//
// A new version must keep the id and seq of the turn and encode as a line
// (EINVALID otherwise, and nothing is written). Errors: ENOSPACE when the
// disk is full, EUNAVAILABLE for another write failure (nothing of the
// call changed then; a failed fsync poisons the archive as for Append) and
// after Close; ctx.Err() when ctx ends before the writer takes the call.
func (a *Archive) Rewrite(ctx context.Context, ids []string, edit Edit) (RewriteResult, error) {
	if err := ctx.Err(); err != nil {
		return RewriteResult{}, err
	}
	return a.rewrite(ctx, &rewriteReq{ids: slices.Clone(ids), edit: edit})
}

// rewrite hands rw to the writer and waits for its answer.
func (a *Archive) rewrite(ctx context.Context, rw *rewriteReq) (RewriteResult, error) {
	r := &request{ctx: ctx, rewrite: rw, done: make(chan response, 1)}
	select {
	case a.reqs <- r:
	case <-a.ctx.Done():
		return RewriteResult{}, errClosed()
	case <-ctx.Done():
		return RewriteResult{}, ctx.Err()
	}
	resp := <-r.done
	if resp.rewrite == nil {
		return RewriteResult{}, resp.err
	}
	return *resp.rewrite, resp.err
}

// DamagedLines returns the turns of turns (copies another store kept:
// the palace's) whose archive line is damaged (a checksum that does not
// match, a line that does not parse; see Verify), by day file and line
// number: a damaged line that held the turn's seq and, where it still
// reads as one, its id. It rereads the whole archive.
func (a *Archive) DamagedLines(ctx context.Context, turns []engram.Turn) (map[string]map[int]engram.Turn, error) {
	out := map[string]map[int]engram.Turn{}
	if len(turns) == 0 {
		return out, nil
	}
	rep, err := a.Verify(ctx)
	if err != nil {
		return nil, err
	}
	bySeq := map[int64]Problem{}
	last := a.LastSeq()
	for _, p := range rep.Problems {
		// A damaged line after the last readable one is left: the next
		// append takes the seq after that readable one.
		if p.Damaged() && p.Seq > 0 && p.Seq < last {
			bySeq[p.Seq] = p
		}
	}
	for _, t := range turns {
		p, ok := bySeq[t.Seq]
		if !ok || p.ID != "" && p.ID != t.ID || t.IsTombstone() {
			continue
		}
		if out[p.Path] == nil {
			out[p.Path] = map[int]engram.Turn{}
		}
		out[p.Path][p.Line] = t
	}
	return out, nil
}

// RewriteDamaged writes the damaged lines of turns (copies another store
// kept of them, the palace's, as Repair uses; see DamagedLines) again as
// edit makes them: a forget's tombstone, or the redacted turn. The turn a
// line held is known only from that copy: a forget or a redaction must
// reach it, though the archive skips the line. Unlike Repair it keeps no
// copy of the damaged lines: what a forget or a redaction removes must be
// in no file. The lines are written as Rewrite writes them (a temporary
// file, fsync, rename, between two group commits); each one written is
// readable again, its turn known by its id. A turn whose line is not
// damaged is Unknown, one edit leaves Unchanged (its line stays damaged).
// Errors are those of Rewrite.
func (a *Archive) RewriteDamaged(ctx context.Context, turns []engram.Turn, edit Edit) (RewriteResult, error) {
	lines, err := a.DamagedLines(ctx, turns)
	if err != nil {
		return RewriteResult{}, err
	}
	found := map[string]bool{}
	for _, byLine := range lines {
		for _, t := range byLine {
			found[t.ID] = true
		}
	}
	var unknown []string
	for _, t := range turns {
		if !found[t.ID] {
			unknown = append(unknown, t.ID)
		}
	}
	res := RewriteResult{}
	if len(lines) > 0 {
		var err error
		if res, err = a.rewrite(ctx, &rewriteReq{damaged: lines, edit: edit}); err != nil {
			return res, err
		}
	}
	res.Unknown = append(res.Unknown, unknown...)
	return res, nil
}

// doRewriteDamaged runs a RewriteDamaged request in the writer goroutine.
func (a *Archive) doRewriteDamaged(rq *rewriteReq) (RewriteResult, error) {
	var res RewriteResult
	if a.poison != nil {
		return res, a.poison
	}
	a.mu.RLock()
	files := slices.Clone(a.files)
	a.mu.RUnlock()
	a.rwMu.Lock()
	defer a.rwMu.Unlock()
	found := map[string]bool{}
	changed := map[string]bool{}
	for _, fi := range files {
		fix := rq.damaged[fi.path]
		if len(fix) == 0 {
			continue
		}
		done, err := a.rewriteFile(fi, nil, fix, rq.edit, found)
		if err != nil {
			return res, err
		}
		if len(done) > 0 {
			res.Files++
		}
		for _, c := range done {
			res.Changed = append(res.Changed, c)
			changed[c.New.ID] = true
		}
	}
	for _, byLine := range rq.damaged {
		for _, t := range byLine {
			switch {
			case !found[t.ID]:
				res.Unknown = append(res.Unknown, t.ID)
			case !changed[t.ID]:
				res.Unchanged = append(res.Unchanged, t.ID)
			}
		}
	}
	return res, nil
}

// Forgotten reports whether id names a forgotten turn (its latest line is
// a tombstone).
func (a *Archive) Forgotten(id string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := a.goneIDs[id]
	return ok
}

// Known reports whether id is archived (forgotten or not).
func (a *Archive) Known(id string) bool {
	<-a.idsReady
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := a.ids.get(id)
	return ok
}

// Tombstones returns the forgotten ids with the seqs of their tombstones.
func (a *Archive) Tombstones() map[string]int64 {
	select {
	case <-a.idsReady:
	default:
		// No write before the id map is complete: the checkpoint's
		// tombstones are the archive's (a start's check of the forgets
		// the palace may have missed does not wait for the map).
		return maps.Clone(a.ckGone)
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make(map[string]int64, len(a.goneIDs))
	for id := range a.goneIDs {
		out[id], _ = a.ids.get(id)
	}
	return out
}

// doRewrite runs a rewrite request in the writer goroutine.
func (a *Archive) doRewrite(rq *rewriteReq) (RewriteResult, error) {
	if rq.damaged != nil {
		return a.doRewriteDamaged(rq)
	}
	var res RewriteResult
	if a.poison != nil {
		return res, a.poison
	}
	// Which file holds each seq.
	a.mu.RLock()
	files := slices.Clone(a.files)
	a.mu.RUnlock()
	byFile := map[int]map[int64]bool{}
	seen := map[string]bool{}
	for _, id := range rq.ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		seq, ok := a.ids.get(id)
		if !ok {
			res.Unknown = append(res.Unknown, id)
			continue
		}
		for _, s := range append([]int64{seq}, a.copies[id]...) {
			i := sort.Search(len(files), func(i int) bool { return files[i].lastSeq >= s })
			if i == len(files) || files[i].firstSeq == 0 || files[i].firstSeq > s {
				continue // not readable: Unknown below unless another line is
			}
			if byFile[i] == nil {
				byFile[i] = map[int64]bool{}
			}
			byFile[i][s] = true
		}
	}
	order := make([]int, 0, len(byFile))
	for i := range byFile {
		order = append(order, i)
	}
	slices.Sort(order)

	a.rwMu.Lock() // no Backup copies a file while it is replaced
	defer a.rwMu.Unlock()
	found := map[string]bool{}
	changed := map[string]bool{}
	for _, i := range order {
		done, err := a.rewriteFile(files[i], byFile[i], nil, rq.edit, found)
		if err != nil {
			return res, err
		}
		if len(done) > 0 {
			res.Files++
		}
		for _, c := range done {
			if s, _ := a.ids.get(c.New.ID); s == c.New.Seq {
				res.Changed = append(res.Changed, c)
				changed[c.New.ID] = true
			} else {
				res.Copies = append(res.Copies, c)
			}
		}
	}
	res.Unknown = res.Unknown[:0]
	for _, id := range rq.ids {
		if !seen[id] {
			continue
		}
		seen[id] = false
		switch {
		case !found[id]:
			res.Unknown = append(res.Unknown, id)
		case !changed[id]:
			res.Unchanged = append(res.Unchanged, id)
		}
	}
	return res, nil
}

// rewriteFile writes the day file of fi again with the turns of seqs
// edited, and the damaged lines of fix (by line number) written from the
// turns it holds for them as edited, renames it over the old one and
// updates what readers see. found collects the ids of the turns read.
func (a *Archive) rewriteFile(fi fileInfo, seqs map[int64]bool, fix map[int]engram.Turn, edit Edit, found map[string]bool) ([]Rewritten, error) {
	f, err := a.fs.OpenFile(fi.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, a.failure("open "+fi.path, err)
	}
	defer f.Close()
	tmp := fi.path + rewriteSuffix
	a.fs.Remove(tmp) // a leftover of a failed rewrite
	out, err := a.createFile(tmp, os.O_WRONLY)
	if err != nil {
		return nil, a.failure("create "+tmp, err)
	}
	w := bufio.NewWriterSize(out, 256<<10)
	var changed []Rewritten
	var size int64
	var editErr error
	_, err = eachLine(f, fi.size, func(line []byte, num int, _ int64) error {
		t, derr := DecodeLine(line)
		damaged := false
		if ft, ok := fix[num]; ok && derr != nil {
			// Still the damaged line DamagedLines found: what it reads
			// as, if anything, is the turn's.
			var loose looseLine
			_ = json.Unmarshal(line, &loose)
			if (loose.Seq == 0 || loose.Seq == ft.Seq) && (loose.ID == "" || loose.ID == ft.ID) {
				t, derr, damaged = ft, nil, true
			}
		}
		if derr == nil && (damaged || seqs[t.Seq]) {
			found[t.ID] = true
			if nt, ok := edit(t); ok {
				if nt.ID != t.ID || nt.Seq != t.Seq {
					editErr = engram.Errorf(engram.EINVALID, "archive: a rewrite must keep the id and seq of turn %d", t.Seq)
					return editErr
				}
				b, eerr := EncodeLine(nt)
				if eerr != nil {
					editErr = engram.Errorf(engram.EINVALID, "archive: the new version of turn %d: %v", t.Seq, eerr)
					return editErr
				}
				changed = append(changed, Rewritten{Old: t, New: nt, Damaged: damaged})
				line = b
				if len(changed) == 1 && crashHook != nil {
					w.Flush()
					crashPoint("rewrite-partial")
				}
			}
		}
		size += int64(len(line))
		_, werr := w.Write(line)
		return werr
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil && len(changed) > 0 {
		err = a.sync(out)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(changed) == 0 {
		a.fs.Remove(tmp)
		if editErr != nil {
			return nil, editErr
		}
		if err != nil {
			return nil, a.failure("rewrite "+fi.path, err)
		}
		return nil, nil
	}
	crashPoint("rewrite-synced")

	a.mu.Lock()
	current := a.cur != nil && a.curDay == fi.day
	if current {
		// Its lines are fsynced; the writer reopens the new file at the
		// next append.
		a.cur.Close()
		a.cur = nil
	}
	err = a.fs.Rename(tmp, fi.path)
	if err == nil {
		a.noteRewritten(fi.day, size, changed)
	}
	a.mu.Unlock()
	if err != nil {
		a.fs.Remove(tmp)
		return nil, a.failure("rename "+tmp, err)
	}
	crashPoint("rewrite-renamed")
	if err := a.syncDir(filepath.Dir(fi.path)); err != nil {
		return nil, a.failure("fsync the directory of "+fi.path, err)
	}
	return changed, nil
}

// noteRewritten takes a rewritten day file's new lines into the file's
// size and counts, the archive's counts, the forgotten ids and the tail
// cache. The caller holds a.mu.
func (a *Archive) noteRewritten(day string, size int64, changed []Rewritten) {
	for i := range a.files {
		if a.files[i].day != day {
			continue
		}
		a.files[i].size = size
		a.files[i].gen++
		for _, c := range changed {
			if c.Damaged {
				a.restoreDamaged(&a.files[i], c.New)
				continue
			}
			a.stats.countRedaction(&c.Old, -1)
			a.stats.countRedaction(&c.New, 1)
			switch was, now := c.Old.IsTombstone(), c.New.IsTombstone(); {
			case !was && now:
				a.files[i].gone++
				a.stats.Turns--
				a.stats.Forgotten++
				a.goneIDs[c.New.ID] = struct{}{}
			case was && !now:
				a.files[i].gone--
				a.stats.Turns++
				a.stats.Forgotten--
				delete(a.goneIDs, c.New.ID)
			}
		}
	}
	for _, c := range changed {
		if c.Damaged {
			a.tail.insert(c.New)
		} else {
			a.tail.replace(c.New)
		}
	}
}

// restoreDamaged counts t, the new version of a damaged line, as a
// readable line of fi: a tombstone, or a turn. a.mu is held.
func (a *Archive) restoreDamaged(fi *fileInfo, t engram.Turn) {
	if a.stats.CorruptLines > 0 {
		a.stats.CorruptLines--
	}
	fi.turns++
	if fi.firstSeq == 0 || t.Seq < fi.firstSeq {
		fi.firstSeq = t.Seq
	}
	fi.lastSeq = max(fi.lastSeq, t.Seq)
	if _, known := a.ids.get(t.ID); !known {
		a.ids.set(t.ID, t.Seq)
	}
	if t.IsTombstone() {
		fi.gone++
		a.stats.Forgotten++
		if s, _ := a.ids.get(t.ID); s == t.Seq {
			a.goneIDs[t.ID] = struct{}{}
		}
		return
	}
	a.stats.Turns++
	a.stats.countRedaction(&t, 1)
	fi.addTS(t.TS)
}

// crashHook, when set (tests), is called at the named points of a rewrite.
var crashHook func(point string)

func crashPoint(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

// isRewriteTemp reports whether name is a rewrite's temporary file.
func isRewriteTemp(name string) bool { return strings.HasSuffix(name, rewriteSuffix) }

// openCommitted opens the day file of fi (a snapshot) for reading and
// returns the length to read: fi's committed length, or, when the file
// was rewritten since the snapshot, the new file's.
func (a *Archive) openCommitted(fi *fileInfo) (File, int64, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	f, err := a.fs.OpenFile(fi.path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("archive: open %s: %w", fi.path, err)
	}
	for _, cur := range a.files {
		if cur.day == fi.day && cur.gen != fi.gen {
			return f, cur.size, nil
		}
	}
	return f, fi.size, nil
}
