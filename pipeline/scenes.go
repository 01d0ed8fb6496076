package pipeline

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
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

// Regroup groups turns (of one session, in seq order) into scenes as the
// scene job would, for the turns left of a scene whose other turns were
// forgotten (engram.SceneRemaker). With open, the last scene is written
// with its draft, so that the scene job goes on with it.
func (c SceneConfig) Regroup(turns []engram.Turn, open bool) ([]engram.SceneWrite, error) {
	var drafts []*SceneDraft
	var d *SceneDraft
	for _, t := range turns {
		cur, started := c.AddTurn(d, t)
		if started {
			drafts = append(drafts, cur)
		}
		d = cur
	}
	writes := make([]engram.SceneWrite, 0, len(drafts))
	for i, d := range drafts {
		w := engram.SceneWrite{Scene: d.Scene}
		if open && i == len(drafts)-1 {
			raw, err := json.Marshal(d)
			if err != nil {
				return nil, err
			}
			w.Draft = raw
		}
		writes = append(writes, w)
	}
	return writes, nil
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
