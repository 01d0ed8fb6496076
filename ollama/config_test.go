package ollama

import (
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

func TestParseHost(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"127.0.0.1:11434", "http://127.0.0.1:11434"},
		{"  localhost:8080 ", "http://localhost:8080"},
		{"example.internal", "http://example.internal:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"[::1]:11435", "http://[::1]:11435"},
		{"::1", "http://[::1]:11434"},
		{"[::1]", "http://[::1]:11434"},
		{"http://gpu-box", "http://gpu-box:80"},
		{"https://gpu-box", "https://gpu-box:443"},
		{"http://gpu-box:11434", "http://gpu-box:11434"},
		{"https://proxy.lan/ollama", "https://proxy.lan:443/ollama"},
	} {
		u, err := ParseHost(tc.in)
		if err != nil {
			t.Errorf("ParseHost(%q): %v", tc.in, err)
			continue
		}
		if u.String() != tc.want {
			t.Errorf("ParseHost(%q) = %q, want %q", tc.in, u, tc.want)
		}
	}
	for _, in := range []string{"", "   ", "ftp://host", "host:0", "host:70000", "host:port", ":11434", "http://", "a b:1", "user@host:1"} {
		_, err := ParseHost(in)
		if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != "ollama.host" {
			t.Errorf("ParseHost(%q) = %v, want EINVALID on ollama.host", in, err)
		}
	}
}

func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1:11434", "http://h", "https://h:1/p", "[::1]", "ftp://x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseHost(s)
		if err != nil {
			if engram.ErrorCode(err) != engram.EINVALID {
				t.Fatalf("ParseHost(%q): %v is not EINVALID", s, err)
			}
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" {
			t.Fatalf("ParseHost(%q) = %q: want http(s)://host:port", s, u)
		}
	})
}

func TestNewEmbedder_Defaults(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	e, err := NewEmbedder(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Host() != "http://"+DefaultHost || e.Model() != DefaultModel || e.Dim() != 0 {
		t.Fatalf("defaults: host %s, model %s, dim %d", e.Host(), e.Model(), e.Dim())
	}
	if e.cfg.BatchSize != DefaultBatchSize || e.cfg.Timeout != DefaultTimeout ||
		e.cfg.MaxRetries != DefaultMaxRetries || e.cfg.RetryDelay != DefaultRetryDelay {
		t.Fatalf("defaults: %+v", e.cfg)
	}

	t.Setenv("OLLAMA_HOST", "10.1.2.3:4567")
	if e, err = NewEmbedder(Config{Model: "nomic-embed-text"}); err != nil {
		t.Fatal(err)
	}
	if e.Host() != "http://10.1.2.3:4567" || e.Model() != "nomic-embed-text" {
		t.Fatalf("from OLLAMA_HOST: host %s, model %s", e.Host(), e.Model())
	}
	if e, err = NewEmbedder(Config{Host: "127.0.0.1:1", MaxRetries: -1}); err != nil {
		t.Fatal(err)
	}
	if e.Host() != "http://127.0.0.1:1" || e.cfg.MaxRetries != 0 {
		t.Fatalf("Config.Host must win over OLLAMA_HOST and MaxRetries -1 mean none: %s, %d", e.Host(), e.cfg.MaxRetries)
	}

	t.Setenv("OLLAMA_HOST", "http://bad:port")
	if _, err := NewEmbedder(Config{}); engram.ErrorField(err) != "ollama.host" || !strings.Contains(err.Error(), "bad:port") {
		t.Fatalf("a bad OLLAMA_HOST: %v, want EINVALID naming it", err)
	}
}

func TestNewEmbedder_Invalid(t *testing.T) {
	for _, tc := range []struct {
		cfg   Config
		field string
	}{
		{Config{Host: "ftp://x"}, "ollama.host"},
		{Config{BatchSize: -1}, "ollama.batch_size"},
		{Config{Timeout: -time.Second}, "ollama.timeout"},
		{Config{RetryDelay: -time.Second}, "ollama.retry_delay"},
	} {
		_, err := NewEmbedder(tc.cfg)
		if engram.ErrorCode(err) != engram.EINVALID || engram.ErrorField(err) != tc.field {
			t.Errorf("NewEmbedder(%+v) = %v, want EINVALID on %s", tc.cfg, err, tc.field)
		}
	}
}
