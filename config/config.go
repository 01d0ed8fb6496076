// Package config reads the engine's configuration: the defaults, then
// <home>/config.toml, then the ENGRAM_* environment variables, validated
// as they load so that a bad setting is named before anything starts. The
// layers above the engine (package server) keep their settings in the same
// file and decode them there.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/ollama"
	"github.com/engram-dev/engram/openai"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
)

// Config is the engine's configuration: defaults, then <home>/config.toml,
// then ENGRAM_* environment variables, then flags. The settings of the
// transports above the engine (the HTTP address, token and limits) are in
// the same file but not here: package server owns them.
type Config struct {
	Home string `toml:"-"`
	// Version is the running engram's version, for /v1/health, backups and
	// MCP clients; set by the command, never by the file.
	Version string `toml:"-"`
	// BackgroundLoad has Open load the embedded vector index in the
	// background (recall answers by keyword meanwhile); set by the server
	// (server.Start), so it answers at once at any size, never by the file.
	BackgroundLoad bool `toml:"-"`

	// Store is where the L0 archive lives: "files" (JSONL day files in the
	// home, the default) or "postgres" (a table of the PostgreSQL database
	// at $ENGRAM_POSTGRES_URL, shared by several servers; each keeps its
	// palace in its own home, derived from it).
	Store string `toml:"store"`
	// Palace is where the palace lives: "home" (the SQLite file in the
	// home, the default: each server its own, derived from the archive)
	// or "postgres" (tables of the archive's database: one palace every
	// server shares; with store = "postgres" only).
	Palace string `toml:"palace"`
	// postgresURL is the database's URL, read from EnvPostgresURL by
	// LoadConfig: never from a file, which would hold its password.
	postgresURL string

	// MaxContentBytes limits one turn's content.
	MaxContentBytes int `toml:"max_content_bytes"`
	// MaxBatch limits the turns of one request.
	MaxBatch int `toml:"max_batch"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `toml:"log_level"`

	// Embedder is "builtin" (offline, the default), "ollama", "openai" (an
	// OpenAI-compatible server) or "none" (keyword recall only).
	Embedder string `toml:"embedder"`
	// OllamaHost is the Ollama server; "" means $OLLAMA_HOST, else
	// 127.0.0.1:11434.
	OllamaHost string `toml:"ollama_host"`
	// OllamaModel is the embedding model served by Ollama.
	OllamaModel string `toml:"ollama_model"`
	// VectorIndex is "embedded" (in process, the default) or "chroma".
	VectorIndex string `toml:"vector_index"`
	// ChromaURL is the ChromaDB server when VectorIndex is "chroma".
	ChromaURL string `toml:"chroma_url"`
	// ChromaDatabase is the Chroma database (created if missing); "" is
	// Chroma's default database.
	ChromaDatabase string `toml:"chroma_database"`

	// Extractor makes the L1 memories: "nlp" (offline, a part-of-speech
	// parse; the default), "rules" (offline, the earlier regular
	// expressions), "ollama" (a chat model on OllamaHost), "openai" (a chat
	// model on an OpenAI-compatible server) or "none" (no derived layers).
	Extractor string `toml:"extractor"`
	// ExtractParallel bounds the batches the memory job extracts at once:
	// 0 means one a background worker for the offline extractors (a core
	// is left to requests), one for the chat-model extractors, whose
	// server may answer one prompt at a time (raise it for one that
	// serves several, as vLLM or a hosted API do).
	ExtractParallel int `toml:"extract_parallel"`
	// OllamaChatModel is the chat model of the ollama extractor.
	OllamaChatModel string `toml:"ollama_chat_model"`

	// OpenAIBaseURL is the OpenAI-compatible server of the openai embedder
	// and extractor, up to the version: a hosted API, vLLM, llama.cpp's
	// server, LM Studio, Ollama's /v1.
	OpenAIBaseURL string `toml:"openai_base_url"`
	// OpenAIModel is the embedding model of the openai embedder.
	OpenAIModel string `toml:"openai_model"`
	// OpenAIChatModel is the chat model of the openai extractor.
	OpenAIChatModel string `toml:"openai_chat_model"`
	// OpenAIKeyEnv names the environment variable that holds the API key.
	// The key itself is never read from config.toml, nor written anywhere.
	OpenAIKeyEnv string `toml:"openai_api_key_env"`
	// openAIKey is the key, read from the environment by LoadConfig.
	openAIKey string
	// Jobs sets job intervals by job name, e.g. "l1-memories" = "5m".
	Jobs map[string]string `toml:"jobs"`
	// Vaults are the Markdown folders engram indexes (`engram vault add`).
	Vaults []VaultConfig `toml:"vaults"`
	// WatchVaults makes `engram serve` sync a vault a moment after its
	// files change (fsnotify, debounced); the hook and the reconcile job
	// work either way.
	WatchVaults bool `toml:"watch_vaults"`
	// RedactSecrets replaces well-known secret shapes (engram.SecretRules:
	// API keys, tokens, private keys) in every turn's content before it is
	// archived.
	RedactSecrets bool `toml:"redact_secrets"`

	// Triggers are the phrases that make auto recall run deep; empty means
	// the built-in English, Chinese and Japanese list.
	Triggers []string `toml:"triggers"`
	// Deep tunes the deep recall path.
	Deep DeepSettings `toml:"deep"`
}

// VaultConfig is one [[vaults]] entry of config.toml.
type VaultConfig struct {
	Path      string `toml:"path"`      // absolute
	Namespace string `toml:"namespace"` // default "default"
}

// DeepSettings is the [deep] table of config.toml. Zero values mean the
// defaults; a negative weight switches a signal off.
type DeepSettings struct {
	Fusion          string  `toml:"fusion"` // product, sum or rrf
	VectorWeight    float64 `toml:"vector_weight"`
	BM25Weight      float64 `toml:"bm25_weight"`
	SessionWeight   float64 `toml:"session_weight"`
	SceneWeight     float64 `toml:"scene_weight"`
	NeighbourWeight float64 `toml:"neighbour_weight"`
	LayerWeight     float64 `toml:"layer_weight"`   // memories and scenes citing a turn
	KGWeight        float64 `toml:"kg_weight"`      // knowledge-graph triples citing a turn
	PersonaWeight   float64 `toml:"persona_weight"` // persona facets of the set a question asks for citing a turn
	HalfLifeDays    float64 `toml:"half_life_days"` // negative: no time decay
	DecayFloor      float64 `toml:"decay_floor"`
	Candidates      int     `toml:"candidates"`
	Neighbours      int     `toml:"neighbours"`        // context turns on each side of a deep hit; negative: none
	UnitTurns       int     `toml:"unit_turns"`        // the best sessions and scenes whose turns join the candidates; negative: none
	BurstTurns      int     `toml:"burst_turns"`       // turns of a hit's burst on each side that join its result (deep and hybrid); negative: none
	SessionSpread   float64 `toml:"session_spread"`    // share of a deep candidate's score lost per better result of its session; negative: none
	TimeWeight      float64 `toml:"time_weight"`       // nearness to the period a time expression of the query names; negative: none
	PeriodReachDays float64 `toml:"period_reach_days"` // days around that period whose turns are its candidates too; negative: none
	SpeakerWeight   float64 `toml:"speaker_weight"`    // a turn whose speaker the query names; negative: none
	RM3Weight       float64 `toml:"rm3_weight"`        // relevance feedback; off unless positive
	ExpansionWeight float64 `toml:"expansion_weight"`  // word-vector neighbours of rare query words; off unless positive
}

// Recall is the deep path's configuration of recall.
func (d DeepSettings) Recall() recall.DeepConfig {
	c := recall.DeepConfig{
		Fusion: d.Fusion, VectorWeight: d.VectorWeight, BM25Weight: d.BM25Weight, SessionWeight: d.SessionWeight,
		SceneWeight: d.SceneWeight, UnitTurns: d.UnitTurns, RM3Weight: d.RM3Weight, ExpansionWeight: d.ExpansionWeight, NeighbourWeight: d.NeighbourWeight, LayerWeight: d.LayerWeight, KGWeight: d.KGWeight, PersonaWeight: d.PersonaWeight, DecayFloor: d.DecayFloor, Candidates: d.Candidates, Neighbours: d.Neighbours,
		BurstTurns: d.BurstTurns, SessionSpread: d.SessionSpread, TimeWeight: d.TimeWeight, SpeakerWeight: d.SpeakerWeight,
	}
	if d.HalfLifeDays != 0 {
		c.HalfLife = time.Duration(d.HalfLifeDays * 24 * float64(time.Hour))
	}
	if d.PeriodReachDays != 0 {
		c.PeriodReach = time.Duration(d.PeriodReachDays * 24 * float64(time.Hour))
	}
	return c
}

// Embedder and vector index choices.
const (
	EmbedderBuiltin  = "builtin"
	EmbedderOllama   = "ollama"
	EmbedderOpenAI   = "openai"
	EmbedderNone     = "none"
	VectorsEmbedded  = "embedded"
	VectorsChroma    = "chroma"
	ExtractorNLP     = "nlp"
	ExtractorRules   = "rules"
	ExtractorOllama  = "ollama"
	ExtractorOpenAI  = "openai"
	ExtractorNone    = "none"
	DefaultChromaURL = "http://127.0.0.1:8000"

	// Defaults of the openai embedder and extractor: OpenAI's API and its
	// small models; any OpenAI-compatible server by its base URL.
	DefaultOpenAIModel     = "text-embedding-3-small"
	DefaultOpenAIChatModel = "gpt-4o-mini"
	DefaultOpenAIKeyEnv    = "OPENAI_API_KEY"
)

// The stores of the archive.
const (
	StoreFiles    = "files"
	StorePostgres = "postgres"
	// EnvPostgresURL names the environment variable the PostgreSQL URL
	// (postgres://user:password@host:port/database) comes from.
	EnvPostgresURL = "ENGRAM_POSTGRES_URL"
)

// Where the palace lives.
const (
	PalaceHome     = "home"
	PalacePostgres = "postgres"
)

// ConfigFile is the name of the config file in the home.
const ConfigFile = "config.toml"

// DefaultConfig returns the defaults, before config.toml and the
// environment.
func DefaultConfig() Config {
	return Config{
		MaxContentBytes: engram.DefaultMaxContentBytes,
		MaxBatch:        engram.DefaultMaxBatch,
		LogLevel:        "info",
		Store:           StoreFiles,
		Palace:          PalaceHome,
		Embedder:        EmbedderBuiltin,
		OllamaModel:     ollama.DefaultModel,
		VectorIndex:     VectorsEmbedded,
		ChromaURL:       DefaultChromaURL,
		Extractor:       ExtractorNLP,
		WatchVaults:     true,
		OllamaChatModel: ollama.DefaultChatModel,
		OpenAIBaseURL:   openai.DefaultBaseURL,
		OpenAIModel:     DefaultOpenAIModel,
		OpenAIChatModel: DefaultOpenAIChatModel,
		OpenAIKeyEnv:    DefaultOpenAIKeyEnv,
	}
}

// OpenAIKey returns the API key of the openai embedder and extractor, as
// read from the environment variable OpenAIKeyEnv names; "" when unset.
func (c Config) OpenAIKey() string { return c.openAIKey }

// PostgresURL returns the URL of the archive's database when Store is
// "postgres", as read from EnvPostgresURL; "" when unset.
func (c Config) PostgresURL() string { return c.postgresURL }

// WithPostgresURL returns c with the archive's database at url (for
// commands that take it from a flag, and tests).
func (c Config) WithPostgresURL(url string) Config {
	c.postgresURL = url
	return c
}

// ResolveHome names the home: dir (--home) if given, else $ENGRAM_HOME as
// getenv returns it, else ~/.engram; made absolute.
func ResolveHome(dir string, getenv func(string) string) (string, error) {
	if dir == "" {
		dir = getenv("ENGRAM_HOME")
	}
	if dir == "" {
		u, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --home given, ENGRAM_HOME unset, and no user home directory: %w", err)
		}
		dir = filepath.Join(u, ".engram")
	}
	return filepath.Abs(dir)
}

// LoadConfig reads the configuration of home: the defaults, then
// home/config.toml (a missing file is no error; an unknown setting is), then
// the ENGRAM_* variables getenv returns, validated. It does not create the
// home.
//
// more are pointers to structs (with toml tags) of the settings that the
// layers above the engine keep in the same file (package server's address
// and limits): each is decoded from the file too, and a key is unknown
// when neither Config nor one of them has it. Their defaults, environment
// variables and validation are theirs.
func LoadConfig(home string, getenv func(string) string, more ...any) (Config, error) {
	return loadConfig(home, getenv, more, true)
}

// loadConfig is LoadConfig; unknown keys are an error only when strict.
func loadConfig(home string, getenv func(string) string, more []any, strict bool) (Config, error) {
	cfg := DefaultConfig()
	cfg.Home = home
	path := filepath.Join(home, ConfigFile)
	md, err := toml.DecodeFile(path, &cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return cfg, fmt.Errorf("read %s: %w", path, err)
	default:
		und := md.Undecoded()
		for _, m := range more {
			mmd, err := toml.DecodeFile(path, m)
			if err != nil {
				return cfg, fmt.Errorf("read %s: %w", path, err)
			}
			und = slices.DeleteFunc(und, func(k toml.Key) bool {
				return !slices.ContainsFunc(mmd.Undecoded(), func(u toml.Key) bool { return u.String() == k.String() })
			})
		}
		if len(und) > 0 && strict {
			if k := und[0].String(); k == "openai_api_key" || k == "api_key" {
				return cfg, fmt.Errorf("%s: %s: the API key is never read from a file; put it in the environment variable openai_api_key_env names (default %s)",
					path, k, DefaultOpenAIKeyEnv)
			}
			if k := und[0].String(); strings.HasPrefix(k, "postgres") {
				return cfg, fmt.Errorf("%s: %s: the PostgreSQL URL and its password are never read from a file; set %s to postgres://user:password@host:port/database",
					path, k, EnvPostgresURL)
			}
			return cfg, fmt.Errorf("%s: unknown setting %q", path, und[0].String())
		}
	}
	if err := applyEnv(&cfg, getenv); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// applyEnv overrides cfg with the ENGRAM_* variables.
func applyEnv(cfg *Config, getenv func(string) string) error {
	for _, e := range []struct {
		name string
		dst  *string
	}{
		{"ENGRAM_LOG_LEVEL", &cfg.LogLevel},
		{"ENGRAM_STORE", &cfg.Store},
		{"ENGRAM_PALACE", &cfg.Palace},
		{"ENGRAM_EMBEDDER", &cfg.Embedder},
		{"ENGRAM_OLLAMA_HOST", &cfg.OllamaHost},
		{"ENGRAM_OLLAMA_MODEL", &cfg.OllamaModel},
		{"ENGRAM_VECTOR_INDEX", &cfg.VectorIndex},
		{"ENGRAM_CHROMA_URL", &cfg.ChromaURL},
		{"ENGRAM_CHROMA_DATABASE", &cfg.ChromaDatabase},
		{"ENGRAM_EXTRACTOR", &cfg.Extractor},
		{"ENGRAM_OLLAMA_CHAT_MODEL", &cfg.OllamaChatModel},
		{"ENGRAM_OPENAI_BASE_URL", &cfg.OpenAIBaseURL},
		{"ENGRAM_OPENAI_MODEL", &cfg.OpenAIModel},
		{"ENGRAM_OPENAI_CHAT_MODEL", &cfg.OpenAIChatModel},
		{"ENGRAM_OPENAI_API_KEY_ENV", &cfg.OpenAIKeyEnv},
	} {
		if v := getenv(e.name); v != "" {
			*e.dst = v
		}
	}
	if envName.MatchString(cfg.OpenAIKeyEnv) {
		cfg.openAIKey = strings.TrimSpace(getenv(cfg.OpenAIKeyEnv))
	}
	cfg.postgresURL = strings.TrimSpace(getenv(EnvPostgresURL))
	if v := getenv("ENGRAM_REDACT_SECRETS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("ENGRAM_REDACT_SECRETS=%q: want true or false", v)
		}
		cfg.RedactSecrets = b
	}
	if v := getenv("ENGRAM_DEEP_FUSION"); v != "" {
		cfg.Deep.Fusion = v
	}
	for _, e := range []struct {
		name string
		dst  *float64
	}{
		{"ENGRAM_DEEP_VECTOR_WEIGHT", &cfg.Deep.VectorWeight},
		{"ENGRAM_DEEP_BM25_WEIGHT", &cfg.Deep.BM25Weight},
		{"ENGRAM_DEEP_SESSION_WEIGHT", &cfg.Deep.SessionWeight},
		{"ENGRAM_DEEP_SCENE_WEIGHT", &cfg.Deep.SceneWeight},
		{"ENGRAM_DEEP_RM3_WEIGHT", &cfg.Deep.RM3Weight},
		{"ENGRAM_DEEP_EXPANSION_WEIGHT", &cfg.Deep.ExpansionWeight},
		{"ENGRAM_DEEP_NEIGHBOUR_WEIGHT", &cfg.Deep.NeighbourWeight},
		{"ENGRAM_DEEP_LAYER_WEIGHT", &cfg.Deep.LayerWeight},
		{"ENGRAM_DEEP_KG_WEIGHT", &cfg.Deep.KGWeight},
		{"ENGRAM_DEEP_PERSONA_WEIGHT", &cfg.Deep.PersonaWeight},
		{"ENGRAM_DEEP_SESSION_SPREAD", &cfg.Deep.SessionSpread},
		{"ENGRAM_DEEP_TIME_WEIGHT", &cfg.Deep.TimeWeight},
		{"ENGRAM_DEEP_SPEAKER_WEIGHT", &cfg.Deep.SpeakerWeight},
		{"ENGRAM_DEEP_HALF_LIFE_DAYS", &cfg.Deep.HalfLifeDays},
		{"ENGRAM_DEEP_PERIOD_REACH_DAYS", &cfg.Deep.PeriodReachDays},
		{"ENGRAM_DEEP_DECAY_FLOOR", &cfg.Deep.DecayFloor},
	} {
		if v := getenv(e.name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s=%q is not a number", e.name, v)
			}
			*e.dst = f
		}
	}
	for _, e := range []struct {
		name string
		dst  *int
	}{
		{"ENGRAM_MAX_CONTENT_BYTES", &cfg.MaxContentBytes},
		{"ENGRAM_MAX_BATCH", &cfg.MaxBatch},
		{"ENGRAM_DEEP_CANDIDATES", &cfg.Deep.Candidates},
		{"ENGRAM_DEEP_UNIT_TURNS", &cfg.Deep.UnitTurns},
		{"ENGRAM_DEEP_BURST_TURNS", &cfg.Deep.BurstTurns},
		{"ENGRAM_EXTRACT_PARALLEL", &cfg.ExtractParallel},
	} {
		v := getenv(e.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%s=%q is not an integer", e.name, v)
		}
		*e.dst = int(n)
	}
	return nil
}

// Validate checks every setting and names the first bad one.
func (c Config) Validate() error {
	if c.MaxContentBytes <= 0 {
		return fmt.Errorf("max_content_bytes must be positive, got %d", c.MaxContentBytes)
	}
	if c.MaxBatch <= 0 {
		return fmt.Errorf("max_batch must be positive, got %d", c.MaxBatch)
	}
	if _, err := ParseLevel(c.LogLevel); err != nil {
		return err
	}
	switch c.Store {
	case StoreFiles:
	case StorePostgres:
		if c.postgresURL == "" {
			return fmt.Errorf("store \"postgres\" needs the database's URL in %s (postgres://user:password@host:port/database)", EnvPostgresURL)
		}
	default:
		return fmt.Errorf("store %q: want files or postgres", c.Store)
	}
	switch c.Palace {
	case PalaceHome:
	case PalacePostgres:
		if c.Store != StorePostgres {
			return fmt.Errorf("palace \"postgres\" needs store = \"postgres\": the palace is kept in the archive's database")
		}
	default:
		return fmt.Errorf("palace %q: want home or postgres", c.Palace)
	}
	switch c.Embedder {
	case EmbedderBuiltin, EmbedderOllama, EmbedderOpenAI, EmbedderNone:
	default:
		return fmt.Errorf("embedder %q: want builtin, ollama, openai or none", c.Embedder)
	}
	if c.Embedder == EmbedderOllama && strings.TrimSpace(c.OllamaModel) == "" {
		return fmt.Errorf("ollama_model must name a model (e.g. %s)", ollama.DefaultModel)
	}
	switch c.VectorIndex {
	case VectorsEmbedded, VectorsChroma:
	default:
		return fmt.Errorf("vector_index %q: want embedded or chroma", c.VectorIndex)
	}
	if c.VectorIndex == VectorsChroma && c.Palace == PalacePostgres {
		// The palace's record of what was pushed to Chroma is one for
		// every server, and a forget reaches the shared palace once, so
		// a Chroma database of each server's would miss vectors and keep
		// forgotten ones; a Chroma shared by the servers needs its sync
		// and deletes in one order, on one server at a time, which is
		// not built.
		return fmt.Errorf("vector_index = \"chroma\" does not work with palace = \"postgres\" yet: the vectors are then in the database and each server scores them in process (vector_index = \"embedded\"); for Chroma, keep palace = \"home\"")
	}
	switch c.Extractor {
	case ExtractorNLP, ExtractorRules, ExtractorOllama, ExtractorOpenAI, ExtractorNone:
	default:
		return fmt.Errorf("extractor %q: want nlp, rules, ollama, openai or none", c.Extractor)
	}
	if c.ExtractParallel < 0 {
		return fmt.Errorf("extract_parallel must be 0 (the default) or more, got %d", c.ExtractParallel)
	}
	if c.Extractor == ExtractorOllama && strings.TrimSpace(c.OllamaChatModel) == "" {
		return fmt.Errorf("ollama_chat_model must name a chat model (e.g. %s)", ollama.DefaultChatModel)
	}
	if c.Embedder == EmbedderOpenAI || c.Extractor == ExtractorOpenAI {
		if _, err := openai.ParseBaseURL(c.OpenAIBaseURL); err != nil {
			return fmt.Errorf("openai_base_url: %s", engram.ErrorMessage(err))
		}
		if !envName.MatchString(c.OpenAIKeyEnv) {
			return fmt.Errorf("openai_api_key_env %q: want the name of an environment variable, such as %s", c.OpenAIKeyEnv, DefaultOpenAIKeyEnv)
		}
	}
	if c.Embedder == EmbedderOpenAI && strings.TrimSpace(c.OpenAIModel) == "" {
		return fmt.Errorf("openai_model must name an embedding model (e.g. %s)", DefaultOpenAIModel)
	}
	if c.Extractor == ExtractorOpenAI && strings.TrimSpace(c.OpenAIChatModel) == "" {
		return fmt.Errorf("openai_chat_model must name a chat model (e.g. %s)", DefaultOpenAIChatModel)
	}
	if _, err := c.JobIntervals(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, v := range c.Vaults {
		if !filepath.IsAbs(v.Path) {
			return fmt.Errorf("vaults[%d].path %q must be an absolute path", i, v.Path)
		}
		if seen[filepath.Clean(v.Path)] {
			return fmt.Errorf("vaults[%d].path %q is listed twice", i, v.Path)
		}
		seen[filepath.Clean(v.Path)] = true
	}
	if err := c.Deep.Recall().Validate(); err != nil {
		return err
	}
	if _, err := c.TriggerMatcher(); err != nil {
		return err
	}
	return nil
}

// envName is what an environment variable's name may be.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// OpenAIConfig is the configuration of an openai client for model, with the
// key from the environment.
func (c Config) OpenAIConfig(model string) openai.Config {
	return openai.Config{BaseURL: c.OpenAIBaseURL, Model: model, APIKey: c.openAIKey, KeyEnv: c.OpenAIKeyEnv}
}

// Limits are the request limits of the configuration.
func (c Config) Limits() engram.Limits {
	return engram.Limits{MaxContentBytes: c.MaxContentBytes, MaxBatch: c.MaxBatch}.WithDefaults()
}

// ParseLevel reads a log_level.
func ParseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(s))); err != nil {
		return l, fmt.Errorf("log_level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// TriggerMatcher builds the matcher of the configured trigger phrases.
func (c Config) TriggerMatcher() (*recall.TriggerMatcher, error) {
	phrases := c.Triggers
	if len(phrases) == 0 {
		phrases = recall.DefaultTriggers()
	}
	m, err := recall.NewTriggerMatcher(phrases)
	if err != nil {
		return nil, fmt.Errorf("triggers: %w", err)
	}
	return m, nil
}

// Names of the maintenance jobs; the layer workers' jobs take the workers'
// names (pipeline.WorkerMemories and so on).
const (
	JobVerify   = "archive-verify"
	JobCompact  = "index-compact"
	JobSnapshot = "health-snapshot"
	// JobVaultReconcile syncs every configured vault: what a git hook or
	// a missed event did not.
	JobVaultReconcile = "vault-reconcile"
)

// Default job intervals; [jobs] in config.toml overrides them by name.
var defaultJobIntervals = map[string]time.Duration{
	JobVerify:                   24 * time.Hour,
	JobCompact:                  6 * time.Hour,
	JobSnapshot:                 time.Hour,
	pipeline.WorkerMemories:     5 * time.Minute,
	pipeline.WorkerScenes:       5 * time.Minute,
	pipeline.WorkerPersona:      10 * time.Minute,
	pipeline.WorkerGraph:        10 * time.Minute,
	pipeline.WorkerLayerVectors: 5 * time.Minute,
	JobVaultReconcile:           15 * time.Minute,
}

// minJobInterval keeps a typo ("1s") from running a job back to back.
const minJobInterval = 10 * time.Second

// JobIntervals returns every job's interval: the defaults with the [jobs]
// table applied. It names an unknown job or a bad duration.
func (c Config) JobIntervals() (map[string]time.Duration, error) {
	out := make(map[string]time.Duration, len(defaultJobIntervals))
	for k, v := range defaultJobIntervals {
		out[k] = v
	}
	for name, v := range c.Jobs {
		if _, ok := out[name]; !ok {
			known := make([]string, 0, len(out))
			for k := range out {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("jobs: unknown job %q (known: %s)", name, strings.Join(known, ", "))
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("jobs.%s: %q is not a duration such as 5m or 1h", name, v)
		}
		if d < minJobInterval {
			return nil, fmt.Errorf("jobs.%s: %s is shorter than %s", name, d, minJobInterval)
		}
		out[name] = d
	}
	return out, nil
}

// HasVault reports whether root (cleaned) is a configured vault.
func (c Config) HasVault(root string) bool {
	for _, v := range c.Vaults {
		if filepath.Clean(v.Path) == root {
			return true
		}
	}
	return false
}
