package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/textutil"
)

// The layers benchmark measures what the derived layers hold, against the
// LoCoMo authors' own summaries of each session (events_session_N: per
// speaker, what happened to them in session N). The conversations go in
// through POST /v1/turns exactly as for the LoCoMo retrieval bench, the
// layer jobs run once each, and the layers are read back through GET
// /v1/memories, /v1/persona, /v1/kg and /v1/stats.
//
// An event is covered when one active L1 memory that cites a turn of its
// session and names its speaker (the memory's subject is the speaker, or its
// text holds the speaker's name as a word) holds at least half of the
// event's content words: lower-cased runs of two or more letters, stopwords
// (textutil.EnglishStopwords) dropped, the speaker's own name left out, each
// reduced by a light suffix stemmer (lightStem). Nothing here knows which
// extractor made the memories.

// DefaultLayersSample is how many memories, facts and facets the layers
// bench prints for a human to judge their precision.
const DefaultLayersSample = 25

// LayersOptions are the settings of a layers run: `engram bench layers`'s
// flags.
type LayersOptions struct {
	Data     string // the folder of conversation files; "": LocomoDataRel in the working directory or above
	Keep     string // the folder of the private engram, kept afterwards; "": a temporary one
	Captions bool   // append a shared photo's caption to the turn
	Sample   int    // memories, facts and facets printed; 0: DefaultLayersSample, negative: none
}

// LayersReport is the result of a layers run, as `engram bench layers
// --json` prints it.
type LayersReport struct {
	Benchmark string       `json:"benchmark"`
	Data      string       `json:"data"`
	Files     []string     `json:"files"`
	Extractor string       `json:"extractor"` // the private engram's extractor setting
	Ingest    locomoIngest `json:"ingest"`
	LayersTotals
	Conversations []LayersConversation `json:"conversations"`
	// Events holds every event with the memory that came closest to it.
	Events      []LayersEvent  `json:"events"`
	Sample      []LayersMemory `json:"sample"`
	FactSample  []string       `json:"fact_sample"`
	FacetSample []string       `json:"facet_sample"`
}

// LayersTotals are the counts and ratios of a group of conversations.
type LayersTotals struct {
	Turns           int            `json:"turns"`
	Memories        int            `json:"memories"` // active L1 memories
	MemoriesPerTurn float64        `json:"memories_per_turn"`
	ByType          map[string]int `json:"by_type"`
	EventCount      int            `json:"event_count"`
	Covered         int            `json:"covered"`
	Coverage        float64        `json:"coverage"` // Covered / EventCount
	Facts           int            `json:"facts"`    // L4 triples, closed ones included
	Facets          int            `json:"facets"`   // L3 persona facets, current values
	Scenes          int            `json:"scenes"`
	// Covering counts the memories that cover at least one event (the
	// share of memories worth one: a precision of sorts).
	Covering      int     `json:"covering"`
	CoveringShare float64 `json:"covering_share"` // Covering / Memories
	FactsPer100   float64 `json:"facts_per_100_turns"`
	Speakers      int     `json:"speakers"`
	FacetsPer     float64 `json:"facets_per_speaker"`
}

// LayersConversation is one conversation file's totals.
type LayersConversation struct {
	File string `json:"file"`
	LayersTotals
}

// LayersEvent is one event and how close the memories came to it.
type LayersEvent struct {
	File    string   `json:"file"`
	Session int      `json:"session"`
	Speaker string   `json:"speaker"`
	Text    string   `json:"text"`
	Words   []string `json:"words"` // its content words, stemmed
	Covered bool     `json:"covered"`
	// Best is the memory of the session naming the speaker that holds the
	// most of Words (none when no memory qualifies), with the words it holds.
	Best      string   `json:"best,omitempty"`
	BestWords []string `json:"best_words,omitempty"`
	// By are the ids of every memory that covers the event.
	By []string `json:"by,omitempty"`
}

// LayersMemory is a memory of the sample, with the turns it cites.
type LayersMemory struct {
	File    string   `json:"file"`
	Turns   []string `json:"turns"` // dia ids
	Type    string   `json:"type"`
	Subject string   `json:"subject"`
	Text    string   `json:"text"`
	Source  string   `json:"source"` // the first cited turn, "speaker: text"
}

// layersTurn is what the bench knows of an ingested turn.
type layersTurn struct {
	id   diaID
	turn *engram.Turn
}

