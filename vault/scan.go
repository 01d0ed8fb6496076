package vault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// FileInfo is what Scan knows of a Markdown file without parsing it: what
// incremental sync compares with what it stored.
type FileInfo struct {
	Path    string    // slash-separated, relative to the vault root
	Size    int64     // bytes
	ModTime time.Time // modification time, nanoseconds kept: store it whole
	Hash    string    // hex SHA-256 of the file's bytes
}

// Skipped is a Markdown file (or a symlinked folder) that Scan left out, and
// why.
type Skipped struct {
	Path   string // slash-separated, relative to the vault root
	Reason string // one of the Reason constants
	Err    error  // the underlying error, for ReasonUnreadable; else nil
}

// Reasons a file is skipped. Callers may compare Skipped.Reason with them.
const (
	ReasonBinary         = "binary (NUL bytes)"
	ReasonNotUTF8        = "not UTF-8"
	ReasonTooLarge       = "too large" // over HardMaxFileBytes
	ReasonUnreadable     = "unreadable"
	ReasonNotRegular     = "not a regular file"
	ReasonSymlinkOutside = "symlink leaving the vault"
	ReasonSymlinkDir     = "symlinked folder, not followed"
)

// readBufSize is the read buffer of one scan worker.
const readBufSize = 64 << 10

// isMarkdown reports whether a file name has a Markdown extension.
func isMarkdown(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// Scan walks the vault at root and returns every .md and .markdown file,
// sorted by path, with its size, modification time and hash, without
// parsing it. It is ScanSince with no previous scan: every file is read.
func Scan(ctx context.Context, root string) ([]FileInfo, []Skipped, error) {
	return ScanSince(ctx, root, nil)
}

// ScanSince is Scan that reuses prev (the previous scan, keyed by Path):
// a file whose size and modification time equal prev's entry keeps prev's
// hash without being read, so a sync of an unchanged vault costs a
// directory walk and one lstat a file. Files not in prev, or changed, are
// read and hashed on up to GOMAXPROCS goroutines.
//
// The walk skips folders and files whose names start with "." (.git,
// .obsidian, .trash). Symlinks to files inside the vault are followed and
// reported under the link's path; symlinks leaving the vault and symlinked
// folders are skipped (a folder link could make a cycle). Files with NUL
// bytes, files that are not UTF-8, files over HardMaxFileBytes and files
// that cannot be read are skipped, with a Reason; reading stops at the first
// bad byte, so a skipped file costs little.
//
// Scan returns an error only when root cannot be walked (it does not exist,
// is not a folder, cannot be read) or ctx is done.
//
// Caveat: like Git and rsync, trusting size and time misses a file
// rewritten with the same size within the file system's timestamp
// granularity of the previous scan; a periodic Scan without prev catches it.
func ScanSince(ctx context.Context, root string, prev map[string]FileInfo) ([]FileInfo, []Skipped, error) {
	realRoot, err := filepath.Abs(root)
	if err == nil {
		realRoot, err = filepath.EvalSymlinks(realRoot)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("vault: scan %s: %w", root, err)
	}
	st, err := os.Stat(realRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("vault: scan %s: %w", root, err)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("vault: scan %s: not a folder", root)
	}

	cands, skipped, err := findFiles(ctx, realRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("vault: scan %s: %w", root, err)
	}

	// Results keep the walk's (lexical) order; each worker writes its own
	// slots.
	infos := make([]FileInfo, len(cands))
	skips := make([]*Skipped, len(cands))
	var todo []int
	for i, c := range cands {
		infos[i] = FileInfo{Path: c.rel, Size: c.size, ModTime: c.mtime}
		if c.size > HardMaxFileBytes {
			skips[i] = &Skipped{Path: c.rel, Reason: ReasonTooLarge}
			continue
		}
		if old, ok := prev[c.rel]; ok && old.Hash != "" && old.Size == c.size && old.ModTime.Equal(c.mtime) {
			infos[i].Hash = old.Hash
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) > 0 {
		workers := min(runtime.GOMAXPROCS(0), len(todo))
		next := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				buf := make([]byte, readBufSize)
				for i := range next {
					sum, _, _, err := hashFile(cands[i].abs, 0, buf)
					if err != nil {
						skips[i] = skipFor(cands[i].rel, err)
						continue
					}
					infos[i].Hash = sum
				}
			})
		}
	feed:
		for _, i := range todo {
			select {
			case next <- i:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("vault: scan %s: %w", root, err)
		}
	}

	out := make([]FileInfo, 0, len(cands))
	for i := range cands {
		if skips[i] != nil {
			skipped = append(skipped, *skips[i])
			continue
		}
		out = append(out, infos[i])
	}
	return out, skipped, nil
}

