package recall

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// packCorpus is realistic memory text in the languages engram meets; the
// property tests pack it under every budget.
var packCorpus = []string{
	// English
	"We decided to keep the public API on port 30001 and move the admin UI to 30002, because the reverse proxy on the staging box already claims 8080.",
	"Ana prefers short answers with code first; she dislikes bullet lists longer than five items and asked me to stop apologizing.",
	"The nightly backup job failed on 2026-04-30 at 03:17 UTC with 'disk quota exceeded' on /var/lib/engram; we raised the quota to 200 GiB and re-ran it manually.",
	"Remember: the customer's invoice number is INV-2026-00481, due on June 15th; Bo will email the PDF after the review meeting on Thursday.",
	"func (s *Service) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {\n\treturn s.recall(ctx, req)\n}",
	"See https://github.com/engram-dev/engram/issues/42#issuecomment-1849203 and the trace with ULID 01HZX3K8M9Q2R7T4V6W8Y0A1B3 for details.",
	// Chinese
	"我们决定把公共接口保留在 30001 端口，管理界面改到 30002，因为测试服务器上的反向代理已经占用了 8080。",
	"安娜喜欢简短的回答，先给代码；她不喜欢超过五项的列表，并要求我不要再道歉。",
	"明天下午三点和产品团队开会，讨论记忆服务的上下文打包功能，记得带上上周的基准测试结果。",
	"用户的猫叫“豆豆”，今年三岁，对鸡肉过敏，只吃无谷物猫粮。",
	// Japanese
	"来週の月曜日に東京オフィスでデザインレビューを行います。資料はアナさんが金曜日までに共有してくれる予定です。",
	"バックアップの設定を変更しました。毎晩3時に実行され、30日分を保存します。",
	"ユーザーはコーヒーよりも緑茶が好きで、朝はいつもおにぎりを食べるそうです。",
	// Korean
	"다음 주 화요일에 서울 사무실에서 배포 일정을 다시 논의하기로 했습니다.",
	"사용자는 매운 음식을 좋아하지만 땅콩 알레르기가 있습니다.",
	// Mixed and other scripts
	"部署的时候记得设置 ENGRAM_HOME=/data/engram，然后运行 `engram serve --port 30001`。",
	"Meeting notes 会议记录: the Q3 roadmap (ロードマップ) includes context packing and 深度检索.",
	"Great job on the release 🎉🚀 — the team celebrated with café au lait ☕ and crêpes.",
	"Пользователь просит отвечать по-русски и использовать метрическую систему.",
}

// packResults makes n results from the corpus in rank order, with dates,
// sessions, speakers or roles, and one or more sources.
func packResults(n int) []engram.Result {
	base := time.Date(2026, 5, 1, 14, 3, 27, 0, time.UTC)
	rs := make([]engram.Result, n)
	for i := range rs {
		ts := base.Add(-time.Duration(i) * 97 * time.Minute)
		r := engram.Result{
			ID: fmt.Sprintf("01KB4Q8ZK3M9V2T7W5R1C6%04d", i+1), Kind: engram.KindTurn, Text: packCorpus[i%len(packCorpus)],
			Score: 1 / float64(i+1), TS: ts, Namespace: "default", Session: fmt.Sprintf("s%d", i%3),
			Role: engram.RoleUser, Speaker: []string{"Ana", "", "Bo"}[i%3],
		}
		if i%3 == 1 {
			r.Role = engram.RoleAssistant
		}
		r.Sources = []engram.Source{{ID: r.ID, Session: r.Session, TS: ts}}
		if i%4 == 3 {
			r.Sources = append(r.Sources, engram.Source{ID: fmt.Sprintf("01KC4Q8ZK3M9V2T7W5R1C6%04d", i+1), Session: r.Session, TS: ts.Add(time.Minute)})
		}
		rs[i] = r
	}
	return rs
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"word", 1},
		{"words", 2},                // one per 4 letters, rounded up
		{"the cat sat", 3},          // single spaces are free
		{"the  cat", 3},             // a run of two spaces is not
		{"hello, world.", 6},        // punctuation is a token each
		{"30001", 5},                // one per digit
		{"a\nb", 3},                 // newlines count
		{"internationalization", 7}, // long runs: one per 3 letters
		{"recallService", 4},        // camelCase splits: 2 + 2
		{"HTTPServer", 3},           // capitals after capitals do not
		{"中", 1},
		{"我们决定", 5}, // CJK: 4 + (4+2)/4
		{"ひらがなカタカナ", 10},
		{"한국어 서울", 7}, // (3+1) + (2+1)
		{"café", 2},
		{"привет", 4}, // Cyrillic: two per 3
		{"a…", 2},
		{"— “ok” —", 5},
		{"🎉", 4},          // beyond the BMP: its UTF-8 length
		{"\xff\xfe", 2},   // invalid bytes: one each
		{"ab\xe4\xb8", 1}, // a character cut at the end is free
		{"\xe4\xb8ab", 3},
	}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestEstimateTokensMonotonic checks that no prefix, even one cut inside a
