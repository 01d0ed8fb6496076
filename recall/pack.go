package recall

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// MinPackTruncTokens is the least text, in estimated tokens, that Pack keeps
// of a result it has to cut: a shorter stub tells an agent too little to be
// worth its header and sources, so packing stops instead.
const MinPackTruncTokens = 16

// EstimateTokens returns a conservative estimate of the number of tokens an
// LLM tokenizer spends on s. No tokenizer ships with engram and models
// differ, so the estimate errs high. Checked against OpenAI's cl100k and
// o200k and Llama 3's tokenizers on English, code, JSON, European languages,
// Russian, Chinese, Japanese, Korean, Hindi, Thai, Arabic and Hebrew text, it
// lands at 1.0 to 1.7 times the largest of their counts (cl100k's, on CJK and
// Indic text) but for the cases under Caveats; Pack's blocks come out at 1.15
// to 1.3 times cl100k's count and 1.25 to 1.4 times o200k's and Llama 3's.
//
// The rule. s is cut into runs of one class of character, and each run costs:
//
//   - ASCII letters: one token per 4, rounded up, so at least one a word; a
//     run over 12 letters (a rare word, an identifier, encoded data) one per
//     3. A capital after a small letter starts a new run, as tokenizers
//     split camelCase.
//   - ASCII digits: one token each (many tokenizers split numbers into
//     single digits).
//   - ASCII punctuation, symbols and control characters: one token each.
//   - Spaces and tabs: a single one is free (tokenizers attach it to the next
//     word); a longer run costs one token per 4, rounded up.
//   - Newlines: one token each.
//   - Cyrillic letters: two tokens per 3, rounded up.
//   - General punctuation (U+2000 to U+206F: dashes, curly quotes, "…"):
//     one token each.
//   - Other characters of the Basic Multilingual Plane: Han, Hiragana,
//     Katakana, Hangul, accented Latin, Greek, Arabic, Devanagari, Thai...:
//     one token each, plus one per 4 in runs of 2 and more (n + (n+2)/4), as
//     tokenizers spend more than a token on rarer characters.
//   - Characters beyond it (emoji, rare Han): four tokens each, their UTF-8
//     length, the most a byte-level tokenizer spends.
//   - Bytes that are not valid UTF-8: one token each; but an incomplete
//     character at the very end of s is free, so cutting a string inside a
//     character never raises its estimate.
//
// The estimate is deterministic and monotonic: no prefix of s, even one cut
// inside a character, estimates more than s. Because a newline is a run of
// its own, lines joined by newlines estimate the sum of the lines plus one
// per newline.
//
// Caveats: text that tokenizes worse than it looks can estimate under: base64
// and other random strings by up to a third, a run of rare Han characters by
// a tenth (cl100k spends two or three tokens on each). Tokenizers that fall
// back to bytes for non-Latin scripts (Llama 2, Claude 2 on Korean and Thai)
// spend up to 1.6 times the estimate there.
func EstimateTokens(s string) int {
	n := 0
	cls, run := classNone, 0
	var prev byte
	for i := 0; i < len(s); {
		var k charClass
		size := 1
		c := s[i]
		if c < utf8.RuneSelf {
			k = asciiClass[c]
			if k == classLetter && cls == classLetter && 'a' <= prev && prev <= 'z' && 'A' <= c && c <= 'Z' {
				n += runCost(cls, run) // camelCase: a new run
				run = 0
			}
		} else {
			r, sz := utf8.DecodeRuneInString(s[i:])
			size = sz
			switch {
			case r == utf8.RuneError && sz == 1:
				if !utf8.FullRuneInString(s[i:]) {
					return n + runCost(cls, run) // a character cut at the end
				}
				k = classInvalid
			case sz == 4:
				k = classAstral
			case 0x400 <= r && r <= 0x52f:
				k = classCyrillic
			case 0x2000 <= r && r <= 0x206f:
				k = classSymbol
			default:
				k = classRune
			}
		}
		if k != cls {
			n += runCost(cls, run)
			cls, run = k, 0
		}
		run++
		prev = c
		i += size
	}
	return n + runCost(cls, run)
}

