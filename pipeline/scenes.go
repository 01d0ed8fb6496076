package pipeline

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/textutil"
)

// Defaults of SceneConfig.
const (
	// DefaultSceneGap ends a scene after half an hour of silence: long enough
	// for a slow reply or a coffee, short enough that a conversation picked up
	// after lunch is a new scene.
	DefaultSceneGap = 30 * time.Minute
	// DefaultSceneMaxTurns bounds a scene to what a reader takes in at once
	// and keeps a draft (and its list of turn ids) small.
	DefaultSceneMaxTurns = 40
	// DefaultSceneMinTurns is the size a scene must reach before a topic shift
	// may end it: two exchanges, enough vocabulary to compare against.
	DefaultSceneMinTurns = 4
	// DefaultSceneShiftThreshold: a turn shifts the topic when less than 15%
	// of its content-word weight was already heard in the scene. Lexical
	// overlap between turns on one topic is low, so the bar is low: about one
	// shared word in seven. Wrongly merged scenes cost less than scenes cut in
	// the middle of a topic, and Gap and MaxTurns bound them anyway.
	DefaultSceneShiftThreshold = 0.15
)

// Bounds on the work per turn and on the size of a SceneDraft.
const (
	sceneMaxContent    = 4 << 10 // bytes of a turn's content looked at
	sceneMaxSentences  = 64      // sentences of a turn looked at
	sceneMaxWordRunes  = 24      // longer "words" are hashes, URLs or base64
	sceneMaxTerms      = 64      // SceneDraft.Terms
	sceneMaxPhrases    = 16      // SceneDraft.Phrases
	sceneTurnPhrases   = 16      // phrases a turn adds at most
	sceneWindowTurns   = 4       // SceneDraft.Window
	sceneTurnTerms     = 24      // a turn's heaviest terms, which count
	sceneWindowTerms   = 16      // terms kept per window turn
	scenePoolSize      = 4       // SceneDraft.Sentences
	sceneTurnSentences = 8       // candidate sentences a turn offers at most
	sceneSentenceRunes = 140     // a summary sentence, clipped
	sceneSentenceTerms = 3       // distinct terms a summary sentence needs
	sceneMinShiftTerms = 4       // distinct terms a turn needs to shift the topic
	sceneMaxPeople     = 16      // Scene.Participants
	sceneMaxNameBytes  = 64      // one participant's name, clipped
	sceneTitleRunes    = 80
	sceneTitleTerms    = 3
	sceneSummaryRunes  = 400
	sceneSummaryExtra  = 3 // sentences after the lead
	sceneSummaryPeople = 3 // names before "+N"
	sceneCJKSpan       = 6 // runes of a merged CJK title term
)

// SceneConfig tunes scene segmentation. The zero value, and any zero or
// negative field, means the DefaultScene* value.
type SceneConfig struct {
	// Gap is the longest silence within a scene: a turn more than Gap after
	// the scene's last turn starts a new one.
	Gap time.Duration
	// MaxTurns is the most turns a scene holds, tool and system turns included.
	MaxTurns int
	// MinTurns is the number of participant turns a scene needs before a
	// topic shift may end it.
	MinTurns int
	// ShiftThreshold is the share of a turn's content-word weight that must
	// already occur in the scene (its recent window or its salient terms) for
	// the turn to stay in it. Turns that open with a shift marker ("by the
	// way", "对了") face twice the threshold.
	ShiftThreshold float64
}

func (c SceneConfig) withDefaults() SceneConfig {
	if c.Gap <= 0 {
		c.Gap = DefaultSceneGap
	}
	if c.MaxTurns <= 0 {
		c.MaxTurns = DefaultSceneMaxTurns
	}
	if c.MinTurns <= 0 {
		c.MinTurns = DefaultSceneMinTurns
	}
	if c.ShiftThreshold <= 0 || math.IsNaN(c.ShiftThreshold) {
		c.ShiftThreshold = DefaultSceneShiftThreshold
	}
	return c
}

