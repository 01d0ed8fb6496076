package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/engine"
)

// TestOpenAIConfigErrors: the key is never read from config.toml, and the
// openai settings are checked as the configuration loads, before anything
// starts.
func TestOpenAIConfigErrors(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"openai_api_key = \"sk-x\"\n", "the API key is never read from a file"},
		{"embedder = \"openai\"\nopenai_base_url = \"api.example.com\"\n", "openai_base_url:"},
		{"extractor = \"openai\"\nopenai_api_key_env = \"MY-KEY\"\n", `openai_api_key_env "MY-KEY"`},
		{"extractor = \"openai\"\nopenai_chat_model = \" \"\n", "openai_chat_model must name a chat model"},
		{"embedder = \"opneai\"\n", "want builtin, ollama, openai or none"},
	} {
		home := filepath.Join(t.TempDir(), "home")
		writeConfig(t, home, tc.toml)
		if _, err := engine.LoadConfig(home, noEnv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.toml, err, tc.want)
		}
	}
}
