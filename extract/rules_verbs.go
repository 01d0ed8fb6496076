package extract

// Verb forms: the third person of a plan or habit ("Ana visits").

import "strings"

var thirdPerson = map[string]string{
	"prefer": "prefers", "like": "likes", "love": "loves", "hate": "hates", "enjoy": "enjoys", "dislike": "dislikes",
	"adore": "adores", "can't stand": "can't stand", "need to": "needs to", "have to": "has to", "must": "must",
	"should": "should", "got to": "has to", "gotta": "has to", "plan": "plans", "intend": "intends", "want": "wants",
	"aim": "aims", "mean": "means", "work": "works", "live": "lives",
}

func third(v string) string {
	l := strings.ToLower(strings.Join(strings.Fields(v), " "))
	if t, ok := thirdPerson[l]; ok {
		return t
	}
	return l
}

// thirdSingular conjugates a verb for he or she: run, runs; watch, watches.
func thirdSingular(v string) string {
	switch v {
	case "have":
		return "has"
	case "do", "go":
		return v + "es"
	case "be":
		return "is"
	}
	n := len(v)
	switch {
	case n == 0:
		return v
	case strings.HasSuffix(v, "s"), strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "ch"), strings.HasSuffix(v, "x"),
		strings.HasSuffix(v, "z"), strings.HasSuffix(v, "o"):
		return v + "es"
	case n > 1 && v[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(v[n-2])):
		return v[:n-1] + "ies"
	}
	return v + "s"
}
