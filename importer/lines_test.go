package importer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/engram-dev/engram/importer"
)

// TestReadLines: each non-blank line of engram's own turn format is a
// record, numbered as the file's lines are; a line without a namespace
// gets the one given; a line that is no turn is an error naming the line,
// not the request body; emit's error stops the reading.
func TestReadLines(t *testing.T) {
	in := strings.Join([]string{
		`{"session":"s1","speaker":"Alice","content":"We picked port 30001"}`,
		``,
		`not json at all`,
		`{"session":"s2","content":"kept apart","namespace":"work"}`,
		`{"session":"s1","content":"an unknown field","colour":"red"}`,
	}, "\n") + "\n"
	var recs []importer.Record
	n, err := importer.ReadLines(strings.NewReader(in), "notes", func(r importer.Record) error { recs = append(recs, r); return nil })
	if err != nil || n != 4 || len(recs) != 4 {
		t.Fatalf("ReadLines = %d, %v; %d records, want 4", n, err, len(recs))
	}
	if r := recs[0]; r.Where != "line 1" || r.Err != nil || r.Turn.Content != "We picked port 30001" || r.Turn.Namespace != "notes" || r.Turn.Speaker != "Alice" {
		t.Errorf("line 1: %+v", r)
	}
	if r := recs[1]; r.Where != "line 3" || r.Err == nil || !strings.HasPrefix(r.Err.Error(), "the line must be a JSON object") {
		t.Errorf("line 3: %+v", r)
	}
	if r := recs[2]; r.Where != "line 4" || r.Err != nil || r.Turn.Namespace != "work" {
		t.Errorf("line 4: %+v", r)
	}
	if r := recs[3]; r.Where != "line 5" || r.Err == nil || !strings.Contains(r.Err.Error(), "colour") {
		t.Errorf("line 5: %+v", r)
	}

	stop := errors.New("the archive failed")
	n, err = importer.ReadLines(strings.NewReader(in), "", func(importer.Record) error { return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("an emit error: %d lines, %v", n, err)
	}
}
