package embedder_test

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/engram-dev/engram/embedder"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json (only allowed under a new model name)")

// goldenTexts cover every feature type: words, stopwords, contractions,
// n-grams, Chinese, Japanese, Korean, symbols, and no feature at all.
var goldenTexts = []string{
	"We decided to keep the API on port 30001",
	"Caroline's dog doesn't like the rain",
	"我们决定使用端口30001",
	"会議でポート30001を使うことに決めました",
	"포트 30001을 사용하기로 결정했습니다",
	"Мы решили оставить API на порту 30001",
	"🎉 shipped! 🚀",
	"",
}

type goldenFile struct {
	Model   string         `json:"model"`
	Vectors []goldenVector `json:"vectors"`
}

type goldenVector struct {
	Text  string       `json:"text"`
	Top   [][2]float64 `json:"top"`   // the 8 largest components by magnitude: [index, value]
	Probe float64      `json:"probe"` // the dot product with probe(), which every component moves
}

// probe is a fixed pseudo-random vector.
func probe() []float64 {
	p := make([]float64, embedder.Dim)
	x := uint32(2463534242)
	for i := range p {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		p[i] = float64(x)/float64(math.MaxUint32) - 0.5
	}
	return p
}

func summarize(text string, v []float32) goldenVector {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(float64(v[idx[a]])) > math.Abs(float64(v[idx[b]])) })
	g := goldenVector{Text: text}
	for _, i := range idx[:8] {
		g.Top = append(g.Top, [2]float64{float64(i), float64(v[i])})
	}
	for i, p := range probe() {
		g.Probe += p * float64(v[i])
	}
	return g
}

// TestGolden pins the vectors of a few texts. Stored vectors are only
// comparable with vectors of the same model name, so a change of features,
// weights, word vectors or hashing must come with a new embedder.Version.
func TestGolden(t *testing.T) {
	e := embedder.New()
	path := filepath.Join("testdata", "golden.json")
	vs := MustEmbed(t, e, goldenTexts...)
	got := goldenFile{Model: e.Model()}
	for i, v := range vs {
		got.Vectors = append(got.Vectors, summarize(goldenTexts[i], v))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want goldenFile
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if *update {
		if want.Model == got.Model {
			t.Fatalf("refusing to rewrite %s for the same model %s: bump embedder.Version first, so stored vectors of the old features are never compared with new ones", path, got.Model)
		}
		b, _ := json.MarshalIndent(got, "", "  ")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s for %s", path, got.Model)
		return
	}
	if want.Model != got.Model {
		t.Fatalf("%s was written for model %s, this is %s: run go test ./embedder -run TestGolden -update", path, want.Model, got.Model)
	}
	if len(want.Vectors) != len(got.Vectors) {
		t.Fatalf("%s holds %d vectors, want %d: run go test ./embedder -run TestGolden -update after bumping embedder.Version", path, len(want.Vectors), len(got.Vectors))
	}
	for i, w := range want.Vectors {
		g := got.Vectors[i]
		same := w.Text == g.Text && math.Abs(w.Probe-g.Probe) < 1e-5
		for j := range w.Top {
			same = same && w.Top[j][0] == g.Top[j][0] && math.Abs(w.Top[j][1]-g.Top[j][1]) < 1e-6
		}
		if !same {
			t.Errorf("%q: the vector changed (probe %.7f, was %.7f; top %v, was %v).\n"+
				"The features changed: if that is intended, bump the model version (embedder.Version) so that stored vectors "+
				"are re-embedded, then run go test ./embedder -run TestGolden -update.", g.Text, g.Probe, w.Probe, g.Top, w.Top)
		}
	}
}
