package archive

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/idmap"
)

// A clean Close leaves in the archive's directory what Open would otherwise
// rebuild by reading every line of every day file: the id map, the files'
// ranges, the counts and the tail cache. Reading every line grows with the
// archive (seconds at a million turns); the checkpoint is read in a
// fraction of that, so a server answers at once after a restart.
//
// The checkpoint is only ever a shortcut to the state the files give, never
// a source: Open takes it only when every day file it names is there with
// the size and modification time it had at Close, and no other day file
// is; else it reads the files as before. Open removes it before the first
// write, so a crash can never leave one that disagrees with the files; the
// next start after a crash reads every line, as every start did before.
// Backups and exports copy the day files only.
//
// The id map is most of the checkpoint and of the time to take it (a
// million ids to check and hash). Open reads the checkpoint's bytes and
// takes the rest of the state at once; the ids' own checksum and their map
// are done in the background while the server answers, and the writer waits
// for them (Archive.idsReady). Should the ids' section not check out, the
// map is rebuilt from the day files instead, which the rest of the
// checkpoint was checked against.

// checkpointName is the checkpoint's file in the archive's directory.
const checkpointName = "CHECKPOINT"

// checkpointMagic starts the file; checkpointVersion is the layout of what
// follows, and a checkpoint of another version is not read. (The magic
// names the trailer's layout: version 1's file had another one.)
const (
	checkpointMagic   = "engramc2"
	checkpointVersion = 2
)

// checkpointTrailer is the trailer's length: the header's length and
// CRC-32C, the ids section's CRC-32C and length.
const checkpointTrailer = 8 + 4 + 4 + 8

// checkpoint is what the file holds after the magic: this struct
// gob-encoded (the header), then the ids section: the id map's ids end to
// end (IDBytes of them), their lengths (4 bytes each) and their seqs (8
// bytes each), little-endian, so that a million ids are read as three
// slices, not a million values.
type checkpoint struct {
	Version int
	Files   []checkpointFile
	// IDs and IDBytes count the ids and their bytes.
	IDs, IDBytes int
	// Gone are the forgotten ids, GoneSeqs their tombstones' seqs (what
	// Tombstones answers while the id map loads).
	Gone     []string
	GoneSeqs []int64
	Copies   map[string][]int64
	LastSeq  int64
	LastRecv time.Time
	// The counts of Stats that describe what the files hold. (Named apart
	// from Stats' fields: gob writes the names, and a word a forget or a
	// redaction removed must not stay in a file for a field's sake.)
	Live, Tombstones, RedactedTurns int64
	RuleCounts                      map[string]int64
	// Tail holds the tail cache's turns as archive lines, oldest first;
	// TailFrom is the cache's floor (tailCache.from).
	Tail     []byte
	TailFrom int64

	ids  []byte // not gob-encoded: written after it
	lens []uint32
	seqs []int64
	// section and sectionSum are the ids section as read, and the checksum
	// it must have: checked by idsOf, in the background.
	section    []byte
	sectionSum uint32
}

// checkpointFile is a day file as the checkpoint knows it: its size and
// modification time to check it against, and its ranges.
type checkpointFile struct {
	Day                      string
	Size                     int64
	ModTime                  int64 // Unix nanoseconds
	Turns, FirstSeq, LastSeq int64
	MinTS, MaxTS             time.Time
	HasTS                    bool
	Gone                     int64
}