func skipFor(rel string, err error) *Skipped {
	switch {
	case errors.Is(err, ErrBinary):
		return &Skipped{Path: rel, Reason: ReasonBinary}
	case errors.Is(err, ErrNotUTF8):
		return &Skipped{Path: rel, Reason: ReasonNotUTF8}
	case errors.Is(err, ErrTooLarge):
		return &Skipped{Path: rel, Reason: ReasonTooLarge}
	}
	return &Skipped{Path: rel, Reason: ReasonUnreadable, Err: err}
}

// hashFile reads the file at name through readText.
func hashFile(name string, keep int64, buf []byte) (string, []byte, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", nil, 0, err
	}
	defer f.Close()
	return readText(f, keep, buf)
}

// readText reads r to the end, returning the hex SHA-256 of all of it, its
// first keep bytes and its size. It stops early at content that is not
// text, with checkText's verdict: ErrBinary for a NUL in the first
// sniffBytes or before any invalid UTF-8, else ErrNotUTF8. Runes that
// straddle reads are validated whole. buf is scratch space of at least
// utf8.UTFMax+1 bytes.
func readText(r io.Reader, keep int64, buf []byte) (sum string, kept []byte, size int64, err error) {
	h := sha256.New()
	pend := 0        // buf[:pend] holds the start of a rune cut by the last read
	bad := int64(-1) // offset of the first invalid UTF-8, found in the sniff window
	for {
		n, rerr := r.Read(buf[pend:])
		fresh := buf[pend : pend+n]
		nul := int64(-1)
		if i := bytes.IndexByte(fresh, 0); i >= 0 {
			nul = size + int64(i)
		}
		data := buf[:pend+n]
		cut := len(data)
		if bad < 0 {
			if rerr == nil && cut > 0 {
				i := cut - 1
				for i > 0 && cut-i < utf8.UTFMax && !utf8.RuneStart(data[i]) {
					i--
				}
				if !utf8.FullRune(data[i:]) {
					cut = i
				}
			}
			if !utf8.Valid(data[:cut]) {
				bad = size - int64(pend) + int64(firstInvalid(data[:cut]))
			}
		}
		if nul >= 0 && (nul < sniffBytes || bad < 0 || nul < bad) {
			return "", nil, size, fmt.Errorf("%w at byte %d", ErrBinary, nul)
		}
		size += int64(n)
		if bad >= 0 {
			// A NUL may still come in the sniff window and make it binary.
			if nul >= 0 || size >= sniffBytes || rerr != nil {
				return "", nil, size, fmt.Errorf("%w at byte %d", ErrNotUTF8, bad)
			}
			pend = 0
			continue
		}
		h.Write(fresh)
		if room := keep - int64(len(kept)); room > 0 {
			kept = append(kept, fresh[:min(int64(n), room)]...)
		}
		pend = copy(buf, data[cut:]) // after the last use of fresh, which it may overwrite
		if rerr == io.EOF {
			return hex.EncodeToString(h.Sum(nil)), kept, size, nil
		}
		if rerr != nil {
			return "", nil, size, rerr
		}
	}
}