// character, estimates more than the whole string.
func TestEstimateTokensMonotonic(t *testing.T) {
	texts := append([]string{strings.Join(packCorpus, "\n"), "a  b\n\n  c\t\td🎉🎉x\xffé中"}, packCorpus...)
	for _, s := range texts {
		prev := 0
		for i := 0; i <= len(s); i++ {
			got := EstimateTokens(s[:i])
			if got < prev {
				t.Fatalf("EstimateTokens(%q) = %d < %d for the shorter %q", s[:i], got, prev, s[:i-1])
			}
			prev = got
		}
	}
}

// FuzzEstimateTokens checks monotonicity and the additivity over lines on
// arbitrary input.
func FuzzEstimateTokens(f *testing.F) {
	for _, s := range packCorpus {
		f.Add(s, len(s)/2)
	}
	f.Add("a\xffb\xe4\xb8", 4)
	f.Fuzz(func(t *testing.T, s string, i int) {
		if i < 0 || i > len(s) {
			return
		}
		if a, b := EstimateTokens(s[:i]), EstimateTokens(s); a > b {
			t.Fatalf("EstimateTokens(%q) = %d > %d for the longer %q", s[:i], a, b, s)
		}
		a, b := packFold(s[:i]), packFold(s[i:])
		if got, want := EstimateTokens(a+"\n"+b), EstimateTokens(a)+1+EstimateTokens(b); got != want {
			t.Fatalf("EstimateTokens(%q) = %d, want the lines' %d", a+"\n"+b, got, want)
		}
	})
}

func TestEstimateTokensAtLeastWords(t *testing.T) {
	for _, s := range packCorpus {
		if words := len(strings.Fields(s)); EstimateTokens(s) < words {
			t.Errorf("EstimateTokens(%q) = %d, under its %d words", s, EstimateTokens(s), words)
		}
	}
}

// TestEstimateTokensLines checks the additivity Pack relies on: lines joined
// by newlines estimate the sum of the lines plus one per newline.
func TestEstimateTokensLines(t *testing.T) {
	want := len(packCorpus) - 1
	for _, s := range packCorpus {
		s = packFold(s)
		want += EstimateTokens(s)
	}
	folded := make([]string, len(packCorpus))
	for i, s := range packCorpus {
		folded[i] = packFold(s)
	}
	if got := EstimateTokens(strings.Join(folded, "\n")); got != want {
		t.Errorf("joined lines estimate %d, want %d", got, want)
	}
}

