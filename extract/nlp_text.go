package extract

// Normalising chat English before it is tagged: contractions and informal
// spellings the tagger was not trained on.

import (
	"regexp"
	"strings"
)

// chatForms are informal spellings and their standard forms. The tagger
// was trained on edited prose: "gonna" is a noun to it, "I've" a name.
var chatForms = strings.NewReplacer(
	"’", "'", "‘", "'", "“", `"`, "”", `"`, "…", "...", "—", " - ", "–", " - ",
)

var (
	// splitContractionRe finds a contraction a tokenizer split from its
	// word, as corpora and some keyboards leave them: "didn 't", "did
	// n't", "I 'm". Joined again, it is read as any other; split, "didn"
	// was a verb of its own and "did n't like" lost its negation.
	splitContractionRe = regexp.MustCompile(`(?i)\b([a-z]+n) ('t)\b|\b([a-z]+) (n't)\b|\b(i|you|we|they|he|she|it|that|there|who|what) ('(?:m|re|ve|ll|d))\b`)
	// contractionRe finds the contractions of pronouns and auxiliaries;
	// expandContraction rewrites them.
	contractionRe = regexp.MustCompile(`(?i)\b(i|you|we|they|he|she|it|that|there|who|what)'(m|re|ve|ll|d)\b`)
	capIllRe      = regexp.MustCompile(`\bIll\b`)
	negationRe    = regexp.MustCompile(`(?i)\b(can|won|shan|ain|[a-z]+)'?n't\b`)
	informalRe    = regexp.MustCompile(`(?i)(?:\b|')(?:gonna|wanna|gotta|kinda|sorta|tryna|outta|lemme|dunno|gimme|cause|cuz|coz|cos|em|i|` +
		`im|iam|ive|dont|didnt|doesnt|isnt|wasnt|wont|cant|couldnt|wouldnt|shouldnt|havent|hasnt|hadnt|arent|werent|youre|theyre|thats|whats|idk|alot)\b`)
	// hadNext are the words after "'d" that make it "had": "I'd been".
	hadNext = regexp.MustCompile(`^\s+(?:been|had|gone|done|seen|got|gotten|never|already|just|better)\b`)
)

var informal = map[string]string{"gonna": "going to", "wanna": "want to", "gotta": "have got to", "kinda": "kind of",
	"sorta": "sort of", "tryna": "trying to", "outta": "out of", "lemme": "let me", "dunno": "do not know",
	"gimme": "give me", "cuz": "because", "coz": "because", "cos": "because", "'cause": "because", "'em": "them", "i": "I",
	// Contractions typed without their apostrophe, as on a phone; those
	// that are words of their own ("well", "id", "ill", "lets", "hell",
	// "shell") are left alone; "wont" is far more often "won't" in a chat
	// than the noun.
	"im": "I am", "iam": "I am", "ive": "I have", "dont": "do not", "didnt": "did not", "doesnt": "does not", "isnt": "is not",
	"wasnt": "was not", "wont": "will not", "cant": "can not", "couldnt": "could not", "wouldnt": "would not", "shouldnt": "should not",
	"havent": "have not", "hasnt": "has not", "hadnt": "had not", "arent": "are not", "werent": "were not",
	"youre": "you are", "theyre": "they are", "thats": "that is", "whats": "what is", "idk": "I do not know", "alot": "a lot"}

