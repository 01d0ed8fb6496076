package textutil

import "strings"

// EnglishStopwords are English function words (articles, pronouns,
// auxiliaries, prepositions, conjunctions, question words), separated by
// white space: the core stopword list, which StopwordSet turns into a set
// together with a user's own additions. Contractions are not in it: the
// tokenizers split or drop them first.
const EnglishStopwords = `a about above after again against all am an and any are as at
	be because been before being below between both but by
	can could did do does doing down during each few for from further
	had has have having he her here hers herself him himself his how
	i if in into is it its itself just me more most my myself
	no nor not now of off on once only or other our ours ourselves
	out over own same shall she should so some such
	than that the their theirs them themselves then there these they
	this those through to too under until up very
	was we were what when where which while who whom whose why will
	with would you your yours yourself yourselves`

// StopwordSet returns the set of the words of lists, each a list of words
// separated by white space.
func StopwordSet(lists ...string) map[string]bool {
	m := make(map[string]bool)
	for _, list := range lists {
		for _, w := range strings.Fields(list) {
			m[w] = true
		}
	}
	return m
}
