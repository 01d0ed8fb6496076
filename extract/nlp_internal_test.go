package extract

import (
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/timeexpr"
)

func TestNormalizeChat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"I'm gonna try", "I am going to try"},
		{"i've been there, i'd go again", "I have been there, I would go again"},
		{"I'd been told", "I had been told"},
		{"We'll see; they're late; you've got mail", "We will see; they are late; you have got mail"},
		{"I can't, I won't, I don't", "I can not, I will not, I do not"},
		{"Gotta go 'cause it's late, cuz why not", "Have got to go because it's late, because why not"},
		{"I’m here — finally", "I am here  -  finally"},
		{"i.e. the cause", "i.e. the cause"},
		{"Wanna see 'em?", "Want to see them?"},
		// Typed on a phone, without apostrophes.
		{"im tired and i dont know, idk", "I am tired and I do not know, I do not know"},
		{"Ive been there but it wasnt open and thats alot", "I have been there but it was not open and that is a lot"},
		{"I cant, youre right, theyre late", "I can not, you are right, they are late"},
		// Contractions that are words of their own stay.
		{"I was ill, well, and I wont go to hell", "I was ill, well, and I will not go to hell"},
		{"I promise Ill try", "I promise I will try"},
	} {
		if got := normalizeChat(tc.in); got != tc.want {
			t.Errorf("normalizeChat(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDateOf(t *testing.T) {
	at := time.Date(2023, 5, 10, 15, 0, 0, 0, time.UTC) // a Wednesday
	for _, tc := range []struct{ expr, want string }{
		{"yesterday", "on 9 May 2023"},
		{"last week", "in the week of 1 May 2023"},
		{"last month", "in April 2023"},
		{"last year", "in 2022"},
		{"next month", "in June 2023"},
		{"last weekend", "on the weekend of 6 May 2023"},
		{"two days ago", "on 8 May 2023"},
		{"a few days ago", "around 7 May 2023"},
		{"three months ago", "around February 2023"},
		{"five years ago", "around 2018"},
		{"since last year", "since 2022"},
	} {
		rs := timeexpr.Find("it happened "+tc.expr, at, 1)
		if len(rs) != 1 {
			t.Errorf("%q: no time expression", tc.expr)
			continue
		}
		if got := dateOf(rs[0]); got != tc.want {
			t.Errorf("dateOf(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
	if got, _ := resolveTimes("Ana will go there in September", at, true); got != "Ana will go there in September" {
		t.Errorf("a plan's month already past this year: %q", got)
	}
	if got, from := resolveTimes("Ana went there in September", at, false); got != "Ana went there in September 2022" || from.Year() != 2022 {
		t.Errorf("an event's month: %q from %s", got, from)
	}
	if got, _ := resolveTimes("Ana moved there in 2019", at, false); got != "Ana moved there in 2019" {
		t.Errorf("a year stays: %q", got)
	}
}

func TestVerbStems(t *testing.T) {
	for lemma, forms := range map[string][]string{
		"decide": {"decide", "decides", "decided", "deciding"},
		"agree":  {"agree", "agrees", "agreed", "agreeing"},
		"go":     {"go", "goes", "went", "gone", "going"},
		"use":    {"use", "uses", "used", "using"},
		"love":   {"love", "loves", "loved", "loving"},
		"live":   {"live", "lives", "lived", "living"},
		"choose": {"choose", "chose", "chosen", "choosing"},
		"settle": {"settle", "settled", "settling"},
	} {
		for _, f := range forms {
			if !verbIs(verbStem(f), lemma) {
				t.Errorf("%q is not read as a form of %q (stem %q)", f, lemma, verbStem(f))
			}
		}
	}
	if verbIs(verbStem("lived"), "love") || verbIs(verbStem("used"), "go") {
		t.Error("stems of other verbs match")
	}
}

// TestNewRelTrailingConjunction: an object cut before what its last word
// joins loses that word.
func TestNewRelTrailingConjunction(t *testing.T) {
	for in, want := range map[string]string{"get stuck on year 500 or": "get stuck on year 500", "tea and,": "tea", "Oregon": "Oregon"} {
		if r := newRel("Ana", "habit", in); r == nil || r.Object != want {
			t.Errorf("newRel(%q) = %+v, want object %q", in, r, want)
		}
	}
}

// TestSqueezeDiscourse: a discourse word drawn out by any letter typed
// three times or more reads as the word; other words stay as typed.
func TestSqueezeDiscourse(t *testing.T) {
	for in, want := range map[string]string{
		"Ohhh": "Oh", "heyyy": "hey", "Hiii": "Hi", "yesss": "yes", "lolll": "lol", "okayyy": "okay",
		"Soo": "Soo", "Hmm": "Hmm", "Bzzzt": "Bzzzt", "cool": "cool",
	} {
		if got := squeezeDiscourse(in); got != want {
			t.Errorf("squeezeDiscourse(%q) = %q, want %q", in, got, want)
		}
	}
}
