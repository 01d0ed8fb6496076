package recall_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/recall"
)

func TestFindTimeExprs(t *testing.T) {
	said := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC) // a Monday
	day := func(m time.Month, d int) time.Time { return time.Date(2023, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		text string
		want []recall.TimeRange
	}{
		{"I went to a choir rehearsal yesterday and it was so moving.",
			[]recall.TimeRange{{From: day(5, 7), To: day(5, 8), Expr: "yesterday"}}},
		{"I ran a charity race last Sunday, and we go camping next month!",
			[]recall.TimeRange{{From: day(5, 7), To: day(5, 8), Expr: "last Sunday"}, {From: day(6, 1), To: day(7, 1), Expr: "next month"}}},
		{"We met two weeks ago.", []recall.TimeRange{{From: day(4, 21), To: day(4, 28), Expr: "two weeks ago"}}},
		{"Nothing about time here, we may go.", nil},
	} {
		got := recall.FindTimeExprs(tc.text, said, 8)
		if len(got) != len(tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.text, got, tc.want)
			continue
		}
		for i := range got {
			if !got[i].From.Equal(tc.want[i].From) || !got[i].To.Equal(tc.want[i].To) || got[i].Expr != tc.want[i].Expr {
				t.Errorf("%q: [%d] %+v, want %+v", tc.text, i, got[i], tc.want[i])
			}
		}
	}
	if got := recall.FindTimeExprs("yesterday, today and tomorrow", said, 2); len(got) != 2 {
		t.Errorf("limit 2: %+v", got)
	}
}

// TestResultTimes: a result carries its session's start and the dates its
// relative expressions mean, and the packed context says them.
func TestResultTimes(t *testing.T) {
	f := mustOpenFixture(t, []string{
		"Let's catch up on the week.",
		"I donated my old car to a charity yesterday.",
	})
	s := f.service()
	s.Units = f.db
	resp, err := s.Recall(context.Background(), engram.RecallRequest{Query: "when was the car donated", Mode: engram.ModeHybrid, BudgetTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	var car *engram.Result
	for i := range resp.Results {
		if strings.Contains(resp.Results[i].Text, "car") {
			car = &resp.Results[i]
		}
	}
	// The fixture's turns are a minute apart from 2026-05-01 09:00 UTC.
	if car == nil || !car.SessionStart.Equal(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)) ||
		len(car.Times) != 1 || car.Times[0].Expr != "yesterday" || !car.Times[0].From.Equal(time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("the car turn: %+v", car)
	}
	if !strings.Contains(resp.Context, "[yesterday = 2026-04-30]") {
		t.Errorf("packed context without the resolved date:\n%s", resp.Context)
	}
}
