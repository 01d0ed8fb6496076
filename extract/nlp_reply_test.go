package extract

import (
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// TestAnswered: a yes to a yes-no question put to the speaker is the
// speaker's statement of the question, with a short rest of the reply;
// questions that ask which, offer or ask for something, or hold the
// asker's own words, and replies that say no or go on about the speaker
// themselves, make none. The sentences are made up.
func TestAnswered(t *testing.T) {
	for _, c := range []struct{ q, reply, want string }{
		{"Have you been to Valparaiso", "yes, twice last winter", "I have been to Valparaiso, twice last winter"},
		{"Have you ever tried paragliding", "Yep!", "I have tried paragliding"},
		{"So did you finish the quilt", "yes I did", "I did finish the quilt"},
		{"Do you still keep your old bass guitar", "Yeah.", "I do still keep my old bass guitar"},
		{"Are you moving to Tromso", "definitely", "I am moving to Tromso"},
		{"Will you be at the regatta", "yes, all weekend", "I will be at the regatta, all weekend"},
		{"Have you met the new neighbours", "Yes, they seem friendly and their garden is lovely", "I have met the new neighbours"},
		{"Have you been to Valparaiso", "no, never", ""},
		{"Have you been to Valparaiso", "yes, I went there with my aunt in March", ""},
		{"Absolutely adore it", "yes", ""},
		{"Did you like my lemon tart", "yes!", ""},
		{"Have you tried any new board games", "yes", ""},
		{"Do you want to see the photos", "sure", ""},
		{"Would you like some tea", "yes please", ""},
		{"Have you been to Valparaiso or Santiago", "yes", ""},
		{"Where did you go", "yes", ""},
		{"Did you go", "Absolutely love that idea", ""},
	} {
		got, ok := answered(c.q, c.reply)
		if (c.want == "") == ok || got != c.want {
			t.Errorf("%q / %q: %q, %v; want %q", c.q, c.reply, got, ok, c.want)
		}
	}
}

// TestExtractReplyToQuestion: the extractor reads a yes with the other
// speaker's question before it, and the memory cites both turns; the same
// yes after the speaker's own message, or after a statement, makes none.
func TestExtractReplyToQuestion(t *testing.T) {
	at := time.Date(2023, 9, 14, 18, 0, 0, 0, time.UTC)
	turn := func(id, speaker, text string, i int) engram.Turn {
		return engram.Turn{ID: id, Namespace: "ns", Session: "s1", Speaker: speaker, Content: text, TS: at.Add(time.Duration(i) * time.Minute)}
	}
	x := &NLPExtractor{}
	mems, err := x.Extract(t.Context(), []engram.Turn{
		turn("q", "Bo", "Nice photo! Have you been to Valparaiso?", 0),
		turn("a", "Ana", "yes, twice last winter", 1),
		turn("s", "Bo", "The harbour looks busy.", 2),
		turn("b", "Ana", "yes", 3),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 1 || mems[0].Text != "Ana has been to Valparaiso, twice last winter" || mems[0].Subject != "Ana" ||
		!slices.Equal(mems[0].Sources, []string{"a", "q"}) {
		t.Fatalf("memories %+v, want Ana's one statement citing the reply and the question", mems)
	}
}

// FuzzExtractReply: whatever a question and its reply hold, the memories
// are the two speakers', cite the two turns only, and hold valid text.
func FuzzExtractReply(f *testing.F) {
	f.Add("Have you been to Valparaiso?", "yes, twice last winter")
	f.Add("Did you like my tart?", "yes!")
	f.Add("Do you   you your yourself u ur ?", "yeah I did too")
	f.Add("have you ever", "yes,")
	f.Add("Will you?", "sure \x00 I will")
	x := &NLPExtractor{Workers: 1}
	at := time.Date(2023, 9, 14, 18, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, question, reply string) {
		turns := []engram.Turn{
			{ID: "q", Namespace: "ns", Session: "s", Speaker: "Bo", Content: question, TS: at},
			{ID: "a", Namespace: "ns", Session: "s", Speaker: "Ana", Content: reply, TS: at.Add(time.Minute)},
		}
		mems, err := x.Extract(t.Context(), turns)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mems {
			if m.Text == "" || !utf8.ValidString(m.Text) || (m.Subject != "Ana" && m.Subject != "Bo") {
				t.Fatalf("%q / %q gave %+v", question, reply, m)
			}
			for _, s := range m.Sources {
				if s != "q" && s != "a" {
					t.Fatalf("%q / %q gave a memory citing %q", question, reply, s)
				}
			}
		}
	})
}