// SceneDraft is the open, last scene of a session as it is kept between
// batches. It marshals to JSON and back without loss, so continuing from a
// stored draft gives the same scenes as never stopping. Apart from
// Scene.Turns (at most MaxTurns ids) its size is bounded whatever the scene's
// length and its turns: under 7 KB of JSON, about 3 KB for a typical chat.
type SceneDraft struct {
	// Scene is the scene so far, title and summary included.
	Scene engram.Scene `json:"scene"`
	// Talk counts the scene's participant turns (not tool or system ones).
	Talk int `json:"talk"`
	// Window holds the terms of the last few participant turns with any,
	// oldest first, each sorted.
	Window [][]string `json:"window,omitempty"`
	// Terms are the scene's most salient terms, sorted by key.
	Terms []SceneTerm `json:"terms,omitempty"`
	// Phrases are the scene's most frequent two-word phrases, sorted by key.
	Phrases []SceneTerm `json:"phrases,omitempty"`
	// Lead is the summary's first sentence: the scene's first sentence with
	// some content, or, until there is one, its first sentence at all
	// (LeadWeak).
	Lead     string `json:"lead,omitempty"`
	LeadWeak bool   `json:"lead_weak,omitempty"`
	// Sentences are the best candidates for the rest of the summary.
	Sentences []SceneSentence `json:"sentences,omitempty"`
}

// SceneTerm is a term of a scene: a content word (Key is its lower-case stem),
// a CJK character bigram, or, in SceneDraft.Phrases, two adjacent content
// words.
type SceneTerm struct {
	Key string `json:"k"`
	// Display is the form to show, when it is not Key: the best surface form
	// seen, capitalised for a name, else a base form ("migration" over
	// "migrating" or "migrations").
	Display string `json:"d,omitempty"`
	// Count is how often the term occurs; Caps how often capitalised within a
	// sentence, as names and products are.
	Count int `json:"n"`
	Caps  int `json:"c,omitempty"`
	// Last is SceneDraft.Talk when the term last occurred.
	Last int `json:"l"`
}

// SceneSentence is a candidate sentence for a scene's summary.
type SceneSentence struct {
	Text string `json:"text"`
	Turn int    `json:"turn"` // SceneDraft.Talk of the turn it is from
}

// AddTurn adds t to the open scene d of t's session (nil: none yet) and
// returns the draft that now holds t. That is d itself, updated, unless t
// starts a new scene: then it is a new draft, started is true, d is left as it
// was and the caller stores it as closed (unless it holds no turns). A new
// scene starts when t is more than Gap after the scene's end, when the scene
// holds MaxTurns turns, when t is of another namespace or session than d, or
// when t, a participant turn with enough content words (4; "ok, thanks!" has
// none), shifts the topic of a scene of at least MinTurns participant turns.
// Tool and system turns belong to the scene but never shift its topic and are
// no participants.
//
// The outcome depends only on the turns and their order, never on the clock
// or on batching. A turn whose ID d already holds is a redelivery: d comes
// back unchanged. Only the first 4 KB of a turn's content are looked at;
// invalid UTF-8 and zero or out-of-range timestamps are tolerated.
func (c SceneConfig) AddTurn(d *SceneDraft, t engram.Turn) (cur *SceneDraft, started bool) {
	c = c.withDefaults()
	if d != nil && t.ID != "" && slices.Contains(d.Scene.Turns, t.ID) {
		return d, false
	}
	ts := t.TS
	if ts.Year() < 1 || ts.Year() > 9999 { // JSON cannot hold it
		ts = time.Time{}
	}
	ts = ts.UTC()
	var a *sceneTurn
	if sceneTalk(t.Role) {
		a = analyseSceneTurn(t.Content)
	}
	if d == nil || len(d.Scene.Turns) == 0 || d.Scene.Namespace != t.Namespace || d.Scene.Session != t.Session ||
		c.breaks(d, ts, a, t.Speaker) {
		d = &SceneDraft{Scene: engram.Scene{
			ID:           sceneID(t.Namespace, t.Session, t.ID),
			Namespace:    t.Namespace,
			Session:      t.Session,
			Participants: []string{},
		}}
		started = true
	}
	d.add(t, ts, a)
	return d, started
}

// sceneID is the id of the scene that starts with turn first.
func sceneID(namespace, session, first string) string {
	sum := sha256.Sum256([]byte(namespace + "|" + session + "|" + first))
	return "scn-" + hex.EncodeToString(sum[:10])
}