func TestPackExample(t *testing.T) {
	rs := packResults(4)
	rs[0].Text = "We decided to keep the API\n\n  on port   30001."
	rs[1].Speaker, rs[1].Text = "", "Noted:\tthe deploy runs at night."
	block, used, included := Pack(rs, 1000)
	want := "Relevant memories (engram, 4 of 4 results, most relevant first, times UTC):\n" +
		"[1] 2026-05-01 14:03 · session s0 · Ana: We decided to keep the API on port 30001. (source 01KB4Q8ZK3M9V2T7W5R1C60001)\n" +
		"[2] 2026-05-01 12:26 · session s1 · assistant: Noted: the deploy runs at night. (source 01KB4Q8ZK3M9V2T7W5R1C60002)\n" +
		"[3] 2026-05-01 10:49 · session s2 · Bo: " + packCorpus[2] + " (source 01KB4Q8ZK3M9V2T7W5R1C60003)\n" +
		"[4] 2026-05-01 09:12 · session s0 · Ana: " + packCorpus[3] + " (sources 01KB4Q8ZK3M9V2T7W5R1C60004, 01KC4Q8ZK3M9V2T7W5R1C60004)"
	if block != want {
		t.Errorf("block:\n%s\nwant:\n%s", block, want)
	}
	if included != 4 || used != EstimateTokens(block) {
		t.Errorf("used, included = %d, %d; want %d, 4", used, included, EstimateTokens(block))
	}
	t.Logf("example (%d tokens):\n%s", used, block)
}

func TestPackEmpty(t *testing.T) {
	rs := packResults(3)
	tests := []struct {
		name    string
		results []engram.Result
		budget  int
	}{
		{"nil results", nil, 100},
		{"no results", []engram.Result{}, 100},
		{"zero budget", rs, 0},
		{"negative budget", rs, -5},
		{"budget below the header", rs, 10},
		{"budget below header and a useful cut", rs, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			block, used, included := Pack(tt.results, tt.budget)
			if block != "" || used != 0 || included != 0 {
				t.Errorf("Pack = %q, %d, %d; want empty", block, used, included)
			}
		})
	}
}

var (
	packDate  = regexp.MustCompile(`^\[(\d+)\] (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) · session s\d · [^:]+: `)
	packSrcRe = regexp.MustCompile(`\((?:source|sources) ([0-9A-Z, ]+)\)$`)
)

// checkPackBlock checks the invariants of a packed block against its results.
func checkPackBlock(t *testing.T, rs []engram.Result, budget int, block string, used, included int) {
	t.Helper()
	if !utf8.ValidString(block) {
		t.Fatalf("budget %d: block is not valid UTF-8: %q", budget, block)
	}
	if used != EstimateTokens(block) {
		t.Fatalf("budget %d: used %d, block estimates %d", budget, used, EstimateTokens(block))
	}
	if used > budget {
		t.Fatalf("budget %d: used %d tokens:\n%s", budget, used, block)
	}
	if block == "" {
		if included != 0 {
			t.Fatalf("budget %d: empty block with %d included", budget, included)
		}
		return
	}
	lines := strings.Split(block, "\n")
	if want := fmt.Sprintf("Relevant memories (engram, %d of %d results, most relevant first, times UTC):", included, len(rs)); lines[0] != want {
		t.Fatalf("budget %d: header %q, want %q", budget, lines[0], want)
	}
	if len(lines)-1 != included {
		t.Fatalf("budget %d: %d entries, included %d", budget, len(lines)-1, included)
	}
	for i, line := range lines[1:] {
		r := rs[i] // rank order: entry i is result i
		m := packDate.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("budget %d: entry %q lacks number, date, session or speaker", budget, line)
		}
		if m[1] != fmt.Sprint(i+1) || m[2] != r.TS.UTC().Format("2006-01-02 15:04") {
			t.Fatalf("budget %d: entry %q, want number %d and date of %v", budget, line, i+1, r.TS)
		}
		s := packSrcRe.FindStringSubmatch(line)
		if s == nil {
			t.Fatalf("budget %d: entry %q lacks its sources", budget, line)
		}
		var ids []string
		for _, src := range r.Sources {
			ids = append(ids, src.ID)
		}
		if s[1] != strings.Join(ids, ", ") {
			t.Fatalf("budget %d: entry %q has sources %q, want %v", budget, line, s[1], ids)
		}
		text := strings.TrimSuffix(line[len(m[0]):], " "+s[0])
		full := packFold(r.Text)
		switch {
		case text == full:
		case i == included-1 && strings.HasSuffix(text, "…") && strings.HasPrefix(full, strings.TrimSuffix(text, "…")):
			if EstimateTokens(strings.TrimSuffix(text, "…")) < MinPackTruncTokens {
				t.Fatalf("budget %d: entry %q cut to less than %d tokens", budget, line, MinPackTruncTokens)
			}
		default:
			t.Fatalf("budget %d: entry %d text %q is neither %q nor its cut prefix (last entry only)", budget, i+1, text, full)
		}
	}
}

