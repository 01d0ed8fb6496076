package config

import (
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/openai"
)

// Vector model names as the palace records them: the builtin embedder's own
// versioned name (e.g. "builtin-v1-512"), "ollama:" + the Ollama model, or
// "openai:" + the model of the OpenAI-compatible server.
const (
	OllamaPrefix = "ollama:"
	OpenAIPrefix = "openai:"
)

// ModelKey is the palace's name for the model the config asks for.
func (cfg Config) ModelKey() string {
	switch cfg.Embedder {
	case EmbedderBuiltin:
		return embedder.New().Model()
	case EmbedderOllama:
		return OllamaPrefix + cfg.OllamaModel
	case EmbedderOpenAI:
		return OpenAIPrefix + cfg.OpenAIModel
	}
	return ""
}

// ParseModel turns a --model argument (or POST /v1/reembed's model) into a
// model key: "builtin" (this engram's builtin embedder), "ollama" (the
// configured Ollama model), "ollama:NAME", and, only where the config names
// an OpenAI-compatible server (NamesOpenAI), "openai" and "openai:NAME".
// Anything else is EINVALID on field model, naming what is accepted.
func (cfg Config) ParseModel(s string) (string, error) {
	const want = "want builtin, ollama (the configured ollama_model), ollama:NAME, or openai:NAME where the config names an OpenAI-compatible server"
	switch {
	case s == "":
		if k := cfg.ModelKey(); k != "" {
			return k, nil
		}
		return "", engram.FieldError("model", "embedder is none in the config: name a model (builtin, or ollama:NAME)")
	case s == EmbedderBuiltin || s == embedder.New().Model():
		return embedder.New().Model(), nil
	case strings.HasPrefix(s, "builtin"):
		return "", engram.FieldError("model", "%q is not this engram's builtin embedder (builtin, %s); %s", s, embedder.New().Model(), want)
	case s == EmbedderOllama:
		return OllamaPrefix + cfg.OllamaModel, nil
	case s == EmbedderOpenAI || strings.HasPrefix(s, OpenAIPrefix):
		// Re-embedding sends every turn's text, with the API key, to the
		// server: never to one the operator did not configure.
		if !cfg.NamesOpenAI() {
			return "", engram.FieldError("model", "%q is a model of an OpenAI-compatible server, and config.toml names none: "+
				"set embedder = \"openai\" (and openai_base_url) there first; engram sends the turns to no server it was not given", s)
		}
		if s == EmbedderOpenAI {
			return OpenAIPrefix + cfg.OpenAIModel, nil
		}
		name := strings.TrimPrefix(s, OpenAIPrefix)
		if name == "" {
			return "", engram.FieldError("model", "openai: needs a model name, e.g. openai:%s", DefaultOpenAIModel)
		}
		if !modelName(name) {
			return "", engram.FieldError("model", "%q is not a model name (letters, digits, '.', '_', '-', ':' and '/', no \"..\")", name)
		}
		return s, nil
	case strings.HasPrefix(s, OllamaPrefix):
		name := strings.TrimPrefix(s, OllamaPrefix)
		if name == "" {
			return "", engram.FieldError("model", "ollama: needs a model name, e.g. ollama:bge-m3")
		}
		if !modelName(name) {
			return "", engram.FieldError("model", "%q is not an ollama model name (letters, digits, '.', '_', '-', '/' and a ':tag')", name)
		}
		return s, nil
	}
	return "", engram.FieldError("model", "unknown model %q: %s", s, want)
}

// modelName reports whether name may be a model's name on a server:
// letters, digits and "._-:/", no ".." (a name is sent in a request, and
// must not climb out of the server's path).
func modelName(name string) bool {
	return len(name) <= engram.DefaultMaxFieldBytes && !strings.Contains(name, "..") &&
		strings.IndexFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-:/", r))
		}) < 0
}

// NamesOpenAI reports whether the config names an OpenAI-compatible server:
// the embedder or the extractor is openai, or openai_base_url is set to
// another server than the default one.
func (cfg Config) NamesOpenAI() bool {
	return cfg.Embedder == EmbedderOpenAI || cfg.Extractor == ExtractorOpenAI ||
		cfg.OpenAIBaseURL != "" && cfg.OpenAIBaseURL != openai.DefaultBaseURL
}
