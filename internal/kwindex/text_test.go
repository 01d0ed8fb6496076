package kwindex

import (
	"reflect"
	"strings"
	"testing"
)

func TestIndexText(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string // the words unicode61 will see, lower-cased
	}{
		{"We decided: port 5432!", []string{"we", "decided", "port", "5432"}},
		{"ＤＢ２ ﬁle ｶﾀｶﾅ", []string{"db2", "file", "カタカナ"}},
		{"我们决定使用端口30001", []string{"我们", "决定", "使用", "端口", "30001"}},
		{"东京与北京", []string{"东京", "与", "北京"}},
		{"数据库迁移", []string{"数据", "据库", "数据库", "迁移"}}, // search mode adds the words inside
		{"東京で日本語の会議を開きました", []string{"東京", "で", "日本", "語", "の", "会議", "を", "開", "きました"}},
		{"データベースのポート", []string{"データベース", "の", "ポート"}},
		{"UIを直したPR", []string{"ui", "を", "直", "した", "pr"}},
		{"", nil},
	} {
		got, err := IndexText(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if words := fts5Words(got); !reflect.DeepEqual(words, tt.want) {
			t.Errorf("IndexText(%q) = %q, words %q; want %q", tt.in, got, words, tt.want)
		}
	}
}

// fts5Words splits s the way unicode61 does, for the characters in the tests.
func fts5Words(s string) []string {
	var out []string
	for _, r := range runs(s) {
		if r.class != classSep {
			out = append(out, strings.ToLower(r.text))
		}
	}
	return out
}

func TestIndexText_NoCJKLeavesTextAlone(t *testing.T) {
	in := "Plain text, (with) punctuation & symbols: a-b_c.d"
	got, err := IndexText(in)
	if err != nil || got != in {
		t.Fatalf("IndexText(%q) = %q, %v", in, got, err)
	}
}

func TestQueryTerms(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"What did we decide about the database port?", []string{"decide", "database", "port"}},
		{"port PORT Port", []string{"port"}},
		{`"port" AND (db OR ui) NOT pr*`, []string{"port", "db", "ui", "pr"}},
		{"NEAR(kafka consumer, 5)", []string{"near", "kafka", "consumer", "5"}},
		{"text:port -x ^y", []string{"text", "port", "x", "y"}},
		{"ENGRAM_PORT=30001", []string{"engram", "port", "30001"}},
		{"我们使用哪个端口？", []string{"使用", "端口"}},
		{"数据库迁移", []string{"数据库", "迁移"}}, // accurate mode: no words inside words
		{"東京の会議はどこですか", []string{"東京", "会議"}},
		{"ＤＢ２", []string{"db2"}},
		{"ありがとう", []string{"ありがとう"}}, // hiragana only: kept
		{"会議室を予約しました", []string{"会議室", "予約"}},
		{"the of and", nil},
		{"", nil},
	} {
		terms, err := QueryTerms(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, term := range terms {
			got = append(got, term.Text)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQueryTerms_Bounded(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString("word")
		b.WriteString(strings.Repeat("x", i))
		b.WriteByte(' ')
	}
	terms, err := QueryTerms(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(terms) != maxTerms {
		t.Fatalf("%d terms, want %d", len(terms), maxTerms)
	}
}

func TestCJKGrams(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain English", ""},
		{"会議室", "会 議 会議 室 議室"},
		{"会議、会議室 UI 日本", "会 議 会議 室 議室 日 本 日本"},
		{"東京で", "東 京 東京 で 京で"},
	} {
		if got := CJKGrams(tt.in); got != tt.want {
			t.Errorf("CJKGrams(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSegmenterCost logs what loading the gse dictionary costs. It is
// loaded once per process, so the figure is only meaningful when this test
// runs first (go test -run SegmenterCost -v).
func TestSegmenterCost(t *testing.T) {
	took, err := PreloadCJK()
	if err != nil {
		t.Fatal(err)
	}
	seg, _ := loadSegmenter()
	t.Logf("gse zh_s dictionary: %d words, loaded in %v (0 = loaded earlier in this process)",
		seg.Dict.NumTokens(), took)
	if again, err := PreloadCJK(); err != nil || again != 0 {
		t.Fatalf("second PreloadCJK = %v, %v; want 0, nil", again, err)
	}
}
