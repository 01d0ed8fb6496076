package embedder_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram/embedder"
)

// MustEmbed embeds texts with e and fails the test on an error or a vector
// that breaks the invariants every vector must keep.
func MustEmbed(tb testing.TB, e *embedder.Builtin, texts ...string) [][]float32 {
	tb.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		tb.Fatalf("Embed: %v", err)
	}
	if len(vs) != len(texts) {
		tb.Fatalf("Embed returned %d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		checkVector(tb, texts[i], v)
	}
	return vs
}

// checkVector fails unless v has Dim finite components and unit length.
func checkVector(tb testing.TB, text string, v []float32) {
	tb.Helper()
	if len(v) != embedder.Dim {
		tb.Fatalf("%q: dimension %d, want %d", text, len(v), embedder.Dim)
	}
	var n float64
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			tb.Fatalf("%q: component %d is %v", text, i, x)
		}
		n += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(n)-1) > 1e-5 {
		tb.Fatalf("%q: L2 norm %v, want 1", text, math.Sqrt(n))
	}
}

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestModelAndDim(t *testing.T) {
	e := embedder.New()
	if got, want := e.Model(), fmt.Sprintf("builtin-v%d-%d", embedder.Version, embedder.Dim); got != want {
		t.Errorf("Model() = %q, want %q", got, want)
	}
	if e.Model() != "builtin-v1-512" {
		t.Errorf("Model() = %q: a new model name needs a note in the docs (stored vectors are re-embedded)", e.Model())
	}
	if e.Dim() != 512 || embedder.Dim != embedder.HashDim+embedder.WordDim {
		t.Errorf("Dim() = %d, HashDim %d + WordDim %d", e.Dim(), embedder.HashDim, embedder.WordDim)
	}
	vs := MustEmbed(t, e, "one", "two", "three")
	for _, v := range vs {
		if len(v) != e.Dim() {
			t.Fatalf("len %d, want Dim() %d", len(v), e.Dim())
		}
	}
	// The vectors of one call must not share memory beyond their own length.
	vs[0] = append(vs[0], 1)
	if vs[1][0] == 1 && cos(vs[1], vs[1]) > 1.5 {
		t.Fatal("appending to one vector overwrote the next")
	}
}

func TestZeroValue(t *testing.T) {
	var zero embedder.Builtin
	a := MustEmbed(t, &zero, "zero value")
	b := MustEmbed(t, embedder.New(), "zero value")
	if !equal(a[0], b[0]) {
		t.Fatal("the zero Builtin embeds differently from New()")
	}
}

func TestEmbedNoTexts(t *testing.T) {
	vs, err := embedder.New().Embed(context.Background(), nil)
	if err != nil || len(vs) != 0 {
		t.Fatalf("Embed(nil) = %v, %v; want no vectors, no error", vs, err)
	}
}

func TestEmbedCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := embedder.New().Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Embed with a canceled context: %v, want context.Canceled", err)
	}
}

var sampleTexts = []string{
	"We decided to keep the API on port 30001",
	"Which port did we pick for the API?",
	"我们决定使用端口30001",
	"会議でポート30001を使うことに決めました",
	"포트 30001을 사용하기로 결정했습니다",
	"Мы решили оставить API на порту 30001",
	"🎉 shipped it! 🚀",
	"",
	"don't",
	strings.Repeat("a long turn about architecture decisions ", 200),
}

