package vecrow

import "github.com/engram-dev/engram"

// MaxListed bounds the ids a check lists of each kind of problem.
const MaxListed = 10

// Tally is a check of a model's stored rows against the copy an attached
// follower holds, as engram doctor reports it (engram.VectorCheck): pass
// each stored row to Add, in one snapshot the copy is of, then call Done.
type Tally struct {
	c    *engram.VectorCheck
	m    Follower // nil: none attached
	seen []bool   // the copy's rows met among the stored ones
}

// NewTally starts the tally of c against m (nil: no copy to compare).
func NewTally(c *engram.VectorCheck, m Follower) *Tally {
	t := &Tally{c: c, m: m}
	if m != nil {
		c.Loaded, c.InMemory = true, m.Len()
		t.seen = make([]bool, m.Len())
	}
	return t
}

// Add counts a stored row, b (its id, kind and what makes it unusable,
// Reason "" when nothing does), raw as stored.
func (t *Tally) Add(b engram.BadVector, raw []byte) {
	c := t.c
	c.Stored++
	c.ByKind[b.Kind]++
	if b.Reason != "" {
		c.Bad++
		if len(c.BadSample) < MaxListed {
			c.BadSample = append(c.BadSample, b)
		}
	}
	if t.m == nil {
		return
	}
	i, same := t.m.Holds(b.ID, raw)
	if i < 0 {
		c.OnlyInStore++
		return
	}
	t.seen[i] = true
	if b.Reason == "" && !same {
		c.Differ++
	}
}

// Missing counts a turn without a vector, id.
func (t *Tally) Missing(id string) {
	t.c.Missing++
	if len(t.c.MissingIDs) < MaxListed {
		t.c.MissingIDs = append(t.c.MissingIDs, id)
	}
}

// Done counts the copy's rows no stored row matched.
func (t *Tally) Done() {
	for _, ok := range t.seen {
		if !ok {
			t.c.OnlyInMem++
		}
	}
}
