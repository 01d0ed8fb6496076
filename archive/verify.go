package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// ProblemKind names what is wrong in a Problem.
type ProblemKind string

// The problems Verify reports.
const (
	ProblemChecksum    ProblemKind = "checksum"     // a line's bytes do not match its crc
	ProblemMalformed   ProblemKind = "malformed"    // a line is not a valid archive line
	ProblemSeqOrder    ProblemKind = "seq_order"    // a line's seq is not above the one before
	ProblemDuplicateID ProblemKind = "duplicate_id" // an id is on more than one line
	ProblemQuarantined ProblemKind = "quarantined"  // a torn line was moved aside at some Open
)

// Problem is one thing Verify found wrong.
type Problem struct {
	Kind ProblemKind
	Path string // the day file, or the quarantined file
	Line int    // 1-based line number; 0 for a whole file
	Err  error  // detail; wraps ErrChecksum or ErrMalformed for those kinds
	// Seq is, for a damaged line (checksum, malformed), the seq it held:
	// the one missing between the readable lines around it, or the seq the
	// line still reads as when that lies between them; 0 when unknown. For
	// the other kinds it is the line's seq (0 for a whole file).
	Seq int64
	// ID is the id a damaged line still reads as ("" if none), and the
	// line's id for the other kinds.
	ID string
}

// Damaged reports whether p is a line Verify could not read (checksum or
// malformed): the lines that Repair can restore.
func (p Problem) Damaged() bool { return p.Kind == ProblemChecksum || p.Kind == ProblemMalformed }

// String formats p as "path:line: kind: detail".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Path)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	fmt.Fprintf(&b, ": %s", p.Kind)
	if p.Err != nil {
		fmt.Fprintf(&b, ": %v", p.Err)
	}
	return b.String()
}

// Report is the result of Verify.
type Report struct {
	Files     int   // day files read
	Lines     int64 // complete lines read
	Turns     int64 // readable turns, tombstones left out
	Forgotten int64 // tombstones of forgotten turns
	Bytes     int64 // bytes read
	Problems  []Problem
}

// OK reports whether Verify found nothing wrong.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Verify rereads every committed line of every day file, checks its crc,
// its form and the order of seqs and ids, and lists the torn lines held in
// quarantine. It can run while turns are appended; it checks what was
// committed when it started. The error is for a failure to read (or ctx
// ending), not for what was found: that is in the Report.
func (a *Archive) Verify(ctx context.Context) (Report, error) {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		return Report{}, errClosed()
	}
	files := slices.Clone(a.files)
	a.mu.RUnlock()

	var rep Report
	v := verifier{files: files, seen: make(map[string]lineRef)}
	for i := range files {
		rep.Files++
		if err := a.verifyFile(ctx, &v, i, &rep); err != nil {
			return rep, err
		}
	}
	v.resolve(&rep, 0)

	qdir := filepath.Join(a.dir, quarantineDir)
	entries, err := a.fs.ReadDir(qdir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("archive: list %s: %w", qdir, err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".torn") {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemQuarantined, Path: filepath.Join(qdir, e.Name()),
				Err: errors.New("a torn line cut from a day file after a crash; never acknowledged, kept for inspection")})
		}
	}
	return rep, nil
}

// verifier is the state Verify carries from file to file.
type verifier struct {
	files   []fileInfo
	seen    map[string]lineRef // id -> its first line
	prev    int64              // the last seq in order
	damaged []damagedLine      // damaged lines since the last readable one
}

// damagedLine is a damaged line waiting for the seq of the next readable
// line, which bounds the seq it held.
type damagedLine struct {
	problem int   // index in Report.Problems
	seq     int64 // the seq the line still reads as, 0 if none
}

// resolve gives the damaged lines between the readable seqs v.prev and
// next (0: the end of the archive) the seqs they held: the missing ones in
// order when there are exactly as many as lines, else each the seq it
// still reads as if that lies in the gap.
func (v *verifier) resolve(rep *Report, next int64) {
	if len(v.damaged) == 0 {
		return
	}
	exact := next > 0 && next-v.prev-1 == int64(len(v.damaged))
	for i, d := range v.damaged {
		p := &rep.Problems[d.problem]
		switch {
		case exact:
			p.Seq = v.prev + 1 + int64(i)
		case d.seq > v.prev && (next == 0 || d.seq < next):
			p.Seq = d.seq
		}
	}
	v.damaged = v.damaged[:0]
}

// looseLine is what a damaged line may still say about itself.
type looseLine struct {
	ID  string `json:"id"`
	Seq int64  `json:"seq"`
}

type lineRef struct {
	file, line int
	gone       bool // a tombstone: a later line may archive the id again
}

func (a *Archive) verifyFile(ctx context.Context, v *verifier, i int, rep *Report) error {
	fi := &v.files[i]
	f, size, err := a.openCommitted(fi)
	if err != nil {
		return err
	}
	defer f.Close()
	end, err := eachLine(f, size, func(line []byte, num int, _ int64) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rep.Lines++
		t, err := DecodeLine(line)
		if err != nil {
			kind := ProblemMalformed
			if errors.Is(err, ErrChecksum) {
				kind = ProblemChecksum
			}
			var loose looseLine
			_ = json.Unmarshal(line, &loose) // best effort: what the line still says
			v.damaged = append(v.damaged, damagedLine{problem: len(rep.Problems), seq: loose.Seq})
			rep.Problems = append(rep.Problems, Problem{Kind: kind, Path: fi.path, Line: num, Err: err, ID: loose.ID})
			return nil
		}
		if t.Seq <= v.prev {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemSeqOrder, Path: fi.path, Line: num,
				Err: fmt.Errorf("seq %d after seq %d", t.Seq, v.prev), Seq: t.Seq, ID: t.ID})
			return nil
		}
		v.resolve(rep, t.Seq)
		v.prev = t.Seq
		if t.IsTombstone() {
			rep.Forgotten++
		} else {
			rep.Turns++
		}
		if first, dup := v.seen[t.ID]; dup && !first.gone {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemDuplicateID, Path: fi.path, Line: num,
				Err: fmt.Errorf("id %q is also at %s:%d", t.ID, v.files[first.file].path, first.line), Seq: t.Seq, ID: t.ID})
		} else {
			v.seen[t.ID] = lineRef{i, num, t.IsTombstone()}
		}
		return nil
	})
	rep.Bytes += end
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("archive: read %s: %w", fi.path, err)
	}
	return nil
}