func sceneTalk(r engram.Role) bool { return r != engram.RoleTool && r != engram.RoleSystem }

// breaks reports whether a turn at ts, with content a (nil for tool and
// system turns), ends scene d.
func (c SceneConfig) breaks(d *SceneDraft, ts time.Time, a *sceneTurn, speaker string) bool {
	if len(d.Scene.Turns) >= c.MaxTurns {
		return true
	}
	if !ts.IsZero() && !d.Scene.End.IsZero() && ts.Sub(d.Scene.End) > c.Gap {
		return true
	}
	if a == nil || d.Talk < c.MinTurns {
		return false
	}
	top := a.top(sceneTurnTerms, d.names(speaker))
	if len(top) < sceneMinShiftTerms {
		return false
	}
	threshold := c.ShiftThreshold
	if a.marker {
		threshold = min(1, 2*threshold)
	}
	return d.overlap(top) < threshold
}

// overlap is the share of the weight of terms (a turn's, distinct) that
// occurs in the scene's window or among its terms.
func (d *SceneDraft) overlap(terms []sceneStat) float64 {
	var all, seen float64
	for _, s := range terms {
		w := 1 + math.Log(float64(s.n))
		all += w
		if d.heard(s.key) {
			seen += w
		}
	}
	if all == 0 {
		return 1
	}
	return seen / all
}

func (d *SceneDraft) heard(key string) bool {
	if _, ok := sceneFind(d.Terms, key); ok {
		return true
	}
	for _, w := range d.Window {
		if _, ok := slices.BinarySearch(w, key); ok {
			return true
		}
	}
	return false
}

// names are the term keys of the participants' names (and of speaker's), to
// keep them out of topics and titles: they occur on every topic. Roles that
// stand in for a name ("user") are no names.
func (d *SceneDraft) names(speaker string) map[string]bool {
	m := make(map[string]bool)
	add := func(name string) {
		if !engram.Role(name).Valid() {
			sceneScan(name, true, func(k sceneTok) { m[k.key] = true })
		}
	}
	for _, p := range d.Scene.Participants {
		add(p)
	}
	add(speaker)
	return m
}

// add puts the turn into d.
func (d *SceneDraft) add(t engram.Turn, ts time.Time, a *sceneTurn) {
	s := &d.Scene
	s.Turns = append(s.Turns, t.ID)
	if !ts.IsZero() {
		if s.Start.IsZero() || ts.Before(s.Start) {
			s.Start = ts
		}
		if s.End.IsZero() || ts.After(s.End) {
			s.End = ts
		}
	}
	if a == nil {
		return
	}
	d.Talk++
	name := t.Speaker
	if strings.TrimSpace(name) == "" {
		name = string(t.Role)
	}
	name = sceneClean(name, sceneMaxNameBytes)
	if name != "" && len(s.Participants) < sceneMaxPeople && !slices.Contains(s.Participants, name) {
		s.Participants = append(s.Participants, name)
	}
	names := d.names(t.Speaker)

	top := a.top(sceneTurnTerms, names)
	if len(top) > 0 {
		keys := make([]string, min(len(top), sceneWindowTerms))
		for i := range keys {
			keys[i] = top[i].key
		}
		slices.Sort(keys)
		d.Window = append(d.Window, keys)
		if len(d.Window) > sceneWindowTurns {
			d.Window = slices.Delete(d.Window, 0, len(d.Window)-sceneWindowTurns)
		}
	}
	d.Terms = sceneMerge(d.Terms, top, d.Talk, sceneMaxTerms)
	d.Phrases = sceneMerge(d.Phrases, a.topPhrases(sceneTurnPhrases, names), d.Talk, sceneMaxPhrases)

	// Summary candidates.
	if d.Lead == "" && a.first != "" {
		d.Lead, d.LeadWeak = a.first, true
	}
	pool := d.Sentences
	for _, text := range a.sents {
		switch {
		case d.Lead == "" || d.LeadWeak:
			d.Lead, d.LeadWeak = text, false
		case text != d.Lead && !slices.ContainsFunc(pool, func(p SceneSentence) bool { return p.Text == text }):
			pool = append(pool, SceneSentence{Text: text, Turn: d.Talk})
		}
	}
	ranked := d.scored(pool, names)
	ranked = ranked[:min(len(ranked), scenePoolSize)]
	d.Sentences = make([]SceneSentence, len(ranked))
	for i, r := range ranked {
		d.Sentences[i] = r.SceneSentence
	}
	slices.SortStableFunc(d.Sentences, func(a, b SceneSentence) int { return cmp.Compare(a.Turn, b.Turn) })

	s.Title = d.title(names)
	s.Summary = d.summary(ranked)
}

