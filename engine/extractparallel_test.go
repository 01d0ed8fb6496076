package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/config"
)

// TestExtractParallel: extract_parallel (or ENGRAM_EXTRACT_PARALLEL)
// bounds the batches the memory job extracts at once; left at 0, the
// chat-model extractors send one prompt at a time and the offline ones
// take the memory job's default; a negative value is refused by name.
func TestExtractParallel(t *testing.T) {
	for _, tc := range []struct {
		toml, env string
		want      int // the engine's bound; -1: the config is refused
	}{
		{"", "", 0},
		{"extractor = \"rules\"\nextract_parallel = 3\n", "", 3},
		{"extractor = \"openai\"\n", "", 1},
		{"extractor = \"ollama\"\n", "", 1},
		{"extractor = \"openai\"\nextract_parallel = 8\n", "", 8},
		{"extractor = \"ollama\"\n", "6", 6},
		{"extract_parallel = -1\n", "", -1},
		{"", "many", -1},
	} {
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, config.ConfigFile), []byte(tc.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.LoadConfig(home, func(k string) string {
			if k == "ENGRAM_EXTRACT_PARALLEL" {
				return tc.env
			}
			return ""
		})
		if tc.want < 0 {
			if err == nil || !strings.Contains(err.Error(), "PARALLEL") && !strings.Contains(err.Error(), "extract_parallel") {
				t.Errorf("%q env %q: %v; want an error naming extract_parallel", tc.toml, tc.env, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q env %q: %v", tc.toml, tc.env, err)
		}
		e := &Engine{cfg: cfg}
		if err := e.openExtractor(); err != nil {
			t.Fatal(err)
		}
		if e.extractParallel != tc.want {
			t.Errorf("%q env %q: %d batches at once, want %d", tc.toml, tc.env, e.extractParallel, tc.want)
		}
	}
}
