package pipeline

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// The terms of a scene (content words, CJK bigrams, phrases) and their
// salience: which are kept in a bounded draft, how each is shown, and how
// the terms rate a candidate sentence.

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
