package kwindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The palace's tests (keyword_test.go) prove that these indexes rank as
// FTS5 does on the real SQLite; these check the index's own bookkeeping.

// corpus makes n docs of words drawn with Zipf frequencies from a small
// vocabulary (so that most queries match many docs, with repeated words
// and ties), in three namespaces, some without a time, with a second
// column whose words are words of the text too.
func corpus(n int, seed uint64) []Doc {
	words := strings.Fields(`the we decided to use postgres for the database migration release
		review meeting kafka cluster backup cache latency incident rollback deploy deploying deployed
		caresses ponies agreed hopping relational generalizations café naïve Zürich
		alice bob carol port 5432 friday evening dinner family hiking guitar`)
	seconds := []string{"Alice", "Bob", "Carol Cache", ""}
	rng := rand.New(rand.NewPCG(seed, 7))
	zipf := rand.NewZipf(rng, 1.2, 3, uint64(len(words)-1))
	docs := make([]Doc, n)
	for i := range docs {
		w := make([]string, 3+rng.IntN(25))
		for j := range w {
			w[j] = words[zipf.Uint64()]
		}
		d := Doc{Key: int64(i + 1), Namespace: []string{"default", "work", "home"}[rng.IntN(3)],
			Text: strings.Join(w, " "), Second: seconds[rng.IntN(len(seconds))]}
		if rng.IntN(10) != 0 {
			d.TS, d.HasTS = int64(i)*1e9, true
			d.End, d.HasEnd = d.TS+int64(rng.IntN(100))*1e9, true
		}
		d.Hidden = rng.IntN(20) == 0
		docs[i] = d
	}
	return docs
}

var queries = []string{
	"decided database migration", "kafka cluster backup", "the release review meeting",
	"deploy", "deployed deploying", "alice cache", "carol", "ponies caresses agreed",
	"café naive zurich", "port 5432", "nothing matches this", "friday family dinner hiking guitar bob",
}

// queryToks is the tokens of q's words.
func queryToks(t *testing.T, q string) []string {
	t.Helper()
	toks, ok := QueryTokens(strings.Fields(q))
	if !ok {
		t.Fatalf("%q: a word is not one token", q)
	}
	return toks
}

// TestIndex_Compact replaces and deletes most docs of an index, compacts
// it, and checks that it scores as an index built from the live docs alone.
func TestIndex_Compact(t *testing.T) {
	docs := corpus(12000, 4)
	x, want := New(0.4), New(0.4)
	for _, d := range docs {
		x.Add(d)
	}
	for i, d := range docs {
		switch i % 4 {
		case 0: // kept
			want.Add(d)
		case 1: // replaced, as a unit that grows
			d.Text += " grown"
			x.Add(d)
			want.Add(d)
		default:
			x.Remove(d.Key)
		}
	}
	dead := x.Dead()
	x.CompactIfWasteful()
	if x.Dead() != 0 || dead <= 4096 {
		t.Fatalf("%d docs dead after the compaction (%d before)", x.Dead(), dead)
	}
	for _, q := range queries {
		toks := queryToks(t, q+" grown")
		if a, b := x.Best(toks, Filter{}, 40), want.Best(toks, Filter{}, 40); !slices.Equal(a, b) {
			t.Errorf("%q: compacted %v, fresh %v", q, a, b)
		}
	}
}