// writeCheckpoint writes the checkpoint of the archive's state, durably:
// a temporary file, fsynced, renamed into place, the directory fsynced.
// Called by Close once the writer has stopped, so the state is the files'.
func (a *Archive) writeCheckpoint() error {
	if a.stats.CorruptLines > 0 {
		// Their warnings are said at every start, by reading the files.
		return nil
	}
	ck, err := a.checkpointState()
	if err != nil {
		return err
	}
	var header bytes.Buffer
	if err := gob.NewEncoder(&header).Encode(&ck); err != nil {
		return err
	}
	path := filepath.Join(a.dir, checkpointName)
	tmp := path + ".tmp"
	f, err := a.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	sum := crc32.New(castagnoli)
	count := &countingWriter{w: io.MultiWriter(f, sum)}
	bw := bufio.NewWriterSize(count, 1<<20)
	werr := writeAll(f, []byte(checkpointMagic))
	if werr == nil {
		werr = writeAll(f, header.Bytes())
	}
	if werr == nil {
		werr = writeAll(bw, ck.ids)
	}
	if werr == nil {
		werr = binary.Write(bw, binary.LittleEndian, ck.lens)
	}
	if werr == nil {
		werr = binary.Write(bw, binary.LittleEndian, ck.seqs)
	}
	if werr == nil {
		werr = bw.Flush()
	}
	if werr == nil {
		trailer := binary.BigEndian.AppendUint64(nil, uint64(header.Len()))
		trailer = binary.BigEndian.AppendUint32(trailer, crc32.Checksum(header.Bytes(), castagnoli))
		trailer = binary.BigEndian.AppendUint32(trailer, sum.Sum32())
		werr = writeAll(f, binary.BigEndian.AppendUint64(trailer, uint64(count.n)))
	}
	if werr == nil {
		werr = a.sync(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = a.fs.Rename(tmp, path)
	}
	if werr != nil {
		a.fs.Remove(tmp)
		return werr
	}
	return a.syncDir(a.dir)
}

// checkpointState gathers the state the checkpoint records.
func (a *Archive) checkpointState() (checkpoint, error) {
	ck := checkpoint{
		Version: checkpointVersion, Copies: a.copies, LastSeq: a.lastSeq, LastRecv: a.lastRecv,
		Live: a.stats.Turns, Tombstones: a.stats.Forgotten, RedactedTurns: a.stats.Redacted, RuleCounts: a.stats.Secrets,
		TailFrom: a.tail.from, seqs: a.ids.seqs,
	}
	ck.ids, ck.lens = a.ids.rows.Export()
	ck.IDs, ck.IDBytes = len(ck.lens), len(ck.ids)
	for _, fi := range a.files {
		st, err := a.fs.Stat(fi.path)
		if err != nil {
			return ck, err
		}
		if st.Size() != fi.size {
			return ck, fmt.Errorf("%s is %d bytes, the archive committed %d", fi.path, st.Size(), fi.size)
		}
		ck.Files = append(ck.Files, checkpointFile{
			Day: fi.day, Size: fi.size, ModTime: st.ModTime().UnixNano(),
			Turns: fi.turns, FirstSeq: fi.firstSeq, LastSeq: fi.lastSeq,
			MinTS: fi.minTS, MaxTS: fi.maxTS, HasTS: fi.hasTS, Gone: fi.gone,
		})
	}
	for id := range a.goneIDs {
		seq, _ := a.ids.get(id)
		ck.Gone, ck.GoneSeqs = append(ck.Gone, id), append(ck.GoneSeqs, seq)
	}
	for i := range a.tail.n {
		var err error
		if ck.Tail, err = appendLine(ck.Tail, *a.tail.at(i)); err != nil {
			return ck, err
		}
	}
	return ck, nil
}

// loadCheckpoint takes the checkpoint's state when it matches the day files
// days (as listDays found them), and removes the checkpoint either way. It
// reports whether it took it; when it did not, the archive's state is as
// it was, and load reads the files.
func (a *Archive) loadCheckpoint(days []string) bool {
	path := filepath.Join(a.dir, checkpointName)
	// A temporary file a crash during Close left.
	if err := a.fs.Remove(path + ".tmp"); err != nil && !errors.Is(err, os.ErrNotExist) {
		a.log.Warn("archive: cannot remove a checkpoint's temporary file", logKeyPath, path+".tmp", logKeyErr, err)
	}
	ck, err := a.readCheckpoint(path)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	// Gone before the first write: a checkpoint left after it could
	// disagree with the files after a crash.
	if rerr := a.fs.Remove(path); rerr != nil {
		a.log.Warn("archive: cannot remove the checkpoint; reading every file", logKeyPath, path, logKeyErr, rerr)
		return false
	}
	if serr := a.syncDir(a.dir); serr != nil {
		a.log.Warn("archive: cannot sync the directory after removing the checkpoint; reading every file", logKeyPath, a.dir, logKeyErr, serr)
		return false
	}
	if err == nil {
		err = a.checkFiles(ck, days)
	}
	if err != nil {
		a.log.Info("archive: checkpoint not used; reading every file", logKeyErr, err)
		return false
	}
	if err := a.restore(ck); err != nil {
		a.log.Warn("archive: checkpoint not used; reading every file", logKeyErr, err)
		return false
	}
	return true
}

// readCheckpoint reads the checkpoint at path and checks its header; the
// ids section is read, to be checked by idsOf.
func (a *Archive) readCheckpoint(path string) (checkpoint, error) {
	var ck checkpoint
	f, err := a.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return ck, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ck, err
	}
	head := int64(len(checkpointMagic))
	if st.Size() < head+checkpointTrailer {
		return ck, errors.New("checkpoint too short")
	}
	b := make([]byte, head)
	if _, err := f.ReadAt(b, 0); err != nil || string(b) != checkpointMagic {
		return ck, errors.New("not a checkpoint of this version")
	}
	t := make([]byte, checkpointTrailer)
	if _, err := f.ReadAt(t, st.Size()-checkpointTrailer); err != nil {
		return ck, err
	}
	hlen, hsum := binary.BigEndian.Uint64(t), binary.BigEndian.Uint32(t[8:])
	ck.sectionSum, ck.section = binary.BigEndian.Uint32(t[12:]), nil
	slen := binary.BigEndian.Uint64(t[16:])
	rest := uint64(st.Size() - head - checkpointTrailer)
	if hlen > rest || slen != rest-hlen {
		return ck, errors.New("checkpoint lengths do not match its file")
	}
	header := make([]byte, hlen)
	if _, err := f.ReadAt(header, head); err != nil {
		return ck, err
	}
	if crc32.Checksum(header, castagnoli) != hsum {
		return ck, errors.New("checkpoint checksum mismatch")
	}
	if err := gob.NewDecoder(bytes.NewReader(header)).Decode(&ck); err != nil {
		return ck, fmt.Errorf("checkpoint: %w", err)
	}
	if ck.Version != checkpointVersion {
		return ck, fmt.Errorf("checkpoint version %d, want %d", ck.Version, checkpointVersion)
	}
	if ck.IDs < 0 || ck.IDBytes < 0 || uint64(ck.IDBytes)+12*uint64(ck.IDs) != slen {
		return ck, errors.New("checkpoint counts do not match its ids section")
	}
	ck.section = make([]byte, slen)
	if _, err := f.ReadAt(ck.section, head+int64(hlen)); err != nil {
		return ck, err
	}
	return ck, nil
}

