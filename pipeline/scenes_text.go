package pipeline

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram/internal/textutil"
	"github.com/kljensen/snowball/english"
)

// The text of a turn as scene segmentation reads it: sentences, content
// tokens (stemmed words, CJK bigrams), and the markers of a new topic.

// sceneTurn is what segmentation needs of a participant turn's content.
type sceneTurn struct {
	terms   []sceneStat // distinct, heaviest first
	phrases []sceneStat // likewise
	sents   []string    // candidate summary sentences, cleaned and clipped
	first   string      // the first sentence at all, cleaned and clipped
	marker  bool        // opens with a shift marker
}

// sceneStat is a term of one turn.
type sceneStat struct {
	key, disp string
	n, caps   int
	pos       int     // order of first occurrence
	w         float64 // weight within the turn
}

func analyseSceneTurn(content string) *sceneTurn {
	text := sceneCut(content)
	a := &sceneTurn{marker: sceneMarker(text)}
	idx := map[string]int{}
	pidx := map[string]int{}
	count := func(list []sceneStat, idx map[string]int, k sceneTok) []sceneStat {
		i, ok := idx[k.key]
		if !ok {
			i = len(list)
			idx[k.key] = i
			list = append(list, sceneStat{key: k.key, disp: k.disp, pos: i})
		}
		s := &list[i]
		s.disp = sceneDisplay(s.disp, s.caps > 0, k.disp, k.caps)
		s.n++
		if k.caps {
			s.caps++
		}
		return list
	}
	sents := sceneSplit(text)
	for i, s := range sents {
		if i == sceneMaxSentences {
			break
		}
		var prev sceneTok
		var keys []string // the first few distinct ones
		sceneScan(s, false, func(k sceneTok) {
			a.terms = count(a.terms, idx, k)
			if k.joined && prev.key != "" {
				a.phrases = count(a.phrases, pidx, sceneTok{key: prev.key + " " + k.key, disp: prev.disp + " " + k.disp, caps: prev.caps && k.caps})
			}
			prev = k
			if len(keys) < sceneSentenceTerms && !slices.Contains(keys, k.key) {
				keys = append(keys, k.key)
			}
		})
		candidate := len(keys) >= sceneSentenceTerms && len(a.sents) < sceneTurnSentences
		if a.first != "" && !candidate {
			continue
		}
		clean := sceneClean(s, 0)
		if clean == "" {
			continue
		}
		clean = sceneSentence(clean)
		if a.first == "" {
			a.first = clean
		}
		if candidate {
			a.sents = append(a.sents, clean)
		}
	}
	// Heaviest first; ties go to the earlier term.
	for i := range a.terms {
		s := &a.terms[i]
		s.w = 1 + math.Log(float64(s.n))
		if s.caps > 0 {
			s.w *= 1.5
		}
	}
	for i := range a.phrases {
		a.phrases[i].w = float64(a.phrases[i].n)
	}
	for _, list := range [][]sceneStat{a.terms, a.phrases} {
		slices.SortFunc(list, func(a, b sceneStat) int { return cmp.Or(cmp.Compare(b.w, a.w), cmp.Compare(a.pos, b.pos)) })
	}
	return a
}

// top returns the turn's limit heaviest terms, names left out.
func (a *sceneTurn) top(limit int, names map[string]bool) []sceneStat {
	return sceneTop(a.terms, limit, names)
}

func (a *sceneTurn) topPhrases(limit int, names map[string]bool) []sceneStat {
	return sceneTop(a.phrases, limit, names)
}