// normalizeChat rewrites s for the tagger: typographic quotes and dashes
// made plain, contractions expanded ("I'm" is "I am", "didn't" "did not",
// "I'd been" "I had been"), informal forms spelt out ("gonna" is "going
// to", "cuz" "because"), and a lone "i" capitalised.
func normalizeChat(s string) string {
	s = chatForms.Replace(s)
	if hasTripledLetter(s) {
		s = wordRe.ReplaceAllStringFunc(s, squeezeDiscourse)
	}
	s = splitContractionRe.ReplaceAllString(s, "$1$2$3$4$5$6")
	s = contractionRe.ReplaceAllStringFunc(s, func(m string) string {
		i := strings.LastIndexByte(m, '\'')
		word, suf := m[:i], strings.ToLower(m[i+1:])
		if strings.EqualFold(word, "i") {
			word = "I"
		}
		switch suf {
		case "m":
			return word + " am"
		case "re":
			return word + " are"
		case "ve":
			return word + " have"
		case "ll":
			return word + " will"
		}
		return word + " 'd" // resolved below, once the next word is known
	})
	if strings.Contains(s, " 'd") {
		var b strings.Builder
		for {
			i := strings.Index(s, " 'd")
			if i < 0 {
				b.WriteString(s)
				break
			}
			b.WriteString(s[:i])
			if hadNext.MatchString(s[i+3:]) {
				b.WriteString(" had")
			} else {
				b.WriteString(" would")
			}
			s = s[i+3:]
		}
		s = b.String()
	}
	// "Ill" with its capital is "I'll" typed without the apostrophe; the
	// adjective "ill" is written in lower case.
	s = capIllRe.ReplaceAllString(s, "I will")
	s = negationRe.ReplaceAllStringFunc(s, func(m string) string {
		stem := strings.TrimSuffix(strings.TrimSuffix(m, "n't"), "'")
		switch strings.ToLower(stem) {
		case "can", "ca":
			return keepCase(stem, "can") + " not"
		case "won", "wo":
			return keepCase(stem, "will") + " not"
		case "shan", "sha":
			return keepCase(stem, "shall") + " not"
		case "ain", "ai":
			return keepCase(stem, "is") + " not"
		}
		return stem + " not"
	})
	var b strings.Builder
	last := 0
	for _, loc := range informalRe.FindAllStringIndex(s, -1) {
		m := s[loc[0]:loc[1]]
		r, ok := informal[strings.ToLower(m)]
		switch {
		case !ok:
			continue // "cause" and "em" without their apostrophe are words
		case m[0] == '\'' && loc[0] > 0 && isWordByte(s[loc[0]-1]):
			continue // "o'cause"
		case m == "i" && loc[1] < len(s) && s[loc[1]] == '.':
			continue // "i.e."
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(keepCase(m, r))
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// wordRe finds a run of Latin letters.
var wordRe = regexp.MustCompile(`[A-Za-z]+`)

// hasTripledLetter reports whether s holds a letter typed three times in a
// row, any letter: chat draws out "ohhh", "yesss" and "heyyy".
func hasTripledLetter(s string) bool {
	for i := 2; i < len(s); i++ {
		if c := s[i] | 0x20; c >= 'a' && c <= 'z' && s[i-1]|0x20 == c && s[i-2]|0x20 == c {
			return true
		}
	}
	return false
}

// squeezeDiscourse writes a drawn-out discourse word as the word itself
// ("Ohhh" is "Oh"), so that it is read as the interjection it is and not
// as a noun before the subject; other drawn-out words stay as they are.
func squeezeDiscourse(m string) string {
	if !hasTripledLetter(m) {
		return m
	}
	var b strings.Builder
	for i := 0; i < len(m); i++ {
		if i >= 2 && m[i]|0x20 == m[i-1]|0x20 && m[i]|0x20 == m[i-2]|0x20 {
			continue
		}
		b.WriteByte(m[i])
	}
	// A run of three or more became a run of two: "ohhh" is "ohh".
	w := b.String()
	for _, c := range []string{w, squeezePairs(w)} {
		if discourseWords[strings.ToLower(c)] {
			return c
		}
	}
	return m
}

// squeezePairs writes every doubled letter once: "ohh" is "oh".
func squeezePairs(w string) string {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if i > 0 && w[i]|0x20 == w[i-1]|0x20 {
			continue
		}
		b.WriteByte(w[i])
	}
	return b.String()
}

// keepCase returns r capitalised when orig is.
func keepCase(orig, r string) string {
	if orig != "" && orig[0] >= 'A' && orig[0] <= 'Z' && r != "" && r[0] >= 'a' && r[0] <= 'z' {
		return string(r[0]-'a'+'A') + r[1:]
	}
	return r
}