type charClass uint8

const (
	classNone charClass = iota
	classLetter
	classDigit
	classPunct
	classSpace
	classNewline
	classCyrillic
	classSymbol
	classRune
	classAstral
	classInvalid
)

// asciiClass classifies every ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]charClass) {
	for c := range t {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			t[c] = classLetter
		case '0' <= c && c <= '9':
			t[c] = classDigit
		case c == '\n':
			t[c] = classNewline
		case c == ' ', c == '\t', c == '\r', c == '\v', c == '\f':
			t[c] = classSpace
		default:
			t[c] = classPunct
		}
	}
	return t
}()

// runCost is the estimate for a run of n characters of class k. It never
// decreases as n grows, which keeps EstimateTokens monotonic.
func runCost(k charClass, n int) int {
	switch k {
	case classNone:
		return 0
	case classLetter:
		if n > 12 {
			return (n + 2) / 3
		}
		return (n + 3) / 4
	case classSpace:
		if n == 1 {
			return 0
		}
		return (n + 3) / 4
	case classCyrillic:
		return (2*n + 2) / 3
	case classRune:
		return n + (n+2)/4
	case classAstral:
		return 4 * n
	default: // digits, punctuation, newlines, general punctuation, invalid bytes
		return n
	}
}

// Pack renders results as a plain-text context block that an agent can put
// in front of its prompt, within budget tokens as counted by EstimateTokens.
// It returns the block, its estimate (used <= budget) and how many results it
// holds. The block has no trailing newline. For example:
//
//	Relevant memories (engram, 2 of 5 results, most relevant first, times UTC):
//	[1] 2026-05-01 14:03 · session s1 · Ana: We keep the API on port 30001. (source 01KB4Q8ZK3M9V2T7W5R1C60001)
//	[2] 2026-04-28 09:12 · session s0 · assistant: The deploy runs at night… (sources 01KB4Q…, 01KB4R…)
//
// Results stay in rank order, as recall returned them, each with its time:
// the budget drops the least relevant, and a reader sees at once which
// memories matter most, while the times still let it order events. A
// chronological block would hide the ranking and, cut by the budget, read
// as a history with holes. Each entry gives the result's time (UTC, to the
// minute), session, speaker (or role, when there is no speaker), its text
// with white space folded to single spaces, and the ids of all its sources.
//
// Results are taken whole while they fit. The first one that does not is cut
// at a character boundary and marked with "…" if at least
// MinPackTruncTokens of its text fit, keeping its sources; packing stops
// there either way, so the block always holds the top results. A budget too
// small for the header and one entry, a budget <= 0 or no results give ""
// and zeros.
func Pack(results []engram.Result, budget int) (block string, used int, included int) {
	if budget <= 0 || len(results) == 0 {
		return "", 0, 0
	}
	// The block is the header and one line per entry, joined by newlines,
	// so its estimate is the sum of the lines' plus one per newline.
	var lines []string
	body := 0 // estimate of the entry lines and the newline before each
	for i := range results {
		head := packHeader(i+1, len(results))
		left := budget - EstimateTokens(head) - body - 1
		if left <= 0 {
			break
		}
		e := newPackEntry(i+1, &results[i])
		line := e.line(e.text, false)
		if cost := EstimateTokens(line); cost <= left {
			lines = append(lines, line)
			body += cost + 1
			continue
		}
		if line, ok := e.truncated(left); ok {
			lines = append(lines, line)
		}
		break
	}
	if len(lines) == 0 {
		return "", 0, 0
	}
	block = packHeader(len(lines), len(results)) + "\n" + strings.Join(lines, "\n")
	return block, EstimateTokens(block), len(lines)
}

func packHeader(included, total int) string {
	return "Relevant memories (engram, " + strconv.Itoa(included) + " of " + strconv.Itoa(total) +
		" results, most relevant first, times UTC):"
}

// packEntry is one result made ready to print: everything but the text
// goes in prefix and suffix.
type packEntry struct {
	prefix, text, suffix string
}

