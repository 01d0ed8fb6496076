package bench

import (
	_ "embed"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/embedder"
)

//go:embed corpus/scale.txt
var scaleCorpus string

// corpus is the parsed scale corpus: sentence templates and the values of
// their slots.
type corpus struct {
	templates []string
	slots     map[string][]string
}

// topicSlot is the slot whose values are the words of the builtin
// embedder's English vocabulary (see topicWords), so that the turns hold the
// long tail of rare words real conversations have.
const topicSlot = "topic"

// topicWords returns the alphabetic words of four letters or more among
// the 40,000 most frequent English words, by frequency, the 2,000 most
// frequent left out: the rare words a topic brings in.
func topicWords() []string {
	var out []string
	for i := 2000; ; i++ {
		w, ok := embedder.Word(i)
		if !ok {
			return out
		}
		if len(w) >= 4 && strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 {
			out = append(out, w)
		}
	}
}

// parseCorpus parses text in the format of corpus/scale.txt: "#" comments,
// "@slot v1 v2 ..." lines (a value's "_" are spaces) and templates whose
// every {slot} must be defined ({topic} always is: topicWords).
func parseCorpus(text string) (*corpus, error) {
	c := &corpus{slots: map[string][]string{topicSlot: topicWords()}}
	if len(c.slots[topicSlot]) == 0 {
		return nil, fmt.Errorf("corpus: the word-vector vocabulary is missing")
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "@"):
			f := strings.Fields(line[1:])
			if len(f) < 2 {
				return nil, fmt.Errorf("corpus line %d: a slot needs a name and values", i+1)
			}
			for _, v := range f[1:] {
				c.slots[f[0]] = append(c.slots[f[0]], strings.ReplaceAll(v, "_", " "))
			}
		default:
			c.templates = append(c.templates, line)
		}
	}
	if len(c.templates) == 0 {
		return nil, fmt.Errorf("corpus: no templates")
	}
	for _, t := range c.templates {
		for rest := t; ; {
			i := strings.IndexByte(rest, '{')
			if i < 0 {
				break
			}
			j := strings.IndexByte(rest[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("corpus: unclosed slot in %q", t)
			}
			if _, ok := c.slots[rest[i+1:i+j]]; !ok {
				return nil, fmt.Errorf("corpus: unknown slot {%s} in %q", rest[i+1:i+j], t)
			}
			rest = rest[i+j+1:]
		}
	}
	return c, nil
}

// scaleGen generates the turns of `engram bench scale`: conversations of
// two speakers per namespace in sessions of sessionTurns turns, one to three
// sentences a turn, spread over the years a heavy user's history covers
// (a session a day or so). It is deterministic for a seed.
type scaleGen struct {
	c          *corpus
	rng        *rand.Rand
	zipf       map[string]*rand.Zipf
	namespaces int
	start      time.Time
	n          int // turns generated
}

const sessionTurns = 20

func newScaleGen(c *corpus, namespaces int, seed uint64) *scaleGen {
	g := &scaleGen{c: c, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), zipf: map[string]*rand.Zipf{},
		namespaces: namespaces, start: time.Date(2023, 1, 2, 9, 0, 0, 0, time.UTC)}
	for name, vs := range c.slots {
		s := 1.2
		if name == topicSlot {
			s = 1.01 // Zipf's law of words: a long tail
		}
		g.zipf[name] = rand.NewZipf(g.rng, s, 1, uint64(len(vs)-1))
	}
	return g
}

// scaleSpeakers are each namespace's two speakers.
var scaleSpeakers = [2]string{"Sam", "Robin"}

// next returns the next turn. Turns go round the namespaces a session at a
// time, so each namespace grows at the same pace.
func (g *scaleGen) next() engram.Turn {
	n := g.n
	g.n++
	session := n / sessionTurns
	ns := session % g.namespaces
	day := session / g.namespaces
	ts := g.start.Add(time.Duration(day)*24*time.Hour + time.Duration(n%sessionTurns)*90*time.Second)
	var b strings.Builder
	for i, k := 0, 1+g.rng.IntN(3); i < k; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		g.fill(&b, g.c.templates[g.rng.IntN(len(g.c.templates))])
	}
	role := engram.RoleUser
	if n%2 == 1 {
		role = engram.RoleAssistant
	}
	return engram.Turn{
		ID:        fmt.Sprintf("scale-%d", n),
		Namespace: fmt.Sprintf("scale-%d", ns),
		Session:   fmt.Sprintf("s%d", session),
		Role:      role,
		Speaker:   scaleSpeakers[n%2],
		Content:   b.String(),
		TS:        ts,
	}
}

func (g *scaleGen) fill(b *strings.Builder, t string) {
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			b.WriteString(t)
			return
		}
		j := strings.IndexByte(t[i:], '}')
		b.WriteString(t[:i])
		slot := t[i+1 : i+j]
		b.WriteString(g.c.slots[slot][g.zipf[slot].Uint64()])
		t = t[i+j+1:]
	}
}

// question returns a recall question about t: up to four of its words of
// five letters or more, in one of a few frames.
func question(t engram.Turn, rng *rand.Rand) string {
	words := strings.FieldsFunc(t.Content, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	var long []string
	for _, w := range words {
		if len(w) >= 5 {
			long = append(long, w)
		}
	}
	rng.Shuffle(len(long), func(i, j int) { long[i], long[j] = long[j], long[i] })
	if len(long) > 4 {
		long = long[:4]
	}
	frames := []string{"what did we say about %s?", "when was %s mentioned?", "tell me about %s", "%s"}
	return fmt.Sprintf(frames[rng.IntN(len(frames))], strings.Join(long, " "))
}