// TestIndex_Filter checks that Best returns, of the docs Score scores, the
// best limit that the filter passes, for filters of every kind.
func TestIndex_Filter(t *testing.T) {
	docs := corpus(3000, 5)
	x := New(0.4)
	for _, d := range docs {
		x.Add(d)
	}
	byKey := map[int64]Doc{}
	for _, d := range docs {
		byKey[d.Key] = d
	}
	from, to := int64(500e9), int64(2000e9)
	keys := map[int64]bool{3: true, 10: true, 11: true, 2999: true, 5000: true}
	filters := []struct {
		f    Filter
		pass func(Doc) bool
	}{
		{Filter{}, func(d Doc) bool { return !d.Hidden }},
		{Filter{Namespace: "work"}, func(d Doc) bool { return !d.Hidden && d.Namespace == "work" }},
		{Filter{Namespace: "nowhere"}, func(Doc) bool { return false }},
		{Filter{From: from, To: to}, func(d Doc) bool { return !d.Hidden && d.HasTS && d.TS >= from && d.TS < to }},
		{Filter{Namespace: "home", From: from, Spans: true}, func(d Doc) bool {
			return !d.Hidden && d.Namespace == "home" && d.HasEnd && d.End >= from
		}},
		{Filter{To: to, Spans: true}, func(d Doc) bool { return !d.Hidden && d.HasTS && d.TS < to }},
		{Filter{Keys: keys, Namespace: "nowhere"}, func(d Doc) bool { return keys[d.Key] }},
	}
	for _, q := range queries {
		toks := queryToks(t, q)
		var all []Hit
		x.Score(toks, Filter{Keys: map[int64]bool{}}, func(h Hit) { t.Fatalf("a doc outside the keys: %v", h) })
		for k := range byKey {
			keys := map[int64]bool{k: true}
			x.Score(toks, Filter{Keys: keys}, func(h Hit) { all = append(all, h) })
		}
		slices.SortFunc(all, func(a, b Hit) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		for i, tt := range filters {
			var want []Hit
			for _, h := range all {
				if tt.pass(byKey[h.Key]) && len(want) < 25 {
					want = append(want, h)
				}
			}
			if got := x.Best(toks, tt.f, 25); !slices.Equal(got, want) {
				t.Errorf("%q, filter %d: %v, want %v", q, i, got, want)
			}
		}
	}
}

// TestIndex_BigTermFrequency: a word said 255 times or more in one doc is
// counted exactly, before and after a compaction moves the docs: a doc of
// n matches scores as one of n matches, whatever the counts around it.
func TestIndex_BigTermFrequency(t *testing.T) {
	counts := []int{1, 3, 254, 255, 256, 300, 1000, 7}
	x := New(0)
	for i, n := range counts {
		x.Add(Doc{Key: int64(i + 1), Text: strings.Repeat("kafka ", n) + "cluster log"})
	}
	scores := func() map[int64]float64 {
		m := map[int64]float64{}
		x.Score([]string{"kafka"}, Filter{}, func(h Hit) { m[h.Key] = h.Score })
		return m
	}
	before := scores()
	order := slices.Clone(counts)
	slices.Sort(order)
	for i := 1; i < len(order); i++ {
		lo, hi := int64(slices.Index(counts, order[i-1])+1), int64(slices.Index(counts, order[i])+1)
		if !(before[hi] > before[lo]) {
			t.Errorf("%d matches score %v, not more than %d matches' %v", order[i], before[hi], order[i-1], before[lo])
		}
	}
	x.Remove(1)
	x.Add(Doc{Key: 1, Text: strings.Repeat("kafka ", counts[0]) + "cluster log"}) // the same doc, moved to the end
	x.Compact()
	after := scores()
	for k, s := range before {
		if math.Abs(after[k]-s) > 0 {
			t.Errorf("doc %d: %v after the compaction, %v before", k, after[k], s)
		}
	}
}

// TestPostings_RoundTrip packs postings of every kind (the first doc 0
// and not, gaps of one to the largest, the usual frequency and others,
// counts at bigTF, second column counts) and reads them back.
func TestPostings_RoundTrip(t *testing.T) {
	type posting struct {
		d  uint32
		tf uint16
	}
	rng := rand.New(rand.NewPCG(3, 9))
	for _, first := range []uint32{0, 1, 127, 128, 1 << 20} {
		var want []posting
		d := first
		for i := range 2000 {
			tf := uint16(oneTF)
			switch rng.IntN(4) {
			case 0:
				tf = uint16(rng.IntN(bigTF+1))<<8 | uint16(rng.IntN(256))
			case 1:
				tf = bigTF << 8
			}
			want = append(want, posting{d, tf})
			gap := []uint32{1, 2, 63, 64, 127, 128, 1 << 14, 1 << 21}[i%8]
			if d > math.MaxUint32-gap-1<<21 {
				break
			}
			d += gap
		}
		var p postings
		for _, w := range want {
			p.appendPosting(w.d, w.tf)
		}
		var got []posting
		for i, d := 0, uint32(0); i < len(p.enc); {
			var tf uint16
			d, tf, i = nextPosting(p.enc, i, d)
			got = append(got, posting{d, tf})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("first doc %d: %d postings read back differ from the %d written", first, len(got), len(want))
		}
		if p.last != want[len(want)-1].d {
			t.Fatalf("first doc %d: last %d, want %d", first, p.last, want[len(want)-1].d)
		}
	}
}

// TestQueryTokens: a word that FTS5 would cut into more tokens, or none,
// is not one the index can rank.
func TestQueryTokens(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  []string
	}{
		{[]string{"Deploying", "caresses"}, []string{"deploi", "caress"}},
		{[]string{"port:5432"}, nil},
		{[]string{"..."}, nil},
	} {
		got, ok := QueryTokens(tt.words)
		if ok != (tt.want != nil) || !slices.Equal(got, tt.want) {
			t.Errorf("QueryTokens(%q) = %q, %v; want %q", tt.words, got, ok, tt.want)
		}
	}
}
