package config

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