func TestDeterministic(t *testing.T) {
	want := MustEmbed(t, embedder.New(), sampleTexts...)
	// Another instance, another call, one text at a time.
	e := embedder.New()
	for i, text := range sampleTexts {
		got := MustEmbed(t, e, text)[0]
		if !equal(got, want[i]) {
			t.Fatalf("%q: vectors of two calls differ", text)
		}
	}
	// Concurrent calls on one instance.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 20 {
				i := (g + round) % len(sampleTexts)
				vs, err := e.Embed(context.Background(), []string{sampleTexts[i], sampleTexts[(i+1)%len(sampleTexts)]})
				if err != nil {
					errs <- err
					return
				}
				if !equal(vs[0], want[i]) || !equal(vs[1], want[(i+1)%len(sampleTexts)]) {
					errs <- fmt.Errorf("goroutine %d: %q: vector differs from the serial one", g, sampleTexts[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func equal(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestNormalization(t *testing.T) {
	e := embedder.New()
	for _, tc := range []struct{ a, b string }{
		{"ＡＢＣ", "abc"},
		{"Hello World", "hello world"},
		{"ＰＯＲＴ　３０００１", "port 30001"}, // full-width letters, digits and space
		{"ﬁle", "file"},              // ligature
		{"ｶﾀｶﾅ", "カタカナ"},             // half-width katakana
		{"ÉCOLE", "école"},
		{"e\u0301cole", "école"}, // combining accent
		{"I don't know", "i do not know"},
		{"I can’t", "I cannot"}, // typographic apostrophe; "cannot" is not split
		{"Ana's plan", "Ana plan"},
		{"we're here", "we here"},
	} {
		vs := MustEmbed(t, e, tc.a, tc.b)
		if tc.b == "I cannot" {
			if equal(vs[0], vs[1]) {
				t.Errorf("%q and %q: identical vectors, want different", tc.a, tc.b)
			}
			continue
		}
		if !equal(vs[0], vs[1]) {
			t.Errorf("%q and %q: vectors differ (cosine %.4f), want identical", tc.a, tc.b, cos(vs[0], vs[1]))
		}
	}
}

// closer fails unless query is more similar to near than to far.
func closer(t *testing.T, e *embedder.Builtin, query, near, far string) {
	t.Helper()
	vs := MustEmbed(t, e, query, near, far)
	cn, cf := cos(vs[0], vs[1]), cos(vs[0], vs[2])
	if cn <= cf {
		t.Errorf("%q: cosine to %q is %.3f, not above %.3f to %q", query, near, cn, cf, far)
	} else {
		t.Logf("%q: %.3f to %q, %.3f to %q", query, cn, near, cf, far)
	}
}

func TestSimilarity(t *testing.T) {
	e := embedder.New()
	for _, tc := range []struct{ name, query, near, far string }{
		{"chinese", "我们决定使用端口30001", "端口30001", "今天天气很好，我们去公园散步吧"},
		{"chinese without digits", "数据库迁移失败了", "数据库迁移", "我昨天买了一本小说"},
		{"japanese", "会議でポート30001を使うことに決めました", "ポート30001", "今日は天気がいいので散歩に行きます"},
		{"korean", "포트 30001을 사용하기로 결정했습니다", "포트 30001", "오늘 날씨가 좋아서 산책을 했어요"},
		{"russian", "Мы решили оставить API на порту 30001", "порт 30001", "Вчера я купил новую книгу"},
		{"english shared words", "We decided to keep the API on port 30001", "which port did we decide on for the API?", "I baked a chocolate cake for my sister's birthday"},
		{"english no shared words", "my dog loves the park", "the puppy played outside on the grass", "the stock market fell sharply"},
		{"typo", "architecture", "architecure", "banana"},
		{"typo in the query", "architecure", "architecture", "furniture"},
		{"typo in a sentence", "the new architecture of the service", "architecure of our service", "dinner with friends tonight"},
		{"identifier", "deploy failed with ERR_CONN_RESET on node-7", "ERR_CONN_RESET", "the weather was lovely"},
		{"emoji", "🎉🎉", "party 🎉", "sad 😢"},
	} {
		t.Run(tc.name, func(t *testing.T) { closer(t, e, tc.query, tc.near, tc.far) })
	}
}

func TestDegenerateInput(t *testing.T) {
	e := embedder.New()
	texts := []string{"", " ", "\n\t  \r\n", "...?!", "🎉", "🎉🎉🎉", "👍🏽", "❤️", "\xff\xfe\xfd", "\x00", "\u200d\u200b", "\u0301",
		"a", "'", "''s", "n't", "x'", strings.Repeat("ab", 100000), strings.Repeat("🎉", 1000), strings.Repeat("字", 5000)}
	vs := MustEmbed(t, e, texts...)
	// Texts without features share one fixed vector; emoji do not.
	empty := vs[0]
	for i, text := range texts[:4] {
		if !equal(vs[i], empty) {
			t.Errorf("%q: want the vector of the empty text", text)
		}
	}
	if equal(vs[4], empty) || equal(vs[4], vs[6]) {
		t.Error("emoji: want a vector of their own")
	}
	for i := range vs {
		for j := range vs {
			if c := cos(vs[i], vs[j]); math.IsNaN(c) {
				t.Fatalf("cosine of %q and %q is NaN", texts[i], texts[j])
			}
		}
	}
}

func TestLongTextKeepsBuffersSmall(t *testing.T) {
	e := embedder.New()
	long := strings.Repeat("lorem ipsum dolor sit amet ", 20000)
	a := MustEmbed(t, e, long, "short text")
	b := MustEmbed(t, e, "short text", long)
	if !equal(a[0], b[1]) || !equal(a[1], b[0]) {
		t.Fatal("vectors depend on the other texts of the call")
	}
}

func FuzzEmbed(f *testing.F) {
	for _, s := range sampleTexts {
		f.Add(s)
	}
	f.Add("it's o'neill's rock'n'roll")
	f.Add("\u0301\u0301x\u0301")
	e := embedder.New()
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := e.Embed(context.Background(), []string{s, s})
		if err != nil {
			t.Fatal(err)
		}
		checkVector(t, s, vs[0])
		if !equal(vs[0], vs[1]) {
			t.Fatalf("%q: two vectors of one text differ", s)
		}
	})
}
