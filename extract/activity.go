package extract

import (
	"strings"

	"github.com/engram-dev/engram"
)

// A pastime is told with a verb that names no activity: "went skiing",
// "going hiking with friends", "took a cooking class", "signed up for a
// yoga class". The activity facet reads it from the memory's words when
// its relation makes no facet. The words below are English grammar (the
// verb "go" before a gerund of a pastime, the verbs of taking a class),
// not anything said in a conversation.

// goForms are the forms of "go", which before a gerund name a pastime
// ("go fishing", "went shopping").
var goForms = wordSet("go goes going went gone")

// notGerunds end in "ing" and are no verb.
var notGerunds = wordSet("thing things something nothing anything everything morning mornings evening evenings " +
	"ring king wing spring string sibling ceiling during")

// classVerbs take a class, a lesson or a course ("took a cooking class",
// "joined a dance class", "signed up for a yoga class", "enrolled in").
var classVerbs = wordSet("take takes took taking taken join joins joined joining enroll enrolls enrolled enrolling " +
	"enrol enrols attend attends attended attending signed signing sign signs")

// classNouns end the name of a class.
var classNouns = wordSet("class classes lesson lessons course courses workshop workshops")

// classPhraseWords may stand between a class verb and the class's name.
var classPhraseWords = wordSet("a an the some up for in on my her his their our new first another weekly")

// activityFacet returns the activity facet of a memory whose words tell of
// a pastime of its speaker's: a gerund after a form of "go" (keyed by the
// gerund), or a class, a lesson or a course taken or joined (keyed by its
// name, "cooking class"). The speaker is named before the verb, not as
// someone's owner, and no negation stands just before it.
func activityFacet(m engram.Memory) (engram.FacetUpdate, bool) {
	at, who, ok := memorySpeaker(m)
	if !ok {
		return engram.FacetUpdate{}, false
	}
	ws := plainWords(m.Text)
	key, verb := "", ""
	named := false // the speaker named before, not as an owner: "Ana's brother went fishing" is not Ana's
	for i, w := range ws {
		named = named || w == who
		if !named || negatedAt(ws, i) {
			continue
		}
		if goForms[w] && i+1 < len(ws) && gerund(ws[i+1]) {
			key, verb = ws[i+1], w
			break
		}
		if !classVerbs[w] {
			continue
		}
		j := i + 1
		for j < len(ws) && j-i <= 3 && classPhraseWords[ws[j]] {
			j++
		}
		// The class's name: up to two words, then the class noun.
		for k := j; k < len(ws) && k-j <= 2; k++ {
			if classNouns[ws[k]] {
				if k > j {
					key, verb = strings.Join(ws[j:k+1], " "), w
				}
				break
			}
		}
		if key != "" {
			break
		}
	}
	if key == "" {
		return engram.FacetUpdate{}, false
	}
	return engram.FacetUpdate{Namespace: m.Namespace, Speaker: m.Subject, At: at, Evidence: m.Sources,
		Facet: engram.FacetActivity, Key: key, Value: verb}, true
}

// negations deny what follows them within a few words.
var negations = wordSet("not never no didn't don't doesn't won't can't cannot isn't wasn't haven't hasn't hadn't wouldn't couldn't")

// negatedAt reports whether one of the three words before ws[i] denies it:
// "has never gone skiing".
func negatedAt(ws []string, i int) bool {
	for j := max(0, i-3); j < i; j++ {
		if negations[ws[j]] {
			return true
		}
	}
	return false
}

// gerund reports whether w is a gerund: a word of letters ending in "ing",
// with a stem of three letters or more, that is not a noun of notGerunds.
func gerund(w string) bool {
	return len(w) >= 6 && strings.HasSuffix(w, "ing") && !notGerunds[w] && !strings.ContainsAny(w, "0123456789'-")
}
