package layertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-dev/engram"
)

// LoCoMoTurns reads the turns of the LoCoMo development set (every
// session_N of every file, a minute apart from the session's date_time),
// or skips when shared/bench/locomo-dev is not in the working folder or
// one above it.
func LoCoMoTurns(tb testing.TB) []engram.Turn {
	tb.Helper()
	var files []string
	for dir, _ := filepath.Abs("."); ; dir = filepath.Dir(dir) {
		files, _ = filepath.Glob(filepath.Join(dir, "shared", "bench", "locomo-dev", "*.json"))
		if len(files) > 0 || dir == filepath.Dir(dir) {
			break
		}
	}
	if len(files) == 0 {
		tb.Skip("the LoCoMo development set (shared/bench/locomo-dev) is not in a folder above")
	}
	var turns []engram.Turn
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var conv map[string]json.RawMessage
		if err := json.Unmarshal(data, &conv); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for s := 1; ; s++ {
			raw, ok := conv[fmt.Sprintf("session_%d", s)]
			if !ok {
				break
			}
			var when string
			_ = json.Unmarshal(conv[fmt.Sprintf("session_%d_date_time", s)], &when)
			ts, err := time.ParseInLocation("3:04 pm on 2 January, 2006", when, time.UTC)
			if err != nil {
				tb.Fatalf("%s session %d: %v", f, s, err)
			}
			var session []struct{ Speaker, Text string }
			if err := json.Unmarshal(raw, &session); err != nil {
				tb.Fatalf("%s session %d: %v", f, s, err)
			}
			for i, t := range session {
				turns = append(turns, engram.Turn{ID: fmt.Sprintf("%s-%d-%d", filepath.Base(f), s, i), Namespace: filepath.Base(f),
					Session: fmt.Sprintf("session_%d", s), Role: engram.RoleUser, Speaker: t.Speaker, Content: t.Text,
					TS: ts.Add(time.Duration(i) * time.Minute)})
			}
		}
	}
	return turns
}
