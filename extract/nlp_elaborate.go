package extract

// A reply that goes on about a thing the speaker has just told of: "I just
// got a place on a sailing course!" ... "It's a week on a tall ship off
// the coast of Wales." The sentence says nothing of the speaker on its own
// ("it" is not a person), so it made no memory; it says more of the
// course, so it joins the memory that told of the course: "Ana just got a
// place on a sailing course; the sailing course is a week on a tall ship
// ...". No memory is added. The "it" is read only when one thing, in the
// nearest sentence that names any (this turn's sentences before it, the
// turn before, the speaker's turn before that), can be "it", and a memory
// of the speaker's in this turn or the speaker's turn before names that
// thing. A sentence that opens with a dummy "it" ("It's great that ...",
// "It's been a while") is no such sentence: the copula must be followed by
// a noun phrase or a phrase of place holding a thing, and no clause.

import (
	"regexp"
	"slices"
	"strings"

	"github.com/engram-dev/engram"
)

// itSentence is a sentence of a turn that opens with "it" and a copula and
// made no memory.
type itSentence struct {
	text   string   // the sentence
	before []string // the turn's sentences before it
	after  int      // the memories the turn made before it
}

var itCopula = regexp.MustCompile(`(?i)^(?:(?:oh|well|yeah|yes|and|so|but|basically|actually),?\s+)*it(?:'s|’s| is| was)\s+\S`)

// maxElaborateBack is how far back a memory may be that a sentence goes on
// about: the speaker's turn before, the other speaker's reply between.
const maxElaborateBack = 2

// elaborate joins each turn's "it" sentences to the memory they go on
// about. prev[i] is the turn before turn i in its session (-1: none).
func elaborate(turns []engram.Turn, found [][]engram.Memory, its [][]itSentence, prev []int, ctxs []speakers) {
	for i := range turns {
		for _, p := range its[i] {
			elaborateOne(turns, found, i, p, prev, ctxs)
		}
	}
}

func elaborateOne(turns []engram.Turn, found [][]engram.Memory, i int, p itSentence, prev []int, ctxs []speakers) {
	sp := ctxs[i]
	rest, ok := itRest(p.text, sp)
	if !ok {
		return
	}
	// The sentences to search, nearest first.
	var search []string
	for k := len(p.before) - 1; k >= 0; k-- {
		search = append(search, p.before[k])
	}
	own := -1 // the speaker's turn before, within reach
	for j, n := prev[i], 0; j >= 0 && n < maxElaborateBack; j, n = prev[j], n+1 {
		ss := splitSentences(normalizeChat(strings.ToValidUTF8(turns[j].Content, "\uFFFD")))
		for k := len(ss) - 1; k >= 0; k-- {
			search = append(search, ss[k].text)
		}
		if strings.EqualFold(ctxs[j].self, sp.self) {
			own = j
			break
		}
	}
	var thing referent
	found1 := false
	for _, b := range search {
		ls, ws := tagWords(b, sp.session)
		var heads []referent
		for _, r := range nounPhrases(ls, ws, len(ws), nil) {
			if r.plural || r.person || r.head == "" || personNoun(r.head) {
				continue
			}
			if !containsHead(heads, r.head) {
				heads = append(heads, r)
			}
		}
		if len(heads) == 0 {
			continue
		}
		if len(heads) > 1 {
			return // two things "it" may be
		}
		thing, found1 = heads[0], true
		break
	}
	if !found1 {
		return
	}
	// The memory that told of the thing: this turn's before the sentence,
	// else the speaker's turn before.
	pick := func(ms []engram.Memory) *engram.Memory {
		for k := len(ms) - 1; k >= 0; k-- {
			if containsWord(ms[k].Text, thing.head) {
				return &ms[k]
			}
		}
		return nil
	}
	m := pick(found[i][:p.after])
	if m == nil && own >= 0 {
		m = pick(found[own])
	}
	if m == nil {
		return
	}
	m.Text += "; the " + withoutDeterminer(thing.text) + " " + rest
	for _, e := range entities(rest) {
		if !slices.Contains(m.Entities, e) {
			m.Entities = append(m.Entities, e)
		}
	}
	m.ID = engram.MemoryID(m.Namespace, m.Type, m.Text, m.Sources[0])
	if !slices.Contains(m.Sources, turns[i].ID) {
		m.Sources = append(m.Sources, turns[i].ID)
	}
}

// itRest returns what an "it" sentence says of its thing, from the copula
// on, pronouns resolved: "is a week on a tall ship". It reports false for
// a dummy "it": a copula before an adjective, a clause or "all" ("it's all
// about timing" is of the whole situation).
func itRest(s string, sp speakers) (string, bool) {
	ls, ws := tagWords(s, sp.session)
	k := 0
	for k < len(ws) && ws[k].low != "it" {
		k++
	}
	k++
	if k >= len(ws) || !(beForms[ws[k].low] || ws[k].low == "'s" || ws[k].low == "’s") {
		return "", false
	}
	cop := ws[k].low
	if cop == "'s" || cop == "’s" {
		cop = "is"
	}
	a := k + 1
	if a >= len(ws) {
		return "", false
	}
	if f := ws[a]; f.low == "all" || !(f.tag == "DT" || f.tag == "CD" || f.tag == "NN" || f.tag == "NNS" || isAdjTag(f.tag) && a+1 < len(ws) && isNounTag(ws[a+1].tag) ||
		f.tag == "IN" && placePreps[f.low]) {
		return "", false
	}
	thing := false
	for j := a; j < len(ws); j++ {
		w := ws[j]
		switch {
		case w.tag == "PRP" || w.tag == "MD" || w.low == "that" || w.tag == "TO" || w.tag == "WDT" || w.tag == "WRB",
			isVerbTag(w.tag) && w.tag != "VBG" && w.tag != "VBN":
			return "", false // a clause of its own: "It's a shame that ...", "it's the one you ..."
		case isNounTag(w.tag) && !lightNoun(w.low) && !timeWords[w.low] && !abstractNouns[w.low]:
			thing = true
		}
	}
	if !thing {
		return "", false
	}
	end := len(ws)
	for end > a && (ws[end-1].tag == "." || ws[end-1].tag == ",") {
		end--
	}
	return cop + " " + resolveWords(ws, a, end, ls, sp, sp.self+" and others"), true
}

func containsHead(rs []referent, head string) bool {
	for _, r := range rs {
		if strings.EqualFold(r.head, head) {
			return true
		}
	}
	return false
}

// containsWord reports whether text holds w as a word, in any case.
func containsWord(text, w string) bool {
	for _, x := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '-') }) {
		if x == strings.ToLower(w) {
			return true
		}
	}
	return false
}

// withoutDeterminer drops the first word of a noun phrase when it is a
// determiner or a possessive: "your internship" -> "internship".
func withoutDeterminer(np string) string {
	first, rest, ok := strings.Cut(np, " ")
	if ok && determinerWords[strings.ToLower(first)] {
		return rest
	}
	return np
}

var determinerWords = wordSet("the a an that this my your our his her their")
