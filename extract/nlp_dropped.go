package extract

import "strings"

// Chat drops the "I" before an auxiliary as it does before a verb ("Lost
// my job", which the parser reads): "Was at the lake all day", "Been to
// Rome twice", "Will be in Oslo next week". droppedI puts it back, so that
// the parser finds the sentence's subject. Not before a word that would be
// the subject itself: "was it fun", "will you come" are questions typed
// without their mark.

// droppedAux are the auxiliaries whose "I" chat drops, and what they
// become with it.
var droppedAux = map[string]string{"was": "I was", "am": "I am", "been": "I have been", "will": "I will"}

// notAfterDropped are the words after which an auxiliary opens a question
// or has a subject of its own.
var notAfterDropped = wordSet("i you he she it we they there this that these those the a an my your his her our their " +
	"anyone someone everyone anybody somebody everybody what who")

// placeWords after "was" or "been" say where the speaker was ("Was at the
// lake", "Been to Rome"), as a verb in -ing says what they were doing.
var placeWords = wordSet("at in on to with out home back away over up down off around into from inside outside")

// droppedI returns s with the "I" an auxiliary lost put back before it
// (after a word of discourse: "oh was at the lake"), else s.
func droppedI(s string) string {
	ws := strings.Fields(s)
	k := 0
	for k < len(ws)-1 && (discourseWords[strings.ToLower(strings.Trim(ws[k], ",.!"))] || leadAdverbs[strings.ToLower(ws[k])]) {
		k++
	}
	if k+1 >= len(ws) || strings.HasSuffix(ws[k], ",") {
		return s
	}
	aux, next := strings.ToLower(ws[k]), strings.ToLower(strings.Trim(ws[k+1], ",.!"))
	with, ok := droppedAux[aux]
	if !ok || notAfterDropped[next] {
		return s
	}
	if (aux == "was" || aux == "been") && !strings.HasSuffix(next, "ing") && !placeWords[next] {
		return s // "Been hectic lately", "Was great": it, as often as I
	}
	return strings.Join(append(append(ws[:k:k], with), ws[k+1:]...), " ")
}
