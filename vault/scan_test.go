package vault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// writeFile writes content to root/rel, making folders.
func writeFile(tb testing.TB, root, rel string, content []byte) {
	tb.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, content, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func paths(infos []FileInfo) []string {
	var out []string
	for _, fi := range infos {
		out = append(out, fi.Path)
	}
	return out
}

func skipMap(sk []Skipped) map[string]string {
	m := map[string]string{}
	for _, s := range sk {
		m[s.Path] = s.Reason
	}
	return m
}

func TestScan(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "vault")
	outside := filepath.Join(dir, "outside")
	writeFile(t, outside, "secret.md", []byte("# secret\n"))
	writeFile(t, outside, "folder/x.md", []byte("x\n"))

	a := []byte("# A\n")
	writeFile(t, root, "a.md", a)
	writeFile(t, root, "sub/b.markdown", []byte("# B\n"))
	writeFile(t, root, "sub/deeper/C.MD", []byte("# C\n"))
	writeFile(t, root, "日本語/メモ.md", []byte("# メモ\n"))
	writeFile(t, root, "notes.txt", []byte("not markdown"))
	writeFile(t, root, ".git/HEAD.md", []byte("skipped"))
	writeFile(t, root, ".obsidian/app.json", []byte("{}"))
	writeFile(t, root, ".obsidian/snippet.md", []byte("skipped"))
	writeFile(t, root, ".hidden.md", []byte("skipped"))
	writeFile(t, root, "bin.md", []byte("\x89PNG\r\n\x1a\n\x00\x00"))
	writeFile(t, root, "latin1.md", []byte("caf\xe9\n"))
	writeFile(t, root, "utf16.md", []byte("\xff\xfe#\x00 \x00A\x00"))
	// Over the hard cap: a sparse file, never read.
	big, err := os.Create(filepath.Join(root, "big.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(HardMaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	big.Close()
	symlink := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	symlink("a.md", "link-in.md")
	symlink(filepath.Join(outside, "secret.md"), "link-out.md")
	symlink("../outside/secret.md", "link-out-relative.md")
	symlink(filepath.Join(outside, "folder"), "linked-outside")
	symlink("sub", "linked-inside")
	symlink("missing.md", "dangling.md")
	symlink("a.md", "link-without-ext") // not Markdown by name: ignored

	infos, skipped, err := Scan(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := []string{"a.md", "link-in.md", "sub/b.markdown", "sub/deeper/C.MD", "日本語/メモ.md"}
	if got := paths(infos); !slices.Equal(got, wantPaths) {
		t.Errorf("paths = %q, want %q", got, wantPaths)
	}
	wantSkips := map[string]string{
		"big.md":               ReasonTooLarge,
		"bin.md":               ReasonBinary,
		"dangling.md":          ReasonUnreadable,
		"latin1.md":            ReasonNotUTF8,
		"utf16.md":             ReasonBinary, // UTF-16 text is full of NULs
		"link-out.md":          ReasonSymlinkOutside,
		"link-out-relative.md": ReasonSymlinkOutside,
		"linked-outside":       ReasonSymlinkOutside,
		"linked-inside":        ReasonSymlinkDir,
	}
	if got := skipMap(skipped); !mapsEqual(got, wantSkips) {
		t.Errorf("skipped = %v, want %v", got, wantSkips)
	}
	for _, fi := range infos {
		content, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(fi.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Hash != sha(content) || fi.Size != int64(len(content)) || fi.ModTime.IsZero() {
			t.Errorf("%s: %+v does not describe the file", fi.Path, fi)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestScanErrors(t *testing.T) {
	ctx := context.Background()
	if _, _, err := Scan(ctx, filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing root: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file.md")
	writeFile(t, filepath.Dir(f), "file.md", []byte("x"))
	if _, _, err := Scan(ctx, f); err == nil {
		t.Error("a file as root: no error")
	}
	root := t.TempDir()
	writeFile(t, root, "a.md", []byte("x"))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := Scan(cctx, root); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestScanUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	root := t.TempDir()
	writeFile(t, root, "locked.md", []byte("x"))
	writeFile(t, root, "closed/inner.md", []byte("x"))
	if err := os.Chmod(filepath.Join(root, "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(root, "closed"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "closed"), 0o755) })
	_, skipped, err := Scan(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"locked.md": ReasonUnreadable, "closed": ReasonUnreadable}
	if got := skipMap(skipped); !mapsEqual(got, want) {
		t.Errorf("skipped = %v, want %v", got, want)
	}
}

func TestScanSince(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFile(t, root, "same.md", []byte("same content\n"))
	writeFile(t, root, "grows.md", []byte("v1\n"))
	writeFile(t, root, "touched.md", []byte("touched\n"))
	writeFile(t, root, "gone.md", []byte("gone\n"))
	first, _, err := Scan(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]FileInfo{}
	for _, fi := range first {
		prev[fi.Path] = fi
	}

	// same.md: new bytes, same size, same time: trusted, not read. This is
	// the documented blind spot, and the proof that nothing was read.
	st, _ := os.Stat(filepath.Join(root, "same.md"))
	writeFile(t, root, "same.md", []byte("SAME CONTENT\n"))
	if err := os.Chtimes(filepath.Join(root, "same.md"), st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "grows.md", []byte("version 2\n"))
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(root, "touched.md"), later, later); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "gone.md"))
	writeFile(t, root, "new.md", []byte("new\n"))

	got, skipped, err := ScanSince(ctx, root, prev)
	if err != nil || len(skipped) > 0 {
		t.Fatal(err, skipped)
	}
	byPath := map[string]FileInfo{}
	for _, fi := range got {
		byPath[fi.Path] = fi
	}
	if want := []string{"grows.md", "new.md", "same.md", "touched.md"}; !slices.Equal(paths(got), want) {
		t.Fatalf("paths = %q, want %q", paths(got), want)
	}
	if byPath["same.md"].Hash != prev["same.md"].Hash {
		t.Error("same.md was rehashed although size and time match")
	}
	if byPath["grows.md"].Hash != sha([]byte("version 2\n")) {
		t.Error("grows.md: hash not updated")
	}
	if h := byPath["touched.md"].Hash; h != sha([]byte("touched\n")) || !byPath["touched.md"].ModTime.Equal(later) {
		t.Errorf("touched.md: %+v", byPath["touched.md"])
	}
	if byPath["new.md"].Hash != sha([]byte("new\n")) {
		t.Error("new.md: wrong hash")
	}

	// A prev entry without a hash, or one that became binary, is read.
	prev["grows.md"] = FileInfo{Path: "grows.md", Size: byPath["grows.md"].Size, ModTime: byPath["grows.md"].ModTime}
	writeFile(t, root, "new.md", []byte("n\x00w\n"))
	prev["new.md"] = FileInfo{Path: "new.md", Size: 4, ModTime: time.Unix(0, 0), Hash: "stale"}
	got, skipped, err = ScanSince(ctx, root, prev)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Path != "grows.md" || got[0].Hash != sha([]byte("version 2\n")) {
		t.Errorf("grows.md without a stored hash: %+v", got[0])
	}
	if m := skipMap(skipped); m["new.md"] != ReasonBinary {
		t.Errorf("skipped = %v", m)
	}
}

func TestReadText(t *testing.T) {
	tests := []struct {
		name string
		in   string
		err  error
	}{
		{"ascii", "hello", nil},
		{"empty", "", nil},
		{"cjk", strings.Repeat("缓存策略決済タイムアウト👩‍💻", 50), nil},
		{"nul", "ab\x00c", ErrBinary},
		{"latin1", "caf\xe9 au lait", ErrNotUTF8},
		{"cut rune at the end", "ok \xe7\xbc", ErrNotUTF8},
		{"lone continuation", "a\x80b", ErrNotUTF8},
		{"surrogate", "a\xed\xa0\x80b", ErrNotUTF8},
		{"png: bad byte, then NUL in the sniff window", "\x89PNG\r\n\x1a\n\x00\x00", ErrBinary},
		{"bad byte, NUL after the sniff window", "caf\xe9" + strings.Repeat("a", sniffBytes) + "\x00", ErrNotUTF8},
		{"NUL after the sniff window, no bad byte", strings.Repeat("a", sniffBytes+5) + "\x00", ErrBinary},
	}
	for _, tt := range tests {
		for _, r := range []struct {
			name string
			wrap func(*bytes.Reader) interface{ Read([]byte) (int, error) }
		}{
			{"whole", func(r *bytes.Reader) interface{ Read([]byte) (int, error) } { return r }},
			{"one byte at a time", func(r *bytes.Reader) interface{ Read([]byte) (int, error) } { return iotest.OneByteReader(r) }},
			{"half reads", func(r *bytes.Reader) interface{ Read([]byte) (int, error) } { return iotest.HalfReader(r) }},
		} {
			t.Run(tt.name+"/"+r.name, func(t *testing.T) {
				sum, kept, size, err := readText(r.wrap(bytes.NewReader([]byte(tt.in))), 7, make([]byte, 16))
				if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if cerr := checkText([]byte(tt.in)); !errors.Is(cerr, tt.err) || (tt.err == nil) != (cerr == nil) {
					t.Fatalf("checkText = %v, want %v", cerr, tt.err)
				}
				if err != nil {
					return
				}
				if sum != sha([]byte(tt.in)) || size != int64(len(tt.in)) || string(kept) != tt.in[:min(7, len(tt.in))] {
					t.Errorf("sum %s size %d kept %q", sum, size, kept)
				}
			})
		}
	}
}

func TestParseFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	content := []byte("---\ntitle: T\n---\n# 背景\n\n" + strings.Repeat("缓存策略。", 100) + "\n")
	writeFile(t, root, "docs/a.md", content)
	writeFile(t, filepath.Dir(root), "escape.md", []byte("outside"))

	d, err := ParseFile(ctx, root, "docs/a.md", Options{})
	if err != nil {
		t.Fatal(err)
	}
	infos, _, err := Scan(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if d.Hash != infos[0].Hash || d.Size != int64(len(content)) || !d.ModTime.Equal(infos[0].ModTime) || d.Title != "T" {
		t.Errorf("doc %+v does not match scan %+v", d, infos[0])
	}

	// Truncated: parsed up to MaxFileBytes at a rune boundary, hashed whole.
	opts := Options{MaxFileBytes: 100}
	d, err = ParseFile(ctx, root, "docs/a.md", opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Hash != sha(content) || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "truncated") {
		t.Errorf("truncated doc: hash %s warnings %q", d.Hash, d.Warnings)
	}
	if err := checkDoc(content, d, opts); err != nil {
		t.Error(err)
	}
	pd, err := Parse("docs/a.md", content, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(pd.Chunks, d.Chunks, func(a, b Chunk) bool { return a.Text == b.Text && a.StartLine == b.StartLine }) {
		t.Error("Parse and ParseFile chunk a truncated file differently")
	}

	for _, tc := range []struct {
		path string
		err  error
	}{
		{"../escape.md", nil},
		{"docs/missing.md", fs.ErrNotExist},
	} {
		if _, err := ParseFile(ctx, root, tc.path, Options{}); err == nil || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("ParseFile(%s) = %v, want an error (%v)", tc.path, err, tc.err)
		}
	}
	writeFile(t, root, "bin.md", []byte("a\x00b"))
	if _, err := ParseFile(ctx, root, "bin.md", Options{}); !errors.Is(err, ErrBinary) {
		t.Errorf("binary: %v", err)
	}
	big, _ := os.Create(filepath.Join(root, "big.md"))
	big.Truncate(HardMaxFileBytes + 1)
	big.Close()
	if _, err := ParseFile(ctx, root, "big.md", Options{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ParseFile(cctx, root, "docs/a.md", Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
