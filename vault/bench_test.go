package vault

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse parses every document of the test vault per iteration;
// MB/s is over their bytes.
func BenchmarkParse(b *testing.B) {
	infos, _, err := Scan(context.Background(), testVault)
	if err != nil {
		b.Fatal(err)
	}
	type file struct {
		path    string
		content []byte
	}
	var files []file
	var total int64
	for _, fi := range infos {
		c, err := os.ReadFile(filepath.Join(testVault, filepath.FromSlash(fi.Path)))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, file{fi.Path, c})
		total += int64(len(c))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := Parse(f.path, f.content, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkParseLarge parses one 1 MiB note of many sections, paragraphs,
// lists, code and links: the throughput on big files.
func BenchmarkParseLarge(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "## Section %d\n\nSome text about [[note-%d]] and [a link](docs/n%d.md), with `code` and #tag%d.\n"+
			"A second sentence makes the paragraph longer, as real notes are.\n\n- item one\n- item two\n\n"+
			"```go\nfunc f%d() {}\n```\n\n", i, i, i, i, i)
	}
	content := []byte(sb.String())
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("large.md", content, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// scanVault writes n notes of about 2 KB in 20 folders.
func scanVault(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	for i := range n {
		writeFile(b, root, fmt.Sprintf("docs/f%02d/note-%04d.md", i%20, i),
			[]byte(fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat("Some words of a note. ", 90))))
	}
	return root
}

// BenchmarkScan scans a vault of 1,000 notes: "cold" reads and hashes every
// file (the first sync); "unchanged" is ScanSince with the previous scan,
// which reads nothing (a sync where no file changed; the target is 10 ms).
func BenchmarkScan(b *testing.B) {
	ctx := context.Background()
	root := scanVault(b, 1000)
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			infos, _, err := Scan(ctx, root)
			if err != nil || len(infos) != 1000 {
				b.Fatal(err, len(infos))
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		infos, _, err := Scan(ctx, root)
		if err != nil {
			b.Fatal(err)
		}
		prev := make(map[string]FileInfo, len(infos))
		for _, fi := range infos {
			prev[fi.Path] = fi
		}
		for b.Loop() {
			infos, _, err := ScanSince(ctx, root, prev)
			if err != nil || len(infos) != 1000 {
				b.Fatal(err, len(infos))
			}
		}
	})
}
