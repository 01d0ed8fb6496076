package httpapi_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/httpapi"
)

// TestReembedModelChecked: POST /v1/reembed checks the model before the
// 202. A model of an OpenAI-compatible server is refused (400 naming
// model) where the config names no such server, so that the turns never go
// to a hosted endpoint the operator did not configure; a bad name is
// refused everywhere; a configured server that does not answer is 503.
func TestReembedModelChecked(t *testing.T) {
	s, _ := mustOpenEngineStack(t, httpapi.Config{})
	for _, model := range []string{"openai:x", "openai", "openai: ", "openai:../../x", "openai:", "ollama:../../x"} {
		code, out := s.do(t, "POST", "/v1/reembed", []byte(fmt.Sprintf(`{"model":%q}`, model)))
		if e, _ := out["error"].(map[string]any); code != 400 || e["field"] != "model" {
			t.Errorf("default config, model %q: %d %v, want 400 naming model", model, code, out)
		}
	}
	if code, out := s.do(t, "GET", "/v1/health", nil); code != 200 || out["reembed"] != nil {
		t.Errorf("a refused re-embed shows in health: %v", out)
	}

	// A configured server (on a loopback port where nothing listens).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	s2, _ := mustOpenEngineStackWith(t, httpapi.Config{}, func(c *config.Config) { c.OpenAIBaseURL = base })
	for _, model := range []string{"openai:../../x", "openai: "} {
		code, out := s2.do(t, "POST", "/v1/reembed", []byte(fmt.Sprintf(`{"model":%q}`, model)))
		if e, _ := out["error"].(map[string]any); code != 400 || e["field"] != "model" {
			t.Errorf("configured server, model %q: %d %v, want 400 naming model", model, code, out)
		}
	}
	code, out := s2.do(t, "POST", "/v1/reembed", []byte(`{"model":"openai:text-embedding-3-small"}`))
	if code != 503 || !strings.Contains(fmt.Sprint(out), "unavailable") {
		t.Errorf("configured server that does not answer: %d %v, want 503 before any 202", code, out)
	}
}