func sceneTop(list []sceneStat, limit int, names map[string]bool) []sceneStat {
	out := make([]sceneStat, 0, min(len(list), limit))
	for _, s := range list {
		if len(out) == limit {
			break
		}
		if names[s.key] {
			continue
		}
		if a, b, ok := strings.Cut(s.key, " "); ok && (names[a] || names[b]) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// sceneCut returns the first sceneMaxContent bytes of s, valid UTF-8, less
// a word the cut goes through.
func sceneCut(s string) string {
	if len(s) > sceneMaxContent {
		i := sceneMaxContent
		for i > sceneMaxContent-utf8.UTFMax && !utf8.RuneStart(s[i]) {
			i--
		}
		if r, _ := utf8.DecodeRuneInString(s[i:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			if j := strings.LastIndexFunc(s[:i], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }); j >= i-sceneMaxWordRunes*utf8.UTFMax {
				i = j
			}
		}
		s = s[:i]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// sceneClean collapses white space, drops control and replacement
// characters, and clips to maxBytes (0: no limit) at a rune boundary.
func sceneClean(s string, maxBytes int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	s = strings.Join(strings.Fields(s), " ")
	if maxBytes > 0 && len(s) > maxBytes {
		i := maxBytes
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// sceneSentence clips a cleaned sentence for the summary and ends it with a
// full stop.
func sceneSentence(s string) string {
	s = sceneClip(s, sceneSentenceRunes)
	last, _ := utf8.DecodeLastRuneInString(s)
	switch {
	case strings.ContainsRune(".!?。！？…", last):
	case sceneBigramRune(last) || isHiragana(last):
		s += "。"
	default:
		s += "."
	}
	return s
}

// sceneClip clips s to n runes, ending it with "…" when it cuts.
func sceneClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	return strings.TrimSpace(string(r)) + "…"
}

// sceneSplit splits text into sentences: after . ! ? followed by a space, a
// CJK character or the end, after 。！？ and at line breaks.
func sceneSplit(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		end := false
		switch r {
		case '\n', '。', '！', '？', '；':
			end = true
		case '.', '!', '?':
			if i == len(text) {
				end = true
			} else if n, _ := utf8.DecodeRuneInString(text[i:]); unicode.IsSpace(n) || sceneBigramRune(n) {
				end = true
			}
		}
		if end {
			if s := strings.TrimSpace(text[start:i]); s != "" {
				out = append(out, s)
			}
			start = i
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// sceneTok is a content token: a stemmed word or a CJK bigram.
type sceneTok struct {
	key, disp string
	caps      bool // a name: capitalised within the sentence, or an acronym
	joined    bool // follows the previous token with no stop word or mark between
}

// sceneBigramRune reports whether r belongs to a script written without
// spaces between words, which is indexed by character bigrams: Han,
// Katakana and Hangul (hiragana runs are particles and endings).
func sceneBigramRune(r rune) bool {
	switch textutil.ScriptOf(r) {
	case textutil.ScriptHan, textutil.ScriptKatakana, textutil.ScriptHangul:
		return true
	}
	return false
}

// isHiragana reports whether r is Japanese hiragana.
func isHiragana(r rune) bool { return textutil.ScriptOf(r) == textutil.ScriptHiragana }

func sceneIsCJK(key string) bool {
	r, _ := utf8.DecodeRuneInString(key)
	return sceneBigramRune(r)
}

// sceneScan calls fn for each content token of sentence s, in order. Stop
// words, short and overlong words, numbers, Japanese kana (particles and
// endings) and Chinese function characters are left out. With keepNames,
// every word counts (for matching names).
func sceneScan(s string, keepNames bool, fn func(sceneTok)) {
	first, joined := true, false
	var run []int
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case sceneBigramRune(r) && !sceneStopChars[r]:
			// A run of one script without function characters; frequent
			// words without topic split it too.
			run = run[:0]                        // byte offsets of the run's runes, and of its end
			j, script := i, textutil.ScriptOf(r) // a bigram across two scripts (サーバー移行) is no word
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !sceneBigramRune(r2) || sceneStopChars[r2] || textutil.ScriptOf(r2) != script {
					break
				}
				run = append(run, j)
				j += sz
			}
			run = append(run, j)
			for k := 0; k+2 < len(run); k++ {
				bg := s[run[k]:run[k+2]]
				if sceneStopBigrams[bg] {
					k++
					continue
				}
				if k+3 < len(run) && sceneStopBigrams[s[run[k+1]:run[k+3]]] {
					continue
				}
				fn(sceneTok{key: bg, disp: bg})
			}
			i, first, joined = j, false, false
		case (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isHiragana(r) && !sceneBigramRune(r):
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if (unicode.IsLetter(r2) || unicode.IsDigit(r2) || unicode.Is(unicode.Mn, r2)) && !sceneBigramRune(r2) && !isHiragana(r2) {
					j += sz
					continue
				}
				if r2 == '\'' || r2 == '’' {
					if n, _ := utf8.DecodeRuneInString(s[j+sz:]); unicode.IsLetter(n) && !sceneBigramRune(n) {
						j += sz
						continue
					}
				}
				break
			}
			tok, ok := sceneWord(s[i:j], first, keepNames)
			if ok {
				tok.joined = joined
				fn(tok)
			}
			i, first, joined = j, false, ok
		case unicode.IsSpace(r):
			i += size
		default:
			i, joined = i+size, false
		}
	}
}

// sceneWord turns a word into a token, or reports false for a stop word.
func sceneWord(w string, first, keepNames bool) (sceneTok, bool) {
	if strings.ContainsRune(w, '’') {
		w = strings.ReplaceAll(w, "’", "'")
	}
	lower := strings.ToLower(w)
	if !keepNames && sceneStopWords[lower] {
		return sceneTok{}, false
	}
	for _, suf := range []string{"'s", "'"} {
		if strings.HasSuffix(lower, suf) {
			lower, w = lower[:len(lower)-len(suf)], w[:len(w)-len(suf)]
			break
		}
	}
	n := utf8.RuneCountInString(lower)
	if n < 2 || n > sceneMaxWordRunes || !keepNames && sceneStopWords[lower] {
		return sceneTok{}, false
	}
	letters, upper := 0, 0
	for _, r := range w {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	if letters == 0 {
		return sceneTok{}, false // a number
	}
	r0, _ := utf8.DecodeRuneInString(w)
	tok := sceneTok{key: sceneStem(lower), disp: lower}
	if upper == letters && letters >= 2 || !first && unicode.IsUpper(r0) {
		tok.caps, tok.disp = true, w
	}
	return tok, true
}

// sceneStem is the Snowball English stem of w, so that "migrations",
// "migrating" and "migrated" meet "migration". Keys need not be words: the
// title shows the surface form. A word with an apostrophe or a letter
// outside ASCII is its own key.
func sceneStem(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf || w[i] == '\'' {
			return w
		}
	}
	return english.Stem(w, true)
}

func sceneFirstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// sceneMarker reports whether text opens with a phrase that announces a new
// topic.
func sceneMarker(text string) bool {
	t := strings.ToLower(strings.TrimLeftFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }))
	for _, filler := range []string{"oh", "ok", "okay", "so", "also", "hey", "and", "well"} {
		if rest, ok := strings.CutPrefix(t, filler); ok && !unicode.IsLetter(sceneFirstRune(rest)) {
			t = strings.TrimLeftFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) })
			break
		}
	}
	for _, m := range sceneMarkers {
		if strings.HasPrefix(t, m) {
			return true
		}
	}
	return false
}

var sceneMarkers = []string{
	"by the way", "btw", "anyway", "on another note", "on a different note", "changing the subject",
	"change of topic", "different topic", "new topic", "unrelated", "switching gears", "another thing",
	"另外", "对了", "換個話題", "换个话题", "顺便", "順便", "话说", "話說", "ところで", "話は変わ", "それはそうと",
}
