package extract

import (
	"strings"
	"unicode"
)

// A person's health is told in passing, rarely as a relation: "picked up
// some meds for the flu", "my back hurts", "got food poisoning". The
// health facet reads the condition from the memory's own words. The terms
// below are general English names of illnesses, symptoms and injuries,
// not anything said in a conversation.

// healthConditions are the words and phrases that name a condition on
// their own wherever they stand.
var healthConditions = phraseSet(`
	flu influenza covid covid-19 coronavirus fever cough coughing sore-throat runny-nose sinusitis
	infection bronchitis pneumonia tonsillitis strep-throat ear-infection
	migraine migraines headache headaches stomachache stomach-ache toothache backache earache
	food-poisoning poisoning nausea vomiting diarrhea diarrhoea indigestion heartburn
	allergy allergies hay-fever asthma eczema
	diabetes cancer arthritis hypertension high-blood-pressure anemia anaemia
	insomnia anxiety depression panic-attack panic-attacks burnout
	concussion sprain sprained-ankle fracture fractured broken-arm broken-leg broken-wrist broken-ankle
	injury injuries surgery chemotherapy physiotherapy physical-therapy heart-attack
	chickenpox measles mononucleosis jet-lag sunburn
`)

// healthStates are the adjectives of being unwell, a condition only after
// a verb of being or becoming ("got sick", "was ill"): "sick of it" and
// "ill" for "I'll" are not.
var healthStates = map[string]bool{"sick": true, "ill": true, "unwell": true, "nauseous": true, "feverish": true, "injured": true}

// healthStateVerbs come before a health state.
var healthStateVerbs = map[string]bool{"got": true, "get": true, "gets": true, "getting": true, "gotten": true, "was": true, "were": true,
	"am": true, "is": true, "are": true, "been": true, "be": true, "being": true, "feel": true, "feels": true, "feeling": true,
	"felt": true, "fell": true, "falling": true, "became": true, "become": true, "stayed": true, "staying": true, "still": true}

// bodyParts name where a pain or an ache is: "back pain", "my knee hurts".
var bodyParts = map[string]bool{"head": true, "back": true, "neck": true, "shoulder": true, "shoulders": true, "arm": true,
	"arms": true, "elbow": true, "wrist": true, "hand": true, "hands": true, "finger": true, "chest": true, "heart": true,
	"stomach": true, "belly": true, "hip": true, "hips": true, "leg": true, "legs": true, "knee": true, "knees": true,
	"ankle": true, "ankles": true, "foot": true, "feet": true, "toe": true, "tooth": true, "teeth": true, "jaw": true,
	"ear": true, "ears": true, "eye": true, "eyes": true, "throat": true, "joint": true, "joints": true, "muscle": true,
	"muscles": true, "spine": true}

// painWords follow a body part as its pain.
var painWords = map[string]bool{"pain": true, "pains": true, "ache": true, "aches": true, "hurts": true, "hurt": true, "hurting": true}

// phraseSet is the set of the words of s; a hyphenated entry is a phrase
// of its words ("sore-throat" is "sore throat"), kept with its hyphen too
// ("covid-19").
func phraseSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
		m[strings.ReplaceAll(w, "-", " ")] = true
	}
	return m
}

// plainWords are text's words in lower case, without the punctuation
// around them (a hyphen or an apostrophe inside a word stays: "covid-19",
// "ana's").
func plainWords(text string) []string {
	text = strings.ReplaceAll(text, "’", "'") // a model may write the typographic apostrophe
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '\''
	})
}

// healthMention returns the condition text tells of, in lower case: a
// named condition (the longest phrase of up to three words), a body part's
// pain ("back pain"), or a state of being unwell after a verb of being
// ("sick"); false when it tells of none.
func healthMention(text string) (string, bool) {
	ws := plainWords(text)
	for i := range ws {
		for n := min(3, len(ws)-i); n >= 1; n-- {
			if p := strings.Join(ws[i:i+n], " "); healthConditions[p] {
				return p, true
			}
		}
		w := ws[i]
		if painWords[w] && i > 0 && bodyParts[ws[i-1]] {
			return ws[i-1] + " pain", true
		}
		if healthStates[w] && i > 0 && healthStateVerbs[ws[i-1]] && (i+1 == len(ws) || ws[i+1] != "of") {
			return w, true
		}
	}
	return "", false
}
