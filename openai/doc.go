// Package openai is engram's client of OpenAI-compatible model servers: an
// engram.Embedder over POST /embeddings and an engram.Extractor over POST
// /chat/completions (with the extraction protocol of internal/llm). The
// same API is served by hosted APIs (OpenAI's, and the many that copy it),
// vLLM, llama.cpp's server, LM Studio and Ollama's /v1 endpoints, so one
// client covers them: Config.BaseURL says which, up to and including the
// version path ("https://api.openai.com/v1", "http://127.0.0.1:11434/v1").
//
// Requests that fail for a transient reason are sent again with a doubling
// delay (internal/backoff): the server unreachable or hanging up, a
// timeout, 429 Too Many Requests, and 5xx. A Retry-After header (seconds or
// an HTTP date) is honoured: the client waits that long, up to
// Config.MaxRetryAfter, and gives up with an error that says so when the
// server asks for longer. 401 and 403 (the key), 404 (the model) and other
// 4xx are the configuration's fault and are not retried; every error names
// the server, the model and what to change. A batch is embedded or
// extracted whole or the call fails: nothing is skipped silently.
//
// The API key is sent as "Authorization: Bearer KEY" and nowhere else:
// never logged, never in an error message, never written to disk (the
// engine reads it from the environment variable its configuration names).
//
// # Caveats
//
// What leaves the machine with a hosted API: with the embedder, the text of
// every turn ("speaker: content"), of every L1 memory, knowledge-graph fact
// (as a sentence) and L2 scene, of every vault chunk, and of every recall
// query that embeds its text; with the extractor, the turns themselves in
// batches (date, speaker name, role and up to 2,000 characters of content
// each) and the extraction instructions. Turn ids, meta, namespaces and the
// archive stay local. Whoever runs the server may keep what it receives.
//
// The extractor asks for a JSON schema (response_format json_schema); a
// server that only knows json_object, or none, still answers, and the reply
// is repaired and read as far as it can be (internal/llm). max_tokens is
// the reply's limit: some hosted reasoning models want
// max_completion_tokens instead and refuse the request, which is reported.
package openai