func newPackEntry(n int, r *engram.Result) packEntry {
	var b strings.Builder
	b.WriteString("[" + strconv.Itoa(n) + "]")
	ts := r.TS
	if ts.IsZero() && len(r.Sources) > 0 {
		ts = r.Sources[0].TS
	}
	sep := " "
	if !ts.IsZero() {
		b.WriteString(sep + ts.UTC().Format("2006-01-02 15:04"))
		sep = " · "
	}
	if s := packFold(r.Session); s != "" {
		b.WriteString(sep + "session " + s)
		sep = " · "
	}
	who := packFold(r.Speaker)
	if who == "" {
		who = packFold(string(r.Role))
	}
	if who != "" {
		b.WriteString(sep + who)
	}
	b.WriteString(":")

	var ids []string
	for _, s := range r.Sources {
		if id := packFold(s.ID); id != "" {
			ids = append(ids, id)
		}
	}
	var tail []string
	if len(r.Times) > 0 {
		var ts []string
		for _, t := range r.Times {
			ts = append(ts, packFold(t.Expr)+" = "+packDays(t))
		}
		tail = append(tail, "["+strings.Join(ts, "; ")+"]")
	}
	switch len(ids) {
	case 0:
	case 1:
		tail = append(tail, "(source "+ids[0]+")")
	default:
		tail = append(tail, "(sources "+strings.Join(ids, ", ")+")")
	}
	return packEntry{prefix: b.String(), text: packFold(r.Text), suffix: strings.Join(tail, " ")}
}

// packDays writes the days of a resolved time: one day, or the first and
// the last day of a longer range (To is exclusive).
func packDays(t engram.TimeRange) string {
	const day = "2006-01-02"
	first, last := t.From.UTC().Format(day), t.To.UTC().Add(-time.Nanosecond).Format(day)
	if first == last {
		return first
	}
	return first + " to " + last
}

// line renders the entry with text t, marked as cut if cut is set.
func (e packEntry) line(t string, cut bool) string {
	parts := make([]string, 0, 3)
	parts = append(parts, e.prefix)
	if cut {
		t += "…"
	}
	if t != "" {
		parts = append(parts, t)
	}
	if e.suffix != "" {
		parts = append(parts, e.suffix)
	}
	return strings.Join(parts, " ")
}

// truncated returns the entry cut to fit in limit tokens, and false when
// less than MinPackTruncTokens of its text would fit.
func (e packEntry) truncated(limit int) (string, bool) {
	fits := func(t string) bool { return EstimateTokens(e.line(t, true)) <= limit }
	if !fits("") {
		return "", false
	}
	// The cut text is followed by "…", a run of its own, so the line costs
	// a constant plus the estimate of the cut text, which never falls as
	// the cut grows: a binary search over the byte offsets, each moved
	// back to a rune boundary, finds the longest cut that fits.
	runeStart := func(i int) int {
		for i > 0 && !utf8.RuneStart(e.text[i]) {
			i--
		}
		return i
	}
	lo, hi := 0, len(e.text)-1 // the empty cut fits; the whole text does not
	for lo < hi {
		mid := runeStart((lo + hi + 1) / 2)
		if mid > lo && fits(e.text[:mid]) {
			lo = mid
		} else {
			hi = (lo+hi+1)/2 - 1
		}
	}
	t := e.text[:lo]
	if EstimateTokens(t) < MinPackTruncTokens {
		return "", false
	}
	// A cut inside a Latin word backs up to the word's start when that is
	// close: "on port…" reads better than "on po…".
	if last, _ := utf8.DecodeLastRuneInString(t); packWordRune(last) {
		if next, _ := utf8.DecodeRuneInString(e.text[len(t):]); packWordRune(next) {
			if j := strings.LastIndexByte(t, ' '); j > 0 && len(t)-j <= 24 && EstimateTokens(t[:j]) >= MinPackTruncTokens {
				t = t[:j]
			}
		}
	}
	return e.line(t, true), true
}

func packWordRune(r rune) bool {
	return r < utf8.RuneSelf && (asciiClass[r] == classLetter || asciiClass[r] == classDigit)
}

// packFold folds runs of white space and control characters to single
// spaces, trims the ends and replaces invalid UTF-8, so an entry is one
// clean line.
func packFold(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}