// RunLayers reads the conversations, ingests them into a private engram
// through its HTTP API, runs the layer jobs, reads the layers back and
// scores them against the conversations' events. Progress goes to
// env.Stderr.
func RunLayers(ctx context.Context, o LayersOptions, env Env) (*LayersReport, error) {
	env = env.locked()
	dir, convs, err := openLocomo(o.Data, o.Captions)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(convs, func(c *locomoConv) bool { return len(c.events) > 0 }) {
		return nil, fmt.Errorf("--data: no conversation in %s has events (events_session_N): the layers bench scores memories against them", dir)
	}
	rep := &LayersReport{Benchmark: "layers"}
	err = onEngram(ctx, "layers", o.Keep, env, func(b *benchEngram) error {
		rep.Extractor = b.srv.Engine.Config().Extractor
		return rep.run(ctx, env, b, convs, o.Sample)
	})
	if err != nil {
		return nil, err
	}
	rep.Data = absPath(dir)
	return rep, nil
}

func (rep *LayersReport) run(ctx context.Context, env Env, b *benchEngram, convs []*locomoConv, sample int) error {
	if err := ingestLocomo(ctx, b, convs, &rep.Ingest); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "engram bench layers: %s ingested; layer jobs took %.2f s (extractor %s)\n",
		plural(rep.Ingest.Turns, "turn"), rep.Ingest.LayerSeconds, rep.Extractor)
	st, err := b.client.Stats(ctx)
	if err != nil {
		return fmt.Errorf("GET /v1/stats: %w", err)
	}
	var all []LayersMemory
	var facts, facets []string
	for _, c := range convs {
		rep.Files = append(rep.Files, c.file)
		cr := LayersConversation{File: c.file}
		mems, err := b.allMemories(ctx, c.namespace)
		if err != nil {
			return err
		}
		turns := map[string]layersTurn{}
		for _, s := range c.sessions {
			for i := range s.turns {
				t := &s.turns[i]
				var m locomoMeta
				if err := json.Unmarshal(t.Meta, &m); err != nil {
					return err
				}
				id, err := parseDiaID(m.DiaID)
				if err != nil {
					return err
				}
				turns[t.ID] = layersTurn{id: id, turn: t}
			}
		}
		cr.Turns = len(turns)
		cr.Memories = len(mems)
		cr.ByType = map[string]int{}
		for _, m := range mems {
			cr.ByType[m.Type]++
			all = append(all, sampleMemory(c.file, m, turns))
		}
		covering := map[string]bool{}
		for _, ev := range c.events {
			e := scoreEvent(c.file, ev, mems, turns)
			cr.EventCount++
			if e.Covered {
				cr.Covered++
			}
			for _, id := range e.By {
				covering[id] = true
			}
			rep.Events = append(rep.Events, e)
		}
		cr.Covering, cr.Speakers = len(covering), len(c.speakers)
		cr.Facts = int(st.Layers[c.namespace]["facts"])
		cr.Scenes = int(st.Layers[c.namespace]["scenes"])
		if rep.Extractor != "none" {
			personas, err := b.client.Persona(ctx, c.namespace, "")
			if err != nil {
				return fmt.Errorf("%s: GET /v1/persona: %w", c.file, err)
			}
			for _, p := range personas {
				for _, f := range p.Facets {
					cr.Facets++
					facets = append(facets, fmt.Sprintf("%s: %s %s = %s", p.Speaker, f.Facet, f.Key, f.Value))
				}
			}
			for _, sp := range c.speakers {
				g, err := b.client.Graph(ctx, engram.GraphQuery{Namespace: c.namespace, Entity: sp, Timeline: true, Limit: 1000})
				if engram.ErrorCode(err) == engram.ENOTFOUND {
					continue
				}
				if err != nil {
					return fmt.Errorf("%s: GET /v1/kg?entity=%s: %w", c.file, sp, err)
				}
				for _, tr := range g.Triples {
					s := tr.Sentence()
					if !tr.ValidTo.IsZero() {
						s += " (until " + tr.ValidTo.Format("2006-01-02") + ")"
					}
					facts = append(facts, s)
				}
			}
		}
		cr.finish()
		rep.Conversations = append(rep.Conversations, cr)
		rep.add(cr.LayersTotals)
	}
	rep.finish()
	n := sample
	if n == 0 {
		n = DefaultLayersSample
	}
	rep.Sample = spread(all, n)
	rep.FactSample = spread(facts, n)
	rep.FacetSample = spread(facets, n)
	return nil
}

