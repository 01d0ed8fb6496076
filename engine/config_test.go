package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenAIConfig(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	cfg, err := LoadConfig(home, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Extractor != ExtractorNLP || cfg.OpenAIBaseURL != "https://api.openai.com/v1" || cfg.OpenAIModel != DefaultOpenAIModel ||
		cfg.OpenAIChatModel != DefaultOpenAIChatModel || cfg.OpenAIKeyEnv != DefaultOpenAIKeyEnv || cfg.OpenAIKey() != "" {
		t.Fatalf("defaults: %+v", cfg)
	}
	env["OPENAI_API_KEY"] = " sk-default \n"
	if cfg, _ = LoadConfig(home, getenv); cfg.OpenAIKey() != "sk-default" {
		t.Errorf("key from $OPENAI_API_KEY: %q", cfg.OpenAIKey())
	}
	if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte("embedder = \"openai\"\nextractor = \"openai\"\nopenai_api_key_env = \"LOCAL_LLM_KEY\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env["LOCAL_LLM_KEY"] = "sk-local"
	env["ENGRAM_OPENAI_BASE_URL"] = "http://127.0.0.1:8000/v1"
	env["ENGRAM_OPENAI_MODEL"] = "bge-small"
	env["ENGRAM_OPENAI_CHAT_MODEL"] = "qwen2.5-3b"
	cfg, err = LoadConfig(home, getenv)
	if err != nil {
		t.Fatal(err)
	}
	oc := cfg.OpenAIConfig(cfg.OpenAIChatModel)
	if cfg.OpenAIKey() != "sk-local" || oc.APIKey != "sk-local" || oc.KeyEnv != "LOCAL_LLM_KEY" || oc.BaseURL != "http://127.0.0.1:8000/v1" ||
		oc.Model != "qwen2.5-3b" || cfg.ModelKey() != "openai:bge-small" {
		t.Fatalf("config %+v, client config %+v", cfg, oc)
	}
	for in, want := range map[string]string{"openai": "openai:bge-small", "openai:text-embedding-3-large": "openai:text-embedding-3-large"} {
		if got, err := cfg.ParseModel(in); err != nil || got != want {
			t.Errorf("ParseModel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := cfg.ParseModel("openai:"); err == nil {
		t.Error("ParseModel(openai:) without a name")
	}
	if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte("openai_api_key = \"sk-in-a-file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(home, getenv); err == nil || strings.Contains(err.Error(), "sk-in-a-file") ||
		!strings.Contains(err.Error(), "never read from a file") {
		t.Errorf("a key in config.toml: %v", err)
	}
}

// TestResolveHome: --home, then $ENGRAM_HOME, then ~/.engram, absolute.
func TestResolveHome(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	wd, _ := os.Getwd()
	if got, err := ResolveHome("rel/home", getenv); err != nil || got != filepath.Join(wd, "rel/home") {
		t.Errorf("--home: %q, %v", got, err)
	}
	env["ENGRAM_HOME"] = "/srv/engram/"
	if got, err := ResolveHome("", getenv); err != nil || got != "/srv/engram" {
		t.Errorf("ENGRAM_HOME: %q, %v", got, err)
	}
	if got, _ := ResolveHome("/flag", getenv); got != "/flag" {
		t.Errorf("--home over ENGRAM_HOME: %q", got)
	}
	delete(env, "ENGRAM_HOME")
	if u, err := os.UserHomeDir(); err == nil {
		if got, err := ResolveHome("", getenv); err != nil || got != filepath.Join(u, ".engram") {
			t.Errorf("default: %q, %v", got, err)
		}
	}
}

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
		if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte(tc.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(home, func(k string) string {
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