// sceneMerge adds a turn's terms to list (sorted by key), then keeps the
// limit most salient ones: the most frequent, then the most recent.
func sceneMerge(list []SceneTerm, add []sceneStat, talk, limit int) []SceneTerm {
	for _, a := range add {
		disp := a.disp
		if disp == a.key {
			disp = ""
		}
		i, ok := sceneFind(list, a.key)
		if !ok {
			list = slices.Insert(list, i, SceneTerm{Key: a.key, Display: disp, Count: a.n, Caps: a.caps, Last: talk})
			continue
		}
		e := &list[i]
		if d := sceneDisplay(cmp.Or(e.Display, e.Key), e.Caps > 0, a.disp, a.caps > 0); d != e.Key {
			e.Display = d
		} else {
			e.Display = ""
		}
		e.Count += a.n
		e.Caps += a.caps
		e.Last = talk
	}
	if len(list) > limit {
		slices.SortFunc(list, func(a, b SceneTerm) int {
			return cmp.Or(cmp.Compare(b.Count+b.Caps, a.Count+a.Caps), cmp.Compare(b.Last, a.Last), strings.Compare(a.Key, b.Key))
		})
		list = list[:limit]
		slices.SortFunc(list, func(a, b SceneTerm) int { return strings.Compare(a.Key, b.Key) })
	}
	return list
}

// sceneDisplay chooses between two surface forms of a term: a capitalised
// one (a name) first, then a base form over a plural over a verb form
// ("-ed", "-ing"), then the longer one ("migration" over "migrate"), then the
// older one.
func sceneDisplay(old string, oldCaps bool, s string, caps bool) string {
	if oldCaps || caps {
		if caps && !oldCaps {
			return s
		}
		return old
	}
	if r, ro := sceneFormRank(s), sceneFormRank(old); r != ro {
		if r > ro {
			return s
		}
		return old
	}
	if len(s) > len(old) {
		return s
	}
	return old
}

func sceneFormRank(w string) int {
	switch {
	case strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing"):
		return 0
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return 1
	}
	return 2
}

func sceneFind(list []SceneTerm, key string) (int, bool) {
	return slices.BinarySearchFunc(list, key, func(e SceneTerm, k string) int { return strings.Compare(e.Key, k) })
}

// weight is the salience of a term in the scene: capitalised occurrences
// count double, participants' names not at all.
func (d *SceneDraft) weight(key string, names map[string]bool) int {
	if names[key] {
		return 0
	}
	if i, ok := sceneFind(d.Terms, key); ok {
		return d.Terms[i].Count + d.Terms[i].Caps
	}
	return 0
}

// score rates a candidate sentence by the salience of its terms, normalised
// so that long sentences do not win by length alone.
func (d *SceneDraft) score(text string, names map[string]bool) float64 {
	var keys []string
	sceneScan(text, false, func(k sceneTok) {
		if !slices.Contains(keys, k.key) {
			keys = append(keys, k.key)
		}
	})
	if len(keys) == 0 {
		return 0
	}
	sum := 0
	for _, k := range keys {
		sum += d.weight(k, names)
	}
	return float64(sum) / math.Sqrt(float64(len(keys)))
}

type sceneScored struct {
	SceneSentence
	score float64
}

func (d *SceneDraft) scored(pool []SceneSentence, names map[string]bool) []sceneScored {
	out := make([]sceneScored, len(pool))
	for i, p := range pool {
		out[i] = sceneScored{p, d.score(p.Text, names)}
	}
	slices.SortFunc(out, func(a, b sceneScored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.Turn, b.Turn), strings.Compare(a.Text, b.Text))
	})
	return out
}

