package extract

import (
	"regexp"
	"strings"
)

// A reply to a yes-no question of the other speaker's states nothing on
// its own: "Have you been to Lisbon?" "yes, twice last summer". Read with
// the question, it is the speaker's statement "I have been to Lisbon,
// twice last summer", which the parser then reads as any other (and the
// memory cites both turns). Only a yes is read so: a no says what did not
// happen, which the layers do not keep.

// youQuestion is a yes-no question put to the other speaker: its
// auxiliary and the rest, without "ever" ("Have you ever tried it?").
// "Would you", "can you" and "could you" ask for something rather than
// about the one asked, and are not read.
var youQuestion = regexp.MustCompile(`(?i)^(?:(?:so|and|but|oh|hey|also|btw|wait),?\s+)*(have|has|had|did|do|does|are|were|will)\s+(?:you|u)\s+(?:ever\s+)?(.+?)\s*\?*$`)

// affirmative opens a reply that says yes: the word alone, or before a
// stop or a comma ("Absolutely love it" is no answer); the rest of the
// sentence follows.
var affirmative = regexp.MustCompile(`(?i)^(?:yes|yeah|yea|yep|yup|ya|yah|sure|definitely|absolutely|of course)(?:$|\s*[,.!:;-]+\s*(.*)$|\s+(i\s+\w+(?:\s+too)?)$)`)

// answerAux is the auxiliary of the statement a yes makes of a question's.
var answerAux = map[string]string{"have": "have", "has": "have", "had": "had", "did": "did", "do": "do", "does": "do",
	"are": "am", "were": "was", "will": "will"}

// openWords make a question whose yes says nothing of which or what
// ("Have you tried any new recipes?"), or that offers ("Do you want to
// see?"): not read.
var openWords = wordSet("or any anything anyone anybody anywhere want wanna mind need")

// maxReplyRest is the most words of a reply after its yes that join the
// statement ("yes, twice last summer"); a longer rest says something of
// its own, and the statement is the question's alone.
const maxReplyRest = 5

// youSwap turns the question's words about the one asked into the
// answerer's own.
var youSwap = map[string]string{"you": "me", "u": "me", "your": "my", "ur": "my", "yours": "mine", "yourself": "myself"}

// askerWords are the asker's own words: a question holding one ("Did you
// like my cake?") is not read, since "my" would become the answerer's.
var askerWords = wordSet("i me my mine myself we us our ours ourselves")

// lastQuestion returns the last sentence of a turn when it is a question
// put to the other speaker (youQuestion), else "".
func lastQuestion(content string) string {
	ss := splitSentences(normalizeChat(strings.ToValidUTF8(content, "\uFFFD")))
	if len(ss) == 0 || !ss[len(ss)-1].question {
		return ""
	}
	return ss[len(ss)-1].text
}

// answered returns the statement that reply, a sentence opening with a yes,
// makes of question (lastQuestion): "I" with the question's auxiliary and
// its rest, its words about the one asked made the answerer's, then the
// rest of the reply after a comma. false when the question is not one
// youQuestion reads or holds the asker's own words, when the reply does
// not say yes, or when it goes on about the speaker ("yes, I went there
// in May": parsed as it is); a bare "yes I have" is a yes.
func answered(question, reply string) (string, bool) {
	q := youQuestion.FindStringSubmatch(strings.TrimRight(question, "?!. "))
	a := affirmative.FindStringSubmatch(reply)
	if q == nil || a == nil {
		return "", false
	}
	aux := answerAux[strings.ToLower(q[1])]
	qw := strings.Fields(q[2])
	for i, w := range qw {
		lw := strings.ToLower(strings.Trim(w, ",.!"))
		if askerWords[lw] || openWords[lw] {
			return "", false
		}
		if s, ok := youSwap[lw]; ok {
			qw[i] = s
		}
	}
	rest := strings.TrimSpace(a[1] + a[2])
	rw := strings.Fields(strings.ToLower(rest))
	if len(rw) >= 2 && len(rw) <= 3 && rw[0] == "i" && answerAux[rw[1]] != "" {
		rest, rw = "", nil // "yes I have", "yeah, I did too"
	}
	for _, w := range rw {
		if firstPerson[strings.Trim(w, ",.!'")] {
			return "", false // "yes, I went in May": the reply says it itself
		}
	}
	if len(rw) > maxReplyRest {
		rest = ""
	}
	st := "I " + aux + " " + strings.Join(qw, " ")
	if rest != "" {
		st += ", " + rest
	}
	return st, true
}
