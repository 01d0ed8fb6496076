package importer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/importer"
)

// readChatGPT reads a fixture under testdata/importer/chatgpt and checks
// that every turn it yields is one engram accepts.
func readChatGPT(t *testing.T, name, ns string) ([]importer.Record, importer.ChatGPTStats) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "importer", "chatgpt", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []importer.Record
	st, err := importer.ReadChatGPT(f, ns, func(r importer.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs)
	return recs, st
}

// checkRecords is the invariant of every Record: exactly one of a turn, a
// skip and an error, and a turn engram accepts.
func checkRecords(t *testing.T, recs []importer.Record) {
	t.Helper()
	for _, r := range recs {
		set := 0
		if r.Turn.Content != "" {
			set++
			if _, err := r.Turn.Turn("", time.Now(), engram.Limits{}); err != nil {
				t.Errorf("%s: the turn is not valid: %v", r.Where, err)
			}
		}
		if r.Skip != "" {
			set++
		}
		if r.Err != nil {
			set++
		}
		if set != 1 || r.Where == "" {
			t.Errorf("record %+v: want exactly one of turn, skip and error, and where", r)
		}
	}
}

func TestReadChatGPT(t *testing.T) {
	recs, st := readChatGPT(t, "conversations.json", "chats")
	if st.Conversations != 2 || st.Messages != 14 {
		t.Errorf("stats = %+v, want 2 conversations, 14 messages on the current branches", st)
	}
	var ids []string
	skips := map[string]string{}
	turns := map[string]engram.TurnInput{}
	for _, r := range recs {
		switch {
		case r.Err != nil:
			t.Errorf("%s: %v", r.Where, r.Err)
		case r.Skip != "":
			skips[r.Where[strings.LastIndex(r.Where, " ")+1:]] = r.Skip
		default:
			ids = append(ids, r.Turn.ID)
			turns[r.Turn.ID] = r.Turn
		}
	}
	// Only the current branch: the edited question (u2-old), its answer and
	// the regenerated answer (a3-first) are not there.
	want := []string{"u1", "a1", "u2-new", "a3-regen", "u4", "a7", "t8", "x1", "y2"}
	for i := range want {
		want[i] = "chatgpt-" + want[i]
	}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Errorf("turn ids\n got %v\nwant %v", ids, want)
	}
	wantSkips := map[string]string{
		"sys":   importer.SkipSystem,
		"a5":    importer.SkipNonText + " (code)",
		"t6":    importer.SkipNonText + " (execution_output)",
		"hid":   importer.SkipHidden,
		"empty": importer.SkipEmpty,
	}
	if len(skips) != len(wantSkips) {
		t.Errorf("skips = %v, want %v", skips, wantSkips)
	}
	for id, why := range wantSkips {
		if skips[id] != why {
			t.Errorf("message %s: skip %q, want %q", id, skips[id], why)
		}
	}

	u1 := turns["chatgpt-u1"]
	if u1.Content != "Bonjour ! Wie geht's? 你好 🙂 — «café»" || u1.Role != "user" || u1.Speaker != "user" ||
		u1.Session != "conv-1" || u1.Namespace != "chats" || u1.TS != "2024-05-01T13:26:41.25Z" {
		t.Errorf("u1 = %+v", u1)
	}
	var meta struct {
		ChatGPT struct{ Conversation, Title, Message string } `json:"chatgpt"`
	}
	if err := json.Unmarshal(u1.Meta, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.ChatGPT.Conversation != "conv-1" || meta.ChatGPT.Title != "Café ☕ und 日本語" || meta.ChatGPT.Message != "u1" {
		t.Errorf("u1 meta = %s", u1.Meta)
	}
	if a := turns["chatgpt-a1"]; a.Role != "assistant" || a.Speaker != "gpt-4o" {
		t.Errorf("a1: role %q speaker %q, want assistant gpt-4o (the model slug)", a.Role, a.Speaker)
	}
	if a := turns["chatgpt-a7"]; a.Speaker != importer.ChatGPTSpeaker || a.TS != "2024-05-01T13:26:40Z" {
		t.Errorf("a7 (no model, no time): speaker %q ts %q, want chatgpt and the conversation's time", a.Speaker, a.TS)
	}
	if u := turns["chatgpt-u4"]; u.Content != "[image]\nWhat is in this picture?" {
		t.Errorf("u4 (image and text) content = %q", u.Content)
	}
	if tl := turns["chatgpt-t8"]; tl.Role != "tool" || tl.Speaker != "browser" {
		t.Errorf("t8: role %q speaker %q, want tool browser", tl.Role, tl.Speaker)
	}
	// conv-2 has conversation_id only and no current_node: the last child
	// (the latest regeneration) is followed.
	if y := turns["chatgpt-y2"]; y.Session != "conv-2" || y.Speaker != "chatgpt" {
		t.Errorf("y2 = %+v", y)
	}
}

// TestReadChatGPTStable: a second read yields the same turns, which is what
// makes a re-import add nothing.
func TestReadChatGPTStable(t *testing.T) {
	a, _ := readChatGPT(t, "conversations.json", "")
	b, _ := readChatGPT(t, "conversations.json", "")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("two reads differ:\n%s\n%s", ja, jb)
	}
}