// allMemories reads every active memory of a namespace through GET
// /v1/memories, newest first, a page at a time: each page ends before the
// oldest memory of the last (ties at that moment are read again and
// dropped by id).
func (b *benchEngram) allMemories(ctx context.Context, ns string) ([]engram.Memory, error) {
	const page = 1000
	var out []engram.Memory
	seen := map[string]bool{}
	q := engram.MemoryQuery{Namespace: ns, Limit: page}
	for {
		mems, err := b.client.Memories(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("GET /v1/memories?namespace=%s: %w", ns, err)
		}
		added := 0
		for _, m := range mems {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
				added++
			}
		}
		if len(mems) < page || added == 0 {
			return out, nil
		}
		q.To = mems[len(mems)-1].TS.Add(1)
	}
}

func (t *LayersTotals) add(o LayersTotals) {
	t.Turns += o.Turns
	t.Memories += o.Memories
	t.EventCount += o.EventCount
	t.Covered += o.Covered
	t.Facts += o.Facts
	t.Facets += o.Facets
	t.Scenes += o.Scenes
	t.Covering += o.Covering
	t.Speakers += o.Speakers
	if t.ByType == nil {
		t.ByType = map[string]int{}
	}
	for k, v := range o.ByType {
		t.ByType[k] += v
	}
}

func (t *LayersTotals) finish() {
	if t.Turns > 0 {
		t.MemoriesPerTurn = float64(t.Memories) / float64(t.Turns)
	}
	if t.EventCount > 0 {
		t.Coverage = float64(t.Covered) / float64(t.EventCount)
	}
	if t.Memories > 0 {
		t.CoveringShare = float64(t.Covering) / float64(t.Memories)
	}
	if t.Turns > 0 {
		t.FactsPer100 = 100 * float64(t.Facts) / float64(t.Turns)
	}
	if t.Speakers > 0 {
		t.FacetsPer = float64(t.Facets) / float64(t.Speakers)
	}
}

// scoreEvent finds the memory of the event's session, naming its speaker,
// that holds the most of its content words.
func scoreEvent(file string, ev locomoEvent, mems []engram.Memory, turns map[string]layersTurn) LayersEvent {
	name := strings.ToLower(ev.speaker)
	words := contentWords(ev.text, name)
	e := LayersEvent{File: file, Session: ev.session, Speaker: ev.speaker, Text: ev.text, Words: words}
	best := -1
	need := (len(words) + 1) / 2
	for _, m := range mems {
		if !slices.ContainsFunc(m.Sources, func(id string) bool {
			t, ok := turns[id]
			return ok && t.id.session == ev.session
		}) || !namesSpeaker(m, ev.speaker) {
			continue
		}
		have := contentWords(m.Text, name)
		var held []string
		for _, w := range words {
			if slices.Contains(have, w) {
				held = append(held, w)
			}
		}
		if len(held) > best {
			best, e.Best, e.BestWords = len(held), m.Text, held
		}
		if len(words) > 0 && len(held) >= need {
			e.By = append(e.By, m.ID)
		}
	}
	e.Covered = len(words) > 0 && 2*best >= len(words)
	return e
}

// namesSpeaker reports whether a memory is about speaker: its subject, or
// its text holding the name as a word.
func namesSpeaker(m engram.Memory, speaker string) bool {
	if strings.EqualFold(strings.TrimSpace(m.Subject), speaker) {
		return true
	}
	name := strings.ToLower(speaker)
	return slices.Contains(letterWords(m.Text), name)
}

var benchStopwords = textutil.StopwordSet(textutil.EnglishStopwords)

