package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram/config"
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
		if _, err := config.LoadConfig(home, noEnv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.toml, err, tc.want)
		}
	}
}

func noEnv(string) string { return "" }

// writeConfig writes home's config.toml.
func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, config.ConfigFile), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}
