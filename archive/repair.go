package archive

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-dev/engram"
)

// RepairReport is what Repair did.
type RepairReport struct {
	// Repaired are the damaged lines written again from the turns fix
	// returned, in archive order.
	Repaired []Problem
	// Left are the damaged lines left as they were: fix had no turn for
	// them, or their seq is unknown.
	Left []Problem
	// Kept lists the files in quarantine/ that hold the repaired lines as
	// they were, one per day file repaired.
	Kept []string
}

// Repair writes the damaged lines of the archive in dir (a checksum that
// does not match, a line that does not parse: what Verify reports with the
// seq each held) again, from the turn fix returns for each: the copy
// another store kept (the palace indexed the turn before its line was
// damaged). fix returns false to leave a line as it is. A turn whose Seq is
// not the line's, or whose ID is not the one the line still reads as, is
// refused (left). Each day file with lines to repair is written whole to a
// temporary file, fsynced and renamed over the old one, after the damaged
// lines as they were are copied to quarantine/<day>.<nanos>.damaged: a
// crash at any point leaves either the old file or the new one.
//
// Repair opens the archive itself, taking its lock: it fails with ELOCKED
// while another Archive (a running server) holds dir, and nothing can be
// appended meanwhile. The error is for a failure to read or write, or of
// fix; what was left unrepaired is in the report.
func Repair(ctx context.Context, dir string, opts Options, fix func(Problem) (engram.Turn, bool, error)) (RepairReport, error) {
	var out RepairReport
	a, err := Open(dir, opts)
	if err != nil {
		return out, err
	}
	defer a.Close()
	rep, err := a.Verify(ctx)
	if err != nil {
		return out, err
	}
	lines := map[string]map[int][]byte{} // path -> line number -> the new line
	var paths []string
	for _, p := range rep.Problems {
		if !p.Damaged() {
			continue
		}
		line, ok, err := repairLine(p, fix)
		if err != nil {
			return out, err
		}
		if !ok {
			out.Left = append(out.Left, p)
			continue
		}
		if lines[p.Path] == nil {
			lines[p.Path] = map[int][]byte{}
			paths = append(paths, p.Path)
		}
		lines[p.Path][p.Line] = line
		out.Repaired = append(out.Repaired, p)
	}
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		kept, err := a.rewriteLines(path, lines[path])
		if err != nil {
			return out, fmt.Errorf("archive: repair %s: %w", path, err)
		}
		out.Kept = append(out.Kept, kept)
	}
	return out, a.Close()
}

// repairLine returns the line to write for the damaged line p, or false.
func repairLine(p Problem, fix func(Problem) (engram.Turn, bool, error)) ([]byte, bool, error) {
	if p.Seq <= 0 {
		return nil, false, nil
	}
	t, ok, err := fix(p)
	if err != nil || !ok {
		return nil, false, err
	}
	if t.Seq != p.Seq || p.ID != "" && t.ID != p.ID {
		return nil, false, nil
	}
	line, err := EncodeLine(t)
	if err != nil {
		return nil, false, nil
	}
	return line, true, nil
}

// rewriteLines replaces the given lines (by 1-based number) of the day file
// at path, keeping the old ones in quarantine, and returns that copy's path.
func (a *Archive) rewriteLines(path string, repl map[int][]byte) (string, error) {
	a.mu.RLock()
	var size int64 = -1
	var day string
	for _, fi := range a.files {
		if fi.path == path {
			size, day = fi.size, fi.day
		}
	}
	a.mu.RUnlock()
	if size < 0 {
		return "", fmt.Errorf("not a day file of the archive")
	}
	f, err := a.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	var next, old bytes.Buffer
	_, err = eachLine(f, size, func(line []byte, num int, _ int64) error {
		if r, ok := repl[num]; ok {
			fmt.Fprintf(&old, "%s:%d: ", filepath.Base(path), num)
			old.Write(line)
			next.Write(r)
			return nil
		}
		next.Write(line)
		return nil
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}

	qdir := filepath.Join(a.dir, quarantineDir)
	stamp := fmt.Sprintf("%s.%d", day, a.now().UnixNano())
	kept := filepath.Join(qdir, stamp+".damaged")
	if err := a.writeDurably(kept, old.Bytes()); err != nil {
		return "", err
	}
	tmp := filepath.Join(qdir, stamp+".repair"+tempSuffix)
	if err := a.writeDurably(tmp, next.Bytes()); err != nil {
		return "", err
	}
	if err := a.fs.Rename(tmp, path); err != nil {
		a.fs.Remove(tmp)
		return "", err
	}
	if err := a.syncDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	if err := a.syncDir(qdir); err != nil {
		return "", err
	}
	return kept, nil
}

// writeDurably creates the file name (which must not exist) holding data,
// fsynced, with its directory.
func (a *Archive) writeDurably(name string, data []byte) error {
	f, err := a.createFile(name, os.O_WRONLY)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = a.sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		a.fs.Remove(name)
	}
	return err
}