// idsOf checks ck's ids section and makes the id map of it.
func idsOf(ck checkpoint) (idSeqs, error) {
	if crc32.Checksum(ck.section, castagnoli) != ck.sectionSum {
		return idSeqs{}, errors.New("checkpoint ids checksum mismatch")
	}
	// The map keeps its ids as its arena: a copy of their own, so that
	// the section's lengths and seqs are not kept with them.
	ids := slices.Clone(ck.section[:ck.IDBytes])
	lens, seqs := make([]uint32, ck.IDs), make([]int64, ck.IDs)
	rest := ck.section[ck.IDBytes:]
	for i := range lens {
		lens[i] = binary.LittleEndian.Uint32(rest[4*i:])
	}
	rest = rest[4*ck.IDs:]
	for i := range seqs {
		seqs[i] = int64(binary.LittleEndian.Uint64(rest[8*i:]))
	}
	rows, ok := idmap.FromIDs(ids, lens)
	if !ok {
		return idSeqs{}, errors.New("checkpoint ids do not make an id map")
	}
	return idSeqs{rows: rows, seqs: seqs}, nil
}

// checkFiles says why ck does not describe the day files days, or nil.
func (a *Archive) checkFiles(ck checkpoint, days []string) error {
	if !slices.Equal(days, checkpointDays(ck.Files)) {
		return errors.New("the day files changed")
	}
	for _, cf := range ck.Files {
		path := a.dayPath(cf.Day)
		st, err := a.fs.Stat(path)
		if err != nil {
			return err
		}
		if st.Size() != cf.Size || st.ModTime().UnixNano() != cf.ModTime {
			return fmt.Errorf("%s changed since the archive was closed", path)
		}
	}
	return nil
}