// contentWords returns the distinct content words of s, stemmed: runs of two
// or more letters, lower-cased, neither a stopword nor name.
func contentWords(s, name string) []string {
	var out []string
	for _, w := range letterWords(s) {
		if len(w) < 2 || benchStopwords[w] || w == name {
			continue
		}
		if st := lightStem(w); !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out
}

// letterWords splits s into lower-cased runs of letters.
func letterWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

// lightStem strips one common English inflection (-ies, -ing, -ed, -es, -s)
// and then a final e, so that "loses", "lose" and "losing" meet, as do
// "dances", "dancing" and "dance", and "studies" and "study". It leaves
// irregular forms ("lost") alone: a light stemmer, deliberately.
func lightStem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:len(w)-3])
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = undouble(w[:len(w)-2])
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		w = w[:len(w)-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops the doubled consonant of "running" and "planned".
func undouble(w string) string {
	n := len(w)
	if n > 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouls", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func sampleMemory(file string, m engram.Memory, turns map[string]layersTurn) LayersMemory {
	lm := LayersMemory{File: file, Type: m.Type, Subject: m.Subject, Text: m.Text}
	var ids []layersTurn
	for _, s := range m.Sources {
		if t, ok := turns[s]; ok {
			ids = append(ids, t)
		}
	}
	slices.SortFunc(ids, func(a, b layersTurn) int {
		return cmp.Or(cmp.Compare(a.id.session, b.id.session), cmp.Compare(a.id.turn, b.id.turn))
	})
	for _, t := range ids {
		lm.Turns = append(lm.Turns, t.id.String())
	}
	if len(ids) > 0 {
		lm.Source = ids[0].turn.Speaker + ": " + ids[0].turn.Content
	}
	return lm
}

// spread returns n items of xs spread evenly over it, in order (all of them
// when there are fewer).
func spread[T any](xs []T, n int) []T {
	if n <= 0 {
		return nil
	}
	if len(xs) <= n {
		return xs
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

// Print writes the report as text; events lists every event with the
// memory that came closest.
func (rep *LayersReport) Print(w io.Writer, events bool) error {
	fmt.Fprintf(w, "Derived layers on LoCoMo: %s (%s), extractor %s\n", rep.Data, strings.Join(rep.Files, ", "), rep.Extractor)
	fmt.Fprintf(w, "ingest:    %s, %s; layer jobs %.2f s\n", plural(rep.Ingest.Turns, "turn"), plural(rep.Ingest.Conversations, "conversation"), rep.Ingest.LayerSeconds)
	fmt.Fprintf(w, "\n%-12s %6s %9s %9s %7s %8s %9s %7s %7s\n", "", "turns", "memories", "per turn", "events", "covered", "coverage", "facts", "facets")
	row := func(label string, t LayersTotals) {
		fmt.Fprintf(w, "%-12s %6d %9d %9.3f %7d %8d %8.1f%% %7d %7d\n", label, t.Turns, t.Memories, t.MemoriesPerTurn,
			t.EventCount, t.Covered, 100*t.Coverage, t.Facts, t.Facets)
	}
	for _, c := range rep.Conversations {
		row(c.File, c.LayersTotals)
	}
	row("all", rep.LayersTotals)
	fmt.Fprintf(w, "events:    %d of %d covered; memories by type:", rep.Covered, rep.EventCount)
	for _, k := range slices.Sorted(maps.Keys(rep.ByType)) {
		fmt.Fprintf(w, " %s %d", k, rep.ByType[k])
	}
	fmt.Fprintf(w, "; scenes %d\n", rep.Scenes)
	fmt.Fprintf(w, "memories that cover an event: %d of %d (%.1f%%); facts per 100 turns %.1f; facets per speaker %.1f\n",
		rep.Covering, rep.Memories, 100*rep.CoveringShare, rep.FactsPer100, rep.FacetsPer)
	if events {
		fmt.Fprintln(w, "\nEvents (+ covered, - not), with the closest memory of the session about the speaker:")
		for _, e := range rep.Events {
			mark := "-"
			if e.Covered {
				mark = "+"
			}
			fmt.Fprintf(w, "%s %s session %d %s: %s\n", mark, e.File, e.Session, e.Speaker, e.Text)
			if e.Best != "" {
				fmt.Fprintf(w, "      %d/%d %v: %s\n", len(e.BestWords), len(e.Words), e.BestWords, e.Best)
			}
		}
	}
	if len(rep.Sample) > 0 {
		fmt.Fprintf(w, "\nSample of %d memories (judge their precision against the turn they cite):\n", len(rep.Sample))
		for _, m := range rep.Sample {
			fmt.Fprintf(w, "  [%s %s] %s: %s\n", m.File, strings.Join(m.Turns, ","), m.Type, m.Text)
			if m.Source != "" {
				fmt.Fprintf(w, "      from %s\n", textutil.CutBytes(strings.Join(strings.Fields(m.Source), " "), 200))
			}
		}
	}
	if len(rep.FactSample) > 0 {
		fmt.Fprintf(w, "\nSample of %d knowledge-graph facts about the speakers:\n", len(rep.FactSample))
		for _, f := range rep.FactSample {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	if len(rep.FacetSample) > 0 {
		fmt.Fprintf(w, "\nSample of %d persona facets:\n", len(rep.FacetSample))
		for _, f := range rep.FacetSample {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	_, err := fmt.Fprint(w, `
covered: one memory citing a turn of the event's session and naming its speaker holds at least half of the
event's content words (stemmed, stopwords and the speaker's name left out).
`)
	return err
}
