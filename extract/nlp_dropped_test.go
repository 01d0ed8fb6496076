package extract

import "testing"

// TestDroppedI: the "I" chat drops before an auxiliary comes back, where
// the words after it say where the speaker was or what they were doing;
// not where the dropped subject may be "it", nor before a subject of the
// sentence's own. The sentences are made up.
func TestDroppedI(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Was at the harbour with my uncle all morning", "I was at the harbour with my uncle all morning"},
		{"oh was out kayaking earlier", "oh I was out kayaking earlier"},
		{"Been to Tallinn twice", "I have been to Tallinn twice"},
		{"Been knitting a scarf for weeks", "I have been knitting a scarf for weeks"},
		{"Am driving back from the coast", "I am driving back from the coast"},
		{"Will be in Tallinn on Friday", "I will be in Tallinn on Friday"},
		{"Been hectic at the office lately", "Been hectic at the office lately"},
		{"Was lovely to see the fireworks", "Was lovely to see the fireworks"},
		{"was it crowded", "was it crowded"},
		{"Will you be at the harbour", "Will you be at the harbour"},
		{"I was at the harbour", "I was at the harbour"},
		{"Was", "Was"},
	} {
		if got := droppedI(c.in); got != c.want {
			t.Errorf("droppedI(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