// checkpointDays lists the days of files.
func checkpointDays(files []checkpointFile) []string {
	days := make([]string, len(files))
	for i, cf := range files {
		days[i] = cf.Day
	}
	return days
}

// restore sets the archive's state from ck, checked by checkFiles.
func (a *Archive) restore(ck checkpoint) error {
	tail := newTailCache(len(a.tail.buf))
	for rest := ck.Tail; len(rest) > 0; {
		i := slices.Index(rest, '\n')
		if i < 0 {
			return errors.New("checkpoint tail: a line without its end")
		}
		t, err := DecodeLine(rest[:i])
		if err != nil {
			return fmt.Errorf("checkpoint tail: %w", err)
		}
		tail.push(t)
		rest = rest[i+1:]
	}
	tail.from = max(tail.from, ck.TailFrom)
	if len(ck.GoneSeqs) != len(ck.Gone) {
		return errors.New("checkpoint tombstones: ids and seqs do not pair")
	}
	files := make([]fileInfo, len(ck.Files))
	for i, cf := range ck.Files {
		files[i] = fileInfo{
			day: cf.Day, path: a.dayPath(cf.Day), size: cf.Size,
			turns: cf.Turns, firstSeq: cf.FirstSeq, lastSeq: cf.LastSeq,
			minTS: cf.MinTS, maxTS: cf.MaxTS, hasTS: cf.HasTS, gone: cf.Gone,
		}
	}
	a.files, a.tail = files, tail
	a.lastSeq, a.lastRecv = ck.LastSeq, ck.LastRecv
	a.stats = Stats{Turns: ck.Live, Forgotten: ck.Tombstones, Redacted: ck.RedactedTurns, Secrets: ck.RuleCounts}
	if ck.Copies != nil {
		a.copies = ck.Copies
	}
	a.ckGone = make(map[string]int64, len(ck.Gone))
	for i, id := range ck.Gone {
		a.goneIDs[id] = struct{}{}
		a.ckGone[id] = ck.GoneSeqs[i]
	}
	go a.loadIDs(ck, slices.Clone(files))
	return nil
}

// loadIDs makes the id map of the checkpoint ck, or, should its ids
// section not check out, of the day files, which ck described; then it
// closes idsReady. files are ck's, as restore took them.
func (a *Archive) loadIDs(ck checkpoint, files []fileInfo) {
	defer close(a.idsReady)
	if testHookLoadIDs != nil {
		testHookLoadIDs()
	}
	ids, err := idsOf(ck)
	if err == nil {
		a.ids = ids
		return
	}
	a.log.Warn("archive: the checkpoint's ids did not check out; reading every file for them (writes wait)", logKeyErr, err)
	scratch := &Archive{dir: a.dir, fs: a.fs, now: a.now, log: a.log, ids: idSeqs{rows: idmap.New(0)},
		goneIDs: make(map[string]struct{}), copies: make(map[string][]int64), tail: newTailCache(0), loaders: a.loaders}
	for _, fi := range files {
		if err := scratch.loadFile(fi.day); err != nil {
			a.idsErr = &engram.Error{Code: engram.EUNAVAILABLE,
				Message: "the archive's id map could not be read; restart engram to read every file", Err: err}
			a.log.Error("archive: no id map; writes fail until a restart", logKeyErr, err)
			return
		}
	}
	scratch.ids.trim()
	a.ids = scratch.ids
}

// testHookLoadIDs, when set (by a test), runs first in loadIDs.
var testHookLoadIDs func()

// writeAll writes b to w.
func writeAll(w io.Writer, b []byte) error {
	_, err := w.Write(b)
	return err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
