package trigger_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/trigger"
)

func mustTriggerMatcher(tb testing.TB, phrases []string) *trigger.Matcher {
	tb.Helper()
	m, err := trigger.NewMatcher(phrases)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// matchCase is a query that must match: the phrase Match finds and the
// rest of the query.
type matchCase struct{ query, phrase, rest string }

// checkMatches fails the test for each case m does not match as it says.
func checkMatches(t *testing.T, m *trigger.Matcher, tests []matchCase) {
	t.Helper()
	for _, tt := range tests {
		phrase, rest, ok := m.Match(tt.query)
		if !ok || phrase != tt.phrase || rest != tt.rest {
			t.Errorf("Match(%q) = %q, %q, %v; want %q, %q, true", tt.query, phrase, rest, ok, tt.phrase, tt.rest)
		}
	}
}

func TestTriggerMatchPositives(t *testing.T) {
	checkMatches(t, mustTriggerMatcher(t, trigger.Defaults()), []matchCase{
		// English: case, white space, punctuation, the seam tidied.
		{"Do you remember, what port we chose?", "do you remember", "what port we chose?"},
		{"What port did we choose, do you remember?", "do you remember", "What port did we choose?"},
		{"Do  you\nremember the port", "do you remember", "the port"},
		{"DO YOU REMEMBER the port", "do you remember", "the port"},
		{"do you remember", "do you remember", ""},
		{"Do you remember?", "do you remember", ""},
		{"do you remember when we picked 8080", "do you remember when", "we picked 8080"},
		{"Remember when we picked 8080?", "remember when", "we picked 8080?"},
		{"Don't you remember the port?", "don't you remember", "the port?"},
		{"Don’t you remember the port?", "don't you remember", "the port?"},
		{"dont you remember the port", "don't you remember", "the port"},
		{"Think carefully: which database did we choose?", "think carefully", "which database did we choose?"},
		{"Recall carefully the budget discussion", "recall carefully", "the budget discussion"},
		{"What did we decide about the port?", "what did we decide", "about the port?"},
		{"what did we agree on for the release date", "what did we agree on", "for the release date"},
		{"What did we agree about retries", "what did we agree", "about retries"},
		{"deep search: kafka retention", "deep search", "kafka retention"},
		{"search deeply for the kafka retention", "search deeply", "for the kafka retention"},
		{"Dig up the notes on sharding", "dig up", "the notes on sharding"},
		{"Try to remember the VPN host", "try to remember", "the VPN host"},
		{"the VPN host — try to remember!", "try to remember", "the VPN host!"},
		{"(do you remember) the VPN host", "do you remember", "the VPN host"},
		{"the VPN host (do you remember?)", "do you remember", "the VPN host"},
		{`"Do you remember" the VPN host`, "do you remember", "the VPN host"},
		{"Ｄｏ ｙｏｕ ｒｅｍｅｍｂｅｒ the port", "do you remember", "the port"},
		{"so, do you recall the port", "do you recall", "so, the port"},
		// Chinese.
		{"认真回忆一下我们的端口", "认真回忆", "一下我们的端口"},
		{"仔细回忆：数据库选了哪个", "仔细回忆", "数据库选了哪个"},
		{"深度检索 kafka 保留策略", "深度检索", "kafka 保留策略"},
		{"深度搜索数据库迁移", "深度搜索", "数据库迁移"},
		{"你还记得吗，我们用的端口是多少？", "你还记得吗", "我们用的端口是多少？"},
		{"我们用的端口是多少，你还记得吗？", "你还记得吗", "我们用的端口是多少？"},
		{"你还记得我们选了哪个数据库", "你还记得", "我们选了哪个数据库"},
		{"端口还记得吗", "还记得吗", "端口"},
		{"记不记得那个端口", "记不记得", "那个端口"},
		{"我们决定了什么？", "我们决定了什么", ""},
		{"关于端口，我们决定了什么", "我们决定了什么", "关于端口"},
		{"认真 回忆 端口", "认真回忆", "端口"},
		{"還記得嗎，端口是多少", "還記得嗎", "端口是多少"},
		// Japanese.
		{"あの時のこと覚えてる？", "覚えてる?", "あの時のこと"},
		{"ポート番号、覚えていますか？", "覚えていますか", "ポート番号？"},
		{"覚えてますか、ポート番号", "覚えてますか", "ポート番号"},
		{"ポート番号を覚えてるかな", "覚えてるかな", "ポート番号を"},
		{"ポート番号、覚えてるか？", "覚えてるか", "ポート番号？"},
		{"「覚えていますか」ポート番号", "覚えていますか", "ポート番号"},
		{"思い出して。ポートは？", "思い出して", "ポートは？"},
		{"ポート番号を思い出してください", "思い出して", "ポート番号を"},
		{"ポート番号を思い出してみて", "思い出して", "ポート番号を"},
		{"詳しく調べて：移行の件", "詳しく調べて", "移行の件"},
		{"深く検索してデータベースの件", "深く検索", "してデータベースの件"},
		{"何を決めたっけ？", "何を決めたっけ", ""},
		{"ﾎﾟｰﾄ番号、覚えていますか", "覚えていますか", "ﾎﾟｰﾄ番号"},
	})
}

// triggerNegatives are ordinary sentences that talk about remembering,
// deciding or searching without asking for a deep trigger.
var triggerNegatives = []string{
	// English.
	"I remember the meeting",
	"remember to buy milk",
	"we decided on Postgres",
	"I remembered the password",
	"remembered",
	"do you remembering",
	"undo you remember",
	"I don't remember the port",
	"you remember that we use Redis",
	"what did we eat for lunch",
	"what did we deploy on Friday",
	"the team decided what to do",
	"I think we should use Redis",
	"the recall was carefully planned",
	"we need a deep searching algorithm",
	"dig upstream for the patch",
	"do you think the port is right",
	"can you rem ember",
	"remember me",
	"Remembrance Day is in November",
	"deepsearch is a product name",
	"she tried to remain calm",
	"what did wedecide",
	"recall",
	"",
	"   ",
	// Chinese.
	"我记得这个",
	"我还记得那次会议",
	"我不记得了",
	"记得买牛奶",
	"我们决定用Postgres",
	"回忆录很好看",
	"深度学习模型",
	"搜索结果不准确",
	"数据库迁移计划",
	"我们决定了",
	"深度优先搜索",
	// Japanese.
	"覚える",
	"会議のことは覚えてる。",
	"覚えています",
	"覚えてるよ",
	"覚えてる人がいない",
	"昔を思い出していた",
	"思い出してる",
	"思い出して泣いた",
	"詳しく調べている",
	"思い出せない",
	"何を決めたか覚えてない",
	"覚えてるかどうか分からない",
	"データベースを検索する",
}

func TestTriggerMatchNegatives(t *testing.T) {
	m := mustTriggerMatcher(t, trigger.Defaults())
	for _, q := range triggerNegatives {
		if phrase, rest, ok := m.Match(q); ok || rest != q {
			t.Errorf("Match(%q) = %q, %q, %v; want no match and the query back", q, phrase, rest, ok)
		}
	}
}

// Every default phrase fires on itself, alone and inside a sentence.
func TestTriggerDefaultsMatchThemselves(t *testing.T) {
	m := mustTriggerMatcher(t, trigger.Defaults())
	for _, p := range trigger.Defaults() {
		if phrase, rest, ok := m.Match(p); !ok || phrase != p || rest != "" {
			t.Errorf("Match(%q) = %q, %q, %v; want itself and an empty rest", p, phrase, rest, ok)
		}
		q := "x " + p + " y"
		if phrase, _, ok := m.Match(q); !ok || phrase != p && !strings.Contains(phrase, p) {
			t.Errorf("Match(%q) = %q, %v; want %q", q, phrase, ok, p)
		}
	}
}

func TestTriggerLongestWins(t *testing.T) {
	m := mustTriggerMatcher(t, []string{"remember", "do you remember", "you remember when", "记得", "你还记得吗"})
	checkMatches(t, m, []matchCase{
		{"do you remember the port", "do you remember", "the port"},
		{"do you remember when we met", "you remember when", "do we met"},
		{"remember the port", "remember", "the port"},
		{"记得吗你还记得吗端口", "你还记得吗", "记得吗端口"},
		{"记得端口", "记得", "端口"},
	})
}

// Configured phrases come back as configured, whatever their case or
// width, and a custom kana-final phrase gets the clause rule.
func TestTriggerCustomPhrases(t *testing.T) {
	m := mustTriggerMatcher(t, []string{"  Look It Up  ", "ＴＨＩＮＫ", "覚えてる", "覚えてる"})
	tests := []struct {
		query, phrase, rest string
		ok                  bool
	}{
		{"look it up: the port", "  Look It Up  ", "the port", true},
		{"think: the port", "ＴＨＩＮＫ", "the port", true},
		{"thinking about the port", "", "thinking about the port", false},
		{"ポート、覚えてる？", "覚えてる", "ポート？", true},
		{"ポート覚えてるかな", "覚えてる", "ポート", true},
		{"ポートを覚えてる", "覚えてる", "ポートを", true},
		{"覚えてるよ", "", "覚えてるよ", false},
		{"覚えてる人", "", "覚えてる人", false},
	}
	for _, tt := range tests {
		phrase, rest, ok := m.Match(tt.query)
		if ok != tt.ok || phrase != tt.phrase || rest != tt.rest {
			t.Errorf("Match(%q) = %q, %q, %v; want %q, %q, %v", tt.query, phrase, rest, ok, tt.phrase, tt.rest, tt.ok)
		}
	}
}

func TestNewTriggerMatcherRejectsBlank(t *testing.T) {
	for _, tt := range []struct {
		phrases []string
		field   string
	}{
		{[]string{""}, "triggers[0]"},
		{[]string{"ok", "   "}, "triggers[1]"},
		{[]string{"ok", "fine", "\t\n"}, "triggers[2]"},
		{[]string{"?!"}, "triggers[0]"},
		{[]string{"\u200b"}, "triggers[0]"},
	} {
		_, err := trigger.NewMatcher(tt.phrases)
		var e *engram.Error
		if !errors.As(err, &e) || e.Code != engram.EINVALID || e.Field != tt.field {
			t.Errorf("NewTriggerMatcher(%q) = %v; want EINVALID on %s", tt.phrases, err, tt.field)
		}
	}
	m, err := trigger.NewMatcher(nil)
	if err != nil {
		t.Fatalf("no phrases: %v", err)
	}
	if _, rest, ok := m.Match("do you remember"); ok || rest != "do you remember" {
		t.Errorf("an empty matcher matched")
	}
}

func TestTriggerDefaultsAreFresh(t *testing.T) {
	a := trigger.Defaults()
	a[0] = "changed"
	if trigger.Defaults()[0] == "changed" {
		t.Fatal("DefaultTriggers returned shared storage")
	}
}

func FuzzTriggerMatch(f *testing.F) {
	for _, q := range triggerNegatives {
		f.Add(q)
	}
	f.Add("Do you remember, what port we chose?")
	f.Add("ポート番号、覚えていますか？")
	f.Add("你还记得吗，端口")
	f.Add("ｄｏ　ｙｏｕ\u200bremember\u0301?")
	m := mustTriggerMatcher(f, trigger.Defaults())
	f.Fuzz(func(t *testing.T, q string) {
		phrase, rest, ok := m.Match(q)
		if !ok {
			if phrase != "" || rest != q {
				t.Fatalf("no match but %q, %q", phrase, rest)
			}
			return
		}
		if len(rest) >= len(q) {
			t.Fatalf("Match(%q) removed nothing: %q", q, rest)
		}
		if utf8.ValidString(q) && !utf8.ValidString(rest) {
			t.Fatalf("Match(%q) cut a rune: %q", q, rest)
		}
	})
}

func BenchmarkTriggerMatch(b *testing.B) {
	m := mustTriggerMatcher(b, trigger.Defaults())
	// A 4 KB query (the limit) in three scripts with no trigger: the
	// worst case, every position tried.
	q := strings.Repeat("we decided to remember 数据库的端口 覚えるのは大事 ", 200)[:engram.MaxQueryBytes]
	for !utf8.ValidString(q) {
		q = q[:len(q)-1]
	}
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		if _, _, ok := m.Match(q); ok {
			b.Fatal("matched")
		}
	}
}