// summary is "Alice, Bob: <lead> <best sentences>", at most
// sceneSummaryRunes runes; ranked are the candidates, best first.
func (d *SceneDraft) summary(ranked []sceneScored) string {
	var b strings.Builder
	people := d.Scene.Participants
	if len(people) > 0 {
		b.WriteString(strings.Join(people[:min(len(people), sceneSummaryPeople)], ", "))
		if n := len(people) - sceneSummaryPeople; n > 0 {
			b.WriteString(" +" + strconv.Itoa(n))
		}
		b.WriteString(":")
	}
	used := utf8.RuneCountInString(b.String())
	var parts []SceneSentence
	if d.Lead != "" {
		parts = append(parts, SceneSentence{Text: d.Lead, Turn: -1})
		used += 1 + utf8.RuneCountInString(d.Lead)
	}
	n := 0
	for _, s := range ranked {
		if n == sceneSummaryExtra || s.score == 0 {
			break
		}
		if l := 1 + utf8.RuneCountInString(s.Text); used+l <= sceneSummaryRunes {
			parts = append(parts, s.SceneSentence)
			used += l
			n++
		}
	}
	slices.SortStableFunc(parts, func(a, b SceneSentence) int { return cmp.Compare(a.Turn, b.Turn) })
	for _, p := range parts {
		if last, _ := utf8.DecodeLastRuneInString(b.String()); b.Len() > 0 && !strings.ContainsRune("。！？", last) {
			b.WriteByte(' ') // full-width stops need no space after them
		}
		b.WriteString(p.Text)
	}
	return sceneClip(b.String(), sceneSummaryRunes)
}

type sceneCand struct {
	key, disp string
	score     int
	parts     []string // term keys it covers
}

// title joins the scene's most salient terms: names, frequent words and
// phrases, merged CJK bigrams. Ties go to the lexicographically first key.
func (d *SceneDraft) title(names map[string]bool) string {
	var cands []sceneCand
	for _, t := range d.Terms {
		if names[t.Key] {
			continue
		}
		cands = append(cands, sceneCand{key: t.Key, disp: cmp.Or(t.Display, t.Key), score: t.Count + t.Caps, parts: []string{t.Key}})
	}
	for _, p := range d.Phrases {
		parts := strings.Split(p.Key, " ")
		if p.Count < 2 || slices.ContainsFunc(parts, func(k string) bool { return names[k] }) {
			continue
		}
		cands = append(cands, sceneCand{key: p.Key, disp: cmp.Or(p.Display, p.Key), score: 2*p.Count + p.Caps, parts: parts})
	}
	slices.SortFunc(cands, func(a, b sceneCand) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.key, b.key))
	})
	used := map[string]bool{}
	var picked []string
	length := 0
	for _, c := range cands {
		if len(picked) == sceneTitleTerms || len(picked) > 0 && c.score < 2 {
			break // terms said once only make a title when there is nothing else
		}
		if slices.ContainsFunc(c.parts, func(k string) bool { return used[k] }) {
			continue
		}
		if sceneIsCJK(c.key) {
			c = d.extendCJK(c, used)
		}
		l := utf8.RuneCountInString(c.disp)
		if len(picked) > 0 {
			l += 2
		}
		if length+l > sceneTitleRunes {
			continue
		}
		for _, k := range c.parts {
			used[k] = true
		}
		picked = append(picked, c.disp)
		length += l
	}
	if len(picked) == 0 {
		return sceneClip(strings.TrimRight(d.Lead, ".!?。！？…"), sceneTitleRunes)
	}
	return strings.Join(picked, ", ")
}

