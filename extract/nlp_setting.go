package extract

// A sentence that names an event only to say how it was ("The trip last
// weekend was wild!") is followed by what happened on it ("My brother lost
// his passport"): the event is the setting of the first event the next
// sentence tells, and the memory says so ("... during the trip last
// weekend"), so that what happened keeps where. The sentence of setting
// makes no memory of its own (it says nothing of the speaker), so the
// memories per turn stay as they were; only a short one is read, and only
// when it holds nothing but a determined event noun, a time and a copula
// with adjectives.

import (
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// maxSettingWords bounds the sentence of setting: a longer one says more
// than how the event was.
const maxSettingWords = 12

// settingDeterminers open the noun phrase of an event already known to
// both speakers, or the speaker's own.
var settingDeterminers = wordSet("the that this my our")

// eventSetting reads s as the naming of an event and how it was, and
// returns the event as a phrase ("the road trip on the weekend of 6 May
// 2023") and its time, if s says one.
func eventSetting(s string, ts time.Time, sp speakers) (string, time.Time, bool) {
	if s == "" || len(strings.Fields(s)) > maxSettingWords || !mayBeSetting(s) {
		return "", time.Time{}, false
	}
	ls, ws := tagWords(s, sp.session)
	n := len(ws)
	i := 0
	for i < n {
		w := ws[i]
		if w.tag == "UH" || w.tag == "," || discourseWords[w.low] && w.text != "I" ||
			w.tag == "NNP" && i+1 < n && ws[i+1].tag == "," { // a vocative: "Hey Jo, ..."
			i++
			continue
		}
		break
	}
	if i >= n || !settingDeterminers[ws[i].low] {
		return "", time.Time{}, false
	}
	det := i
	be := det + 1
	for be < n && !beForms[ws[be].low] && ws[be].low != "'s" {
		be++
	}
	if be >= n {
		return "", time.Time{}, false
	}
	// The event's noun, then a time it may carry: "the party last night".
	i = be
	for p := det + 2; p < be; p++ {
		if fronted(ws, p, be) {
			i = p
			break
		}
	}
	head := i - 1
	if head <= det {
		return "", time.Time{}, false
	}
	for k := det + 1; k < head; k++ {
		if !(isAdjTag(ws[k].tag) || ws[k].tag == "NN" || ws[k].tag == "NNS") {
			return "", time.Time{}, false
		}
	}
	// The word before the copula or the time is the head noun, whatever
	// the tagger made of it ("that roadtrip/VBZ was").
	if h := ws[head]; !isNounTag(h.tag) && !(isVerbTag(h.tag) && isWordText(h.low) && !haveForms[h.low] && !doForms[h.low]) || h.tag == "NNP" {
		return "", time.Time{}, false
	}
	if h := ws[head].low; lightNoun(h) || timeWords[h] || abstractNouns[h] || personNoun(h) || collectiveNouns[h] {
		return "", time.Time{}, false // "that day was long", "my brother was sick": no event
	}
	adj := false
	for k := be + 1; k < n; k++ {
		switch w := ws[k]; {
		case isAdjTag(w.tag):
			adj = adj || !strings.HasPrefix(w.low, "over") // "was over": it ended
		case w.tag == "RB" || w.tag == "CC" || w.tag == "," || intensifiers[w.low]:
		default:
			return "", time.Time{}, false
		}
	}
	if !adj {
		return "", time.Time{}, false
	}
	noun := ls[ws[det+1].start:ws[head].end]
	var phrase string
	switch ws[det].low {
	case "my", "our":
		phrase = resolveWords(ws, det, det+1, ls, sp, sp.self+" and others") + " " + noun
	default:
		phrase = "the " + noun
	}
	if be > i {
		phrase += " " + ls[ws[i].start:ws[be-1].end]
	}
	phrase, at := resolveTimes(phrase, ts, false)
	return phrase, at, true
}

// setDuring sets the first event of fs in the event the sentence before
// names, if it names one: an event that happened, as the setting did.
func setDuring(fs []nlpFinding, before string, ts time.Time, sp speakers) {
	k := -1
	for i, f := range fs {
		if f.typ == engram.MemoryEvent && f.past {
			k = i
			break
		}
	}
	if k < 0 {
		return
	}
	phrase, at, ok := eventSetting(before, ts, sp)
	if !ok {
		return
	}
	fs[k].text += " during " + phrase
	if fs[k].at.IsZero() {
		fs[k].at = at
	}
}

// personNoun reports whether a noun, singular or plural, names a person or
// a pet: what is said of it is no event.
func personNoun(w string) bool {
	for _, n := range []string{w, strings.TrimSuffix(w, "s")} {
		if _, ok := enKin[n]; ok || maleNouns[n] || femaleNouns[n] || otherPersons[n] {
			return true
		}
	}
	return w == "children" || w == "people"
}

var otherPersons = wordSet("kid child baby boy girl guy teacher neighbour neighbor roommate pet puppy kitten")

// mayBeSetting reports, before s is tagged, whether it holds a determiner
// and a copula, as a sentence of setting does.
func mayBeSetting(s string) bool {
	det, be := false, false
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '\'') }) {
		det = det || settingDeterminers[w]
		be = be || beForms[w] || strings.HasSuffix(w, "'s")
	}
	return det && be
}