func TestReadChatGPTMalformed(t *testing.T) {
	recs, st := readChatGPT(t, "malformed.json", "")
	if st.Conversations != 4 {
		t.Errorf("conversations = %d, want 4", st.Conversations)
	}
	var errs, turns []string
	for _, r := range recs {
		if r.Err != nil {
			errs = append(errs, r.Where+": "+r.Err.Error())
		} else if r.Skip == "" {
			turns = append(turns, r.Turn.ID)
		}
	}
	if len(errs) != 3 || !strings.Contains(errs[0], "conversation 1") || !strings.Contains(errs[1], "no id") ||
		!strings.Contains(errs[2], "cycle") {
		t.Errorf("errors:\n%s", strings.Join(errs, "\n"))
	}
	if strings.Join(turns, " ") != "chatgpt-x1 chatgpt-y2" {
		t.Errorf("turns after the bad conversations = %v", turns)
	}
}

func TestReadChatGPTNotAnExport(t *testing.T) {
	for _, in := range []string{"", "{}", `"x"`, "nope"} {
		_, err := importer.ReadChatGPT(strings.NewReader(in), "", func(importer.Record) error { return nil })
		if !errors.Is(err, importer.ErrNotChatGPTExport) {
			t.Errorf("%q: err = %v, want ErrNotChatGPTExport", in, err)
		}
	}
	// Truncated: the conversations before the break are read, then an error.
	var n int
	_, err := importer.ReadChatGPT(strings.NewReader(`[{"id":"c","current_node":"m","mapping":{"m":{"id":"m","message":{"id":"m","author":{"role":"user"},"content":{"content_type":"text","parts":["hi"]}}}}}, {"id":`),
		"", func(importer.Record) error { n++; return nil })
	if err == nil || n != 1 {
		t.Errorf("truncated: err = %v after %d records, want an error after 1", err, n)
	}
	// emit's error stops the read.
	stop := errors.New("stop")
	f, err := os.Open(filepath.Join("..", "testdata", "importer", "chatgpt", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := importer.ReadChatGPT(f, "", func(importer.Record) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("err = %v, want emit's", err)
	}
}

// TestReadChatGPTStreams: conversations are emitted while the rest of the
// export is still to come, so an export need not fit in memory.
func TestReadChatGPTStreams(t *testing.T) {
	pr, pw := io.Pipe()
	const n = 500
	firstSeen := make(chan struct{})
	go func() {
		conv := `{"id":"c%d","current_node":"m","mapping":{"m":{"id":"m","message":{"id":"m%d","author":{"role":"user"},"content":{"content_type":"text","parts":["message %d"]}}}}}`
		fmt.Fprint(pw, "[")
		for i := range n {
			if i > 0 {
				fmt.Fprint(pw, ",")
			}
			fmt.Fprintf(pw, conv, i, i, i)
			if i == 0 {
				fmt.Fprint(pw, " ") // end the first value, so the decoder can finish it
				<-firstSeen         // the rest is not written before the first is read
			}
		}
		fmt.Fprint(pw, "]")
		pw.Close()
	}()
	var got int
	st, err := importer.ReadChatGPT(pr, "", func(r importer.Record) error {
		if got == 0 {
			close(firstSeen)
		}
		got++
		return nil
	})
	if err != nil || got != n || st.Conversations != n {
		t.Fatalf("err %v, %d records, %+v", err, got, st)
	}
}

// TestReadChatGPTTimeOutOfRange: a message whose create_time is given but
// out of range (negative, or past the year 2255) is a bad record naming
// it, not a turn stamped with the import's time; one without a time takes
// its conversation's, and a conversation time out of range is reported on
// the messages that would take it.
func TestReadChatGPTTimeOutOfRange(t *testing.T) {
	msg := func(id string, ts string) string {
		return fmt.Sprintf(`%q:{"id":%q,"parent":"","children":[],"message":{"id":%q,"author":{"role":"user"},"create_time":%s,"content":{"content_type":"text","parts":["hello %s"]}}}`,
			id, id, id, ts, id)
	}
	conv := func(id, ts, current string, msgs ...string) string {
		return fmt.Sprintf(`{"id":%q,"create_time":%s,"current_node":%q,"mapping":{%s}}`, id, ts, current, strings.Join(msgs, ","))
	}
	in := "[" + conv("c1", "1700000000", "none", msg("good", "1700000001"), msg("neg", "-5"), msg("far", "253402300800"), msg("none", "null")) + "," +
		conv("c2", "99999999999", "inherits", msg("own", "1700000002"), msg("inherits", "null")) + "]"
	// Chain the messages: each is the parent of the next.
	in = strings.NewReplacer(
		`"neg","parent":""`, `"neg","parent":"good"`,
		`"far","parent":""`, `"far","parent":"neg"`,
		`"none","parent":""`, `"none","parent":"far"`,
		`"inherits","parent":""`, `"inherits","parent":"own"`).Replace(in)
	var recs []importer.Record
	if _, err := importer.ReadChatGPT(strings.NewReader(in), "", func(r importer.Record) error {
		recs = append(recs, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs)
	got := map[string]string{}
	for _, r := range recs {
		switch {
		case r.Err != nil:
			got[r.Where] = "error: " + r.Err.Error()
		case r.Skip != "":
			got[r.Where] = "skip: " + r.Skip
		default:
			got[r.Where] = "ts " + r.Turn.TS
		}
	}
	for where, want := range map[string]string{
		"conversation 1 (c1), message good":     "ts 2023-11-14T22:13:21Z",
		"conversation 1 (c1), message neg":      "error: create_time",
		"conversation 1 (c1), message far":      "error: create_time",
		"conversation 1 (c1), message none":     "ts 2023-11-14T22:13:20Z",
		"conversation 2 (c2), message own":      "ts 2023-11-14T22:13:22Z",
		"conversation 2 (c2), message inherits": "error: the conversation's create_time",
	} {
		if !strings.HasPrefix(got[where], want) {
			t.Errorf("%s: %q, want %q...", where, got[where], want)
		}
	}
	if len(got) != 6 {
		t.Errorf("records: %v", got)
	}
}