// extendCJK grows a CJK bigram into the longer word it is part of: 数据 with
// 据库 becomes 数据库, as long as the neighbour bigram is more than half as
// frequent.
func (d *SceneDraft) extendCJK(c sceneCand, used map[string]bool) sceneCand {
	runes := []rune(c.key)
	seed := c.score
	next := func(right bool) bool {
		best := -1
		for i, t := range d.Terms {
			if used[t.Key] || slices.Contains(c.parts, t.Key) || t.Count+t.Caps < 2 || 2*(t.Count+t.Caps) <= seed || !sceneIsCJK(t.Key) {
				continue
			}
			r := []rune(t.Key)
			if len(r) != 2 || (right && r[0] != runes[len(runes)-1]) || (!right && r[1] != runes[0]) {
				continue
			}
			if best < 0 || t.Count+t.Caps > d.Terms[best].Count+d.Terms[best].Caps {
				best = i // d.Terms is sorted, so ties keep the first key
			}
		}
		if best < 0 {
			return false
		}
		r := []rune(d.Terms[best].Key)
		if right {
			runes = append(runes, r[1])
		} else {
			runes = append([]rune{r[0]}, runes...)
		}
		c.parts = append(c.parts, d.Terms[best].Key)
		return true
	}
	for len(runes) < sceneCJKSpan && next(true) {
	}
	for len(runes) < sceneCJKSpan && next(false) {
	}
	c.disp = string(runes)
	return c
}

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

// sceneStem is a light English stemmer, enough to match "migrations",
// "migrating" and "migrated" with "migration". Keys need not be words: the
// title shows the surface form.
func sceneStem(w string) string {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf || w[i] == '\'' {
			return w
		}
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	undouble := false
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w, undouble = w[:len(w)-3], true
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w, undouble = w[:len(w)-2], true
	case len(w) > 6 && strings.HasSuffix(w, "ation"):
		w = w[:len(w)-3]
	}
	if n := len(w); undouble && n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("lsz", rune(w[n-1])) && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		w = w[:n-1]
	}
	if len(w) > 4 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
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

// sceneStopChars are Chinese function characters; they split runs of Han
// characters before bigrams are taken, so 我们的数据库 yields 数据, 据库.
var sceneStopChars = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "的了吗呢吧啊呀嗯哦哈嘛啦是在我你他她它们這这那就也和与與很还還又把被给給让讓个個么麼着著啥到从從去来來过過想说說看有没沒不一要怎哪" {
		m[r] = true
	}
	return m
}()

// sceneStopBigrams are frequent Chinese words without topic.
var sceneStopBigrams = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`谢谢 謝謝 好的 可以 没有 沒有 什么 什麼 怎么 怎麼 因为 因為 所以 但是 如果 已经 已經
		还是 就是 可能 应该 應該 需要 觉得 覺得 知道 现在 現在 时候 時候 一下 一个 一些 不错 不錯 不过 不過 然后 然後
		其实 其實 真的 有点 有點 一起 这样 這樣 那样 那樣 大家 自己 问题 問題 事情 东西 東西 感觉 感覺 非常 比较 比較`) {
		m[w] = true
	}
	return m
}()

// sceneStopWords are English function words and the small talk that occurs on
// every topic: the core list, then contractions, fillers, vague verbs and
// nouns, and words of time.
var sceneStopWords = textutil.StopwordSet(textutil.EnglishStopwords,
	`ago almost already also although always another anybody anyone anything anyway anyways aren't around ask asked
		away back best better big can't cannot couldn't didn't doesn't don't done either else enough even ever every
		everyone everything first get gets getting give go goes going gone good got great hadn't hasn't haven't he'd
		he'll he's here's how's however i'd i'll i'm i've isn't it's keep kind know known last later least less let
		let's like likely little lot lots made make makes making many may maybe mean might mine much must need needed
		needs never new next nice nope nothing often oh ok okay old one others otherwise perhaps please pretty
		probably put quite rather really right said say says see seem seems seen she'd she'll she's shouldn't since
		somebody someone something sometimes soon sorry still sure take tell thank thanks thx that's there's they'd
		they'll they're they've thing things think though thought today tomorrow took toward try trying two upon us
		use used using via want wanted wants wasn't way we'd we'll we're we've well went weren't what's whatever who's
		within without won't wouldn't yeah yes yep yet you'd you'll you're you've hi hello hey bye lol haha hmm hm ah
		uh um cool awesome fine alright agree agreed true false exactly definitely actually basically literally
		totally absolutely indeed sounds sound look looks looking feel feels felt bit stuff yesterday tonight morning
		day days week weeks month months year years time times minute minutes hour hours three four five six seven
		eight nine ten second also etc ie eg vs got gonna wanna gotta`)
