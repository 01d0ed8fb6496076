package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// locomoFixture is the LoCoMo conversation of cmd/engram's bench tests
// (testdata/bench/locomo-fixture.json), as a map to change.
func locomoFixture(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "bench", "locomo-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestBenchLocomoParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want diaID
		ok   bool
	}{
		{"D1:3", diaID{1, 3}, true},
		{"D30:05", diaID{30, 5}, true},
		{"D8:6; D9:17", diaID{}, false},
		{"d1:3", diaID{}, false},
		{"D1", diaID{}, false},
		{" D1:3", diaID{}, false},
		{"", diaID{}, false},
	} {
		got, err := parseDiaID(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseDiaID(%q) = %v, %v", tc.in, got, err)
		}
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"1:56 pm on 8 May, 2023", time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)},
		{"12:09 am on 13 September, 2023", time.Date(2023, 9, 13, 0, 9, 0, 0, time.UTC)},
		{"12:48 PM on 1 February, 2023", time.Date(2023, 2, 1, 12, 48, 0, 0, time.UTC)},
	} {
		got, err := parseLocomoTime(tc.in)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseLocomoTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	// The upstream shape nests the sessions in "conversation".
	flat := locomoFixture(t)
	nested := map[string]any{"qa": flat["qa"], "sample_id": "conv-7", "conversation": flat}
	delete(flat, "qa")
	b, err := json.Marshal(nested)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseLocomo("7.json", b, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.namespace != "locomo-7" || len(c.sessions) != 2 || len(c.turns) != 6 || len(c.questions) != 3 || c.stats.Questions != 5 {
		t.Errorf("nested shape: %+v", c)
	}
	for _, bad := range []string{"", "8 May 2023", "25:00 pm on 8 May, 2023", "1:56 pm on 31 June, 2023"} {
		if _, err := parseLocomoTime(bad); err == nil {
			t.Errorf("parseLocomoTime(%q) succeeded", bad)
		}
	}
}
