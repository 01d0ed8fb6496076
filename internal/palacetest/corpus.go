package palacetest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/engram-dev/engram"
)

// functionWords take the top Zipf ranks, as they do in English.
var functionWords = strings.Fields(`the to and of a in is it that for we you this on with be
	i not are have was but at so can do if as just what they will be or my from all
	there an about would one get our should use like me think need it's then now by
	also been more when which some out up no how could know see make yes ok did does
	here any than maybe still had going want us only into them over well because right`)

// stems are content words; each appears with a few English endings.
var stems = strings.Fields(`database port server deploy migration cache query index user session
	request response error timeout config setting build test release branch merge review
	commit bug fix issue ticket feature design layout button page screen form field value
	token auth login password account email message queue worker job schedule cron task
	report metric dashboard alert incident outage latency throughput memory disk cpu network
	cluster node pod container image registry storage bucket backup restore snapshot replica
	shard partition table column row schema record document file folder path upload download
	client api endpoint route handler service proxy gateway balancer certificate domain host
	customer order invoice payment price plan budget meeting agenda decision note summary
	project milestone deadline sprint estimate priority roadmap goal team manager engineer
	vendor contract license policy security audit log trace debug profile benchmark load
	search result filter sort page limit offset cursor stream event topic consumer producer
	model prompt embedding vector recall memory context window answer question idea draft
	travel flight hotel trip weekend dinner lunch coffee birthday gift family friend doctor
	appointment school class lesson book movie music game photo video phone laptop screen
	kitchen garden car bike train ticket rent house move paint repair clean cook bake order
	call reply write read send share open close start stop restart update upgrade install
	remove rename create delete change check verify compare measure plan discuss agree decide
	approve reject ask answer explain remember forget track follow lead help support train
	migrate rollback provision monitor scale split join parse format render compile link`)

var endings = []string{"", "s", "ed", "ing", "er"}

var speakers = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi",
	"Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Zoe"}

// Corpus makes the turns and queries of the palaces' benchmarks:
// generated, deterministic English-like conversation (Zipf-distributed
// words, a long tail of made-up names, rare identifiers), the same for a
// seed.
type Corpus struct {
	vocab []string // by Zipf rank
	zipf  *rand.Zipf
	Rng   *rand.Rand // its randomness, for a benchmark's own choices
	ids   []string   // rare identifiers, each in a handful of turns
}

// NewCorpus returns the corpus of seed.
func NewCorpus(seed uint64) *Corpus {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	c := &Corpus{Rng: rng}
	var content []string
	seen := make(map[string]bool)
	for _, s := range stems {
		for _, e := range endings {
			if w := s + e; !seen[w] {
				seen[w] = true
				content = append(content, w)
			}
		}
	}
	// A long tail of names and jargon: pronounceable made-up words.
	cons, vows := "bcdfghklmnprstvz", "aeiou"
	for len(content) < 3200 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			content = append(content, w)
		}
	}
	rng.Shuffle(len(content), func(i, j int) { content[i], content[j] = content[j], content[i] })
	c.vocab = append(append([]string(nil), functionWords...), content...)
	c.zipf = rand.NewZipf(rng, 1.07, 2, uint64(len(c.vocab)-1))
	for i := range 200 {
		c.ids = append(c.ids, fmt.Sprintf("%s%s%d", strings.ToUpper(cons[i%16:i%16+1]), "xq", 10000+rng.IntN(90000)))
	}
	return c
}

// Word returns a word, Zipf-distributed.
func (c *Corpus) Word() string { return c.vocab[c.zipf.Uint64()] }

// Sentence returns 4 to 20 Zipf-distributed words with an occasional number.
func (c *Corpus) Sentence() string {
	n := 4 + c.Rng.IntN(17)
	words := make([]string, n)
	for i := range words {
		words[i] = c.Word()
	}
	if c.Rng.IntN(8) == 0 {
		words[c.Rng.IntN(n)] = strconv.Itoa(1000 + c.Rng.IntN(64000))
	}
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ") + [...]string{".", ".", ".", "?", "!"}[c.Rng.IntN(5)]
}

// Turn returns the turn of seq: one to four sentences of a speaker, in a
// namespace (most in the default one) and a session of 40 turns, 37
// seconds after the one before.
func (c *Corpus) Turn(seq int64) engram.Turn {
	var b strings.Builder
	for i := range 1 + c.Rng.IntN(4) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Sentence())
	}
	if c.Rng.IntN(100) == 0 { // ~1,000 turns of 100k carry one of 200 identifiers
		b.WriteString(" See " + c.ids[c.Rng.IntN(len(c.ids))] + ".")
	}
	ns := engram.DefaultNamespace
	switch r := c.Rng.IntN(20); {
	case r < 5:
		ns = "work"
	case r < 6:
		ns = "personal"
	}
	ts := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(seq) * 37 * time.Second)
	return engram.Turn{
		ID:         "b" + strconv.FormatInt(seq, 10),
		Seq:        seq,
		Namespace:  ns,
		Session:    "sess-" + strconv.Itoa(int(seq/40)),
		Role:       []engram.Role{engram.RoleUser, engram.RoleAssistant}[seq%2],
		Speaker:    speakers[c.Rng.IntN(len(speakers))],
		Content:    b.String(),
		TS:         ts,
		ReceivedAt: ts.Add(time.Second),
	}
}

// midWord returns a content word of middling frequency (Zipf rank 100-2000).
func (c *Corpus) midWord() string {
	for {
		if r := 100 + c.Rng.IntN(1900); r < len(c.vocab) {
			return c.vocab[r]
		}
	}
}

// Queries returns n queries of one shape: "words", "question",
// "identifier", "substring" or "cjk-absent".
func (c *Corpus) Queries(shape string, n int) []string {
	out := make([]string, n)
	for i := range out {
		switch shape {
		case "words":
			w := []string{c.midWord(), c.midWord()}
			if c.Rng.IntN(2) == 0 {
				w = append(w, c.midWord())
			}
			out[i] = strings.Join(w, " ")
		case "question":
			out[i] = fmt.Sprintf([]string{
				"what did we decide about the %s %s?",
				"when did %s say the %s was ready?",
				"do you remember where we put the %s for the %s?",
				"why was the %s %s changed last week?",
			}[c.Rng.IntN(4)], c.midWord(), c.midWord())
		case "identifier":
			out[i] = c.ids[c.Rng.IntN(len(c.ids))]
		case "substring": // the tail of an identifier: only the trigram index finds it
			id := c.ids[c.Rng.IntN(len(c.ids))]
			out[i] = id[2:]
		case "cjk-absent": // short CJK terms no turn holds: the worst case, a full LIKE scan
			out[i] = []string{"日本", "会議", "端口", "決定", "数据"}[c.Rng.IntN(5)]
		}
	}
	return out
}
