package pipeline

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A scene's summary (its best sentences) and title (its most salient
// terms).

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