// ParseFile reads and parses the file at path (slash-separated, relative to
// root). It opens the file through os.Root, so a path or symlink leading
// out of root fails. The hash covers the whole file; only the first
// opts.MaxFileBytes are parsed, with a warning.
//
// Besides Parse's errors it returns errors wrapping ErrTooLarge for a file
// over HardMaxFileBytes, fs.ErrNotExist and the like for a file it cannot
// open, and ctx.Err() when ctx is done.
func ParseFile(ctx context.Context, root, path string, opts Options) (Doc, error) {
	if err := ctx.Err(); err != nil {
		return Doc{}, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return Doc{}, fmt.Errorf("vault: %w", err)
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(path))
	if err != nil {
		return Doc{}, fmt.Errorf("vault: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Doc{}, fmt.Errorf("vault: %w", err)
	}
	if !st.Mode().IsRegular() {
		return Doc{}, fmt.Errorf("vault: %s: not a regular file", path)
	}
	if st.Size() > HardMaxFileBytes {
		return Doc{}, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, path, st.Size())
	}
	opts = opts.withDefaults()
	// One byte more than is parsed tells runeCut whether the cut is
	// inside a rune.
	sum, kept, size, err := readText(f, opts.MaxFileBytes+1, make([]byte, readBufSize))
	if err != nil {
		return Doc{}, fmt.Errorf("vault: %s: %w", path, err)
	}
	if int64(len(kept)) > opts.MaxFileBytes {
		kept = kept[:runeCut(kept, int(opts.MaxFileBytes))]
	}
	doc, err := parseText(path, kept, sum, size, opts)
	if err != nil {
		return Doc{}, err
	}
	doc.ModTime = st.ModTime()
	return doc, nil
}

// scanFile is a Markdown file a scan found: its path in the vault, the
// file it reads (a symlink's target) and what it was when found.
type scanFile struct {
	rel, abs string
	size     int64
	mtime    time.Time
}

// findFiles walks the vault at realRoot (absolute, symlinks resolved) for
// its Markdown files, in lexical order: hidden files and folders are left
// out, a symlink counts when it points to a regular file inside the vault,
// and what cannot be read or followed is reported as skipped.
func findFiles(ctx context.Context, realRoot string) ([]scanFile, []Skipped, error) {
	var (
		cands   []scanFile
		skipped []Skipped
	)
	rootPrefix := realRoot + string(filepath.Separator)
	err := filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if p == realRoot {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, rootPrefix))
		if err != nil {
			skipped = append(skipped, Skipped{Path: rel, Reason: ReasonUnreadable, Err: err})
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(p)
			if err != nil {
				if isMarkdown(name) {
					skipped = append(skipped, Skipped{Path: rel, Reason: ReasonUnreadable, Err: err})
				}
				return nil
			}
			ti, err := os.Stat(target)
			if err != nil {
				if isMarkdown(name) {
					skipped = append(skipped, Skipped{Path: rel, Reason: ReasonUnreadable, Err: err})
				}
				return nil
			}
			inside := target == realRoot || strings.HasPrefix(target, rootPrefix)
			switch {
			case !inside && (ti.IsDir() || isMarkdown(name)):
				skipped = append(skipped, Skipped{Path: rel, Reason: ReasonSymlinkOutside})
			case ti.IsDir():
				skipped = append(skipped, Skipped{Path: rel, Reason: ReasonSymlinkDir})
			case !isMarkdown(name):
			case !ti.Mode().IsRegular():
				skipped = append(skipped, Skipped{Path: rel, Reason: ReasonNotRegular})
			default:
				cands = append(cands, scanFile{rel, target, ti.Size(), ti.ModTime()})
			}
			return nil
		}
		if !isMarkdown(name) {
			return nil
		}
		if !d.Type().IsRegular() {
			skipped = append(skipped, Skipped{Path: rel, Reason: ReasonNotRegular})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			skipped = append(skipped, Skipped{Path: rel, Reason: ReasonUnreadable, Err: err})
			return nil
		}
		cands = append(cands, scanFile{rel, p, info.Size(), info.ModTime()})
		return nil
	})
	return cands, skipped, err

}