// TestPackBudgets packs realistic results in every language under each
// budget from 1 to 2000 and checks the invariants: never over budget, valid
// UTF-8, rank order, dates and sources present, cuts only at the end.
func TestPackBudgets(t *testing.T) {
	sets := map[string][]engram.Result{"mixed": packResults(40)}
	for lang, idx := range map[string][]int{"english": {0, 1, 2, 3, 4, 5}, "chinese": {6, 7, 8, 9}, "japanese": {10, 11, 12}} {
		rs := packResults(len(idx))
		for i, j := range idx {
			rs[i].Text = packCorpus[j]
		}
		// Repeat so large budgets still cut.
		for len(rs) < 30 {
			next := packResults(len(rs) + 1)[len(rs)]
			next.Text = rs[len(rs)%len(idx)].Text + " " + rs[(len(rs)+1)%len(idx)].Text
			rs = append(rs, next)
		}
		sets[lang] = rs
	}
	for name, rs := range sets {
		t.Run(name, func(t *testing.T) {
			prevIncluded := 0
			for budget := 1; budget <= 2000; budget++ {
				block, used, included := Pack(rs, budget)
				checkPackBlock(t, rs, budget, block, used, included)
				// More budget never holds fewer results (the tokens used may
				// dip by a word when a cut backs up to a word boundary).
				if included < prevIncluded {
					t.Fatalf("budget %d: %d included, fewer than %d at budget %d", budget, included, prevIncluded, budget-1)
				}
				prevIncluded = included
			}
			if prevIncluded < 10 {
				t.Errorf("budget 2000 holds only %d results", prevIncluded)
			}
		})
	}
}

func TestPackTruncates(t *testing.T) {
	long := strings.Repeat("The quick brown fox jumps over the lazy dog near the river bank. ", 400)
	cjk := strings.Repeat("我们决定把公共接口保留在端口，管理界面改到新的端口。", 300)
	mixed := strings.Repeat("部署 engram serve 🎉 café ロードマップ 深度检索 ", 300)
	for _, tt := range []struct {
		name, text string
	}{{"english", long}, {"chinese", cjk}, {"mixed", mixed}} {
		t.Run(tt.name, func(t *testing.T) {
			rs := packResults(2)
			rs[0].Text = tt.text
			for _, budget := range []int{120, 128, 200, 333, 1000, 4096} {
				block, used, included := Pack(rs, budget)
				checkPackBlock(t, rs, budget, block, used, included)
				if included != 1 || !strings.Contains(block, "… (source 01KB4Q8ZK3M9V2T7W5R1C60001)") {
					t.Fatalf("budget %d: want one cut result, got %d:\n%s", budget, included, block)
				}
				if used < budget-8 {
					t.Errorf("budget %d: used only %d", budget, used)
				}
			}
		})
	}
	t.Run("word boundary", func(t *testing.T) {
		rs := packResults(1)
		rs[0].Text = long
		full := packFold(long)
		isLetter := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
		for budget := 120; budget < 400; budget++ {
			block, _, _ := Pack(rs, budget)
			m := packDate.FindStringIndex(strings.Split(block, "\n")[1])
			cut := strings.Split(block, "\n")[1][m[1]:]
			cut = cut[:strings.Index(cut, "…")]
			if n := len(cut); !strings.HasPrefix(full, cut) || isLetter(full[n-1]) && isLetter(full[n]) {
				t.Errorf("budget %d: cut inside a word: %q", budget, cut[max(0, len(cut)-30):])
			}
		}
	})
}

func TestPackVeryLong(t *testing.T) {
	rs := packResults(3)
	rs[0].Text = strings.Repeat(packCorpus[0]+" "+packCorpus[6]+" ", 8000) // 2 MB
	for _, budget := range []int{200, 4096, 100_000} {
		block, used, included := Pack(rs, budget)
		checkPackBlock(t, rs, budget, block, used, included)
		if included != 1 || used < budget-8 {
			t.Errorf("budget %d: included %d in %d tokens, want the first cut to the budget", budget, included, used)
		}
	}
	// The whole of it fits a budget large enough.
	budget := EstimateTokens(rs[0].Text) + 200
	block, used, included := Pack(rs[:1], budget)
	checkPackBlock(t, rs[:1], budget, block, used, included)
	if included != 1 || strings.Contains(block, "…") {
		t.Errorf("budget %d: included %d, cut %v", budget, included, strings.Contains(block, "…"))
	}
}

func TestPackStopsAtFirstMisfit(t *testing.T) {
	rs := packResults(3)
	rs[1].Text = strings.Repeat("x", 3) // tiny: would fit after a big one
	rs[0].Text = strings.Repeat("word ", 2000)
	block, _, included := Pack(rs, 200)
	if included != 1 || strings.Contains(block, "[2]") {
		t.Errorf("included %d, want only the cut first result:\n%s", included, block)
	}
	// Without room for a useful cut, packing stops before the result.
	rs[0].Text = "short text"
	rs[1].Text = strings.Repeat("longer words here ", 200)
	head := packHeader(2, 3)
	first := newPackEntry(1, &rs[0]).line(rs[0].Text, false)
	second := newPackEntry(2, &rs[1]).line("", true)
	budget := EstimateTokens(head) + 1 + EstimateTokens(first) + 1 + EstimateTokens(second) + MinPackTruncTokens - 2
	block, used, included := Pack(rs, budget)
	if included != 1 {
		t.Errorf("budget %d: included %d, want 1 (no useful cut of the second):\n%s", budget, included, block)
	}
	checkPackBlock(t, rs, budget, block, used, included)
}

func TestPackFolding(t *testing.T) {
	rs := []engram.Result{{
		ID: "r1", Text: "line one\r\n\tline\x00two \u3000 end \xff", Session: "s\n1", Speaker: " Ana\t",
		Sources: []engram.Source{{ID: "a"}, {ID: "b"}, {ID: "c"}},
	}}
	block, _, included := Pack(rs, 500)
	want := "Relevant memories (engram, 1 of 1 results, most relevant first, times UTC):\n" +
		"[1] session s 1 · Ana: line one line two end \uFFFD (sources a, b, c)"
	if block != want || included != 1 {
		t.Errorf("block:\n%q\nwant:\n%q", block, want)
	}
	// Dates come from the first source when the result has none, in UTC.
	loc := time.FixedZone("CEST", 2*3600)
	rs[0].Sources[0].TS = time.Date(2026, 5, 1, 16, 3, 59, 0, loc)
	rs[0].Speaker, rs[0].Role = "", engram.RoleTool
	block, _, _ = Pack(rs, 500)
	if !strings.Contains(block, "[1] 2026-05-01 14:03 · session s 1 · tool: line one") {
		t.Errorf("block:\n%s", block)
	}
}

func BenchmarkPack(b *testing.B) {
	rs := packResults(200)
	for b.Loop() {
		Pack(rs, 4000)
	}
}
