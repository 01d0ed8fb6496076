// Package ollama is an engram.Embedder over an Ollama server's /api/embed,
// and an engram.Extractor of L1 memories over its /api/chat, through the
// server's own Go client (github.com/ollama/ollama/api, pure Go: importing it
// builds none of the server's cgo).
//
//	e, err := ollama.NewEmbedder(ollama.Config{Model: "bge-m3"}) // host from $OLLAMA_HOST
//	dim, err := e.Check(ctx)                                    // loads the model, learns the dimension
//	vecs, err := e.Embed(ctx, texts)
//
//	x, err := ollama.NewExtractor(ollama.ExtractorConfig{}) // qwen2.5:3b-instruct
//	mems, err := x.Extract(ctx, turns)
//
// # Requests
//
// Embed sends the texts in batches of Config.BatchSize (default 32), one
// request each, one after the other, and returns the vectors in input order.
// Each request has its own timeout (Config.Timeout). A request that fails for
// a transient reason (connection refused or reset, as while the server
// restarts; a timeout; 429; a 5xx status) is sent again after a backoff
// that starts at Config.RetryDelay and doubles up to MaxRetryDelay, at most
// Config.MaxRetries times. Other 4xx statuses are not retried.
//
// The dimension is not configured: Dim is 0 until the first successful
// Embed (or Check) and then the length of its vectors. Every later vector is
// checked against it, so a model replaced on the server under the same name
// is caught (ECONFLICT) instead of mixing two models' vectors in one index.
//
// # Errors
//
// Every error a request returns is an *engram.Error whose message names the
// server's URL and what to do:
//
//	ollama server at http://127.0.0.1:11434 not reachable: dial tcp 127.0.0.1:11434: connect: connection refused; start it with "ollama serve" or set OLLAMA_HOST
//	model "bge-m3" is not available on the ollama server at http://127.0.0.1:11434; run: ollama pull bge-m3
//
// Both are EUNAVAILABLE, as are timeouts, 5xx and other rejections; see
// Embed for the rest. The cause stays reachable with errors.Is and errors.As
// (for example syscall.ECONNREFUSED or api.StatusError). A canceled context
// returns the context's error.
//
// # Extraction
//
// Extract shows the model the user and assistant turns (never tool or system
// turns), at most ExtractorConfig.BatchTurns (default 12) per request,
// numbered from 1 with their date and speaker, after a short English
// instruction; the memory texts keep the conversation's language. The
// request sets temperature 0 and a fixed seed, bounds the reply with
// num_predict (MaxTokens, default 1024) and gives the reply's JSON schema as
// the format, so the server constrains sampling to it:
//
//	{"memories":[{"type":"decision","text":"Alice decided to use SQLite","rationale":"...","subject":"Alice",
//	  "entities":["SQLite"],"importance":0.9,"turn":1,"relation":{"subject":"Alice","predicate":"uses","object":"SQLite"}}]}
//
// The reply is read leniently (with gjson) and repaired where small models
// break it: prose or a code fence around the JSON, trailing commas, single
// quotes, raw newlines in strings, and a reply cut off by num_predict, which
// keeps its complete memories. A reply that stays unusable is asked for once
// more with a stricter reminder (MaxAttempts, default 2); then the batch is
// reported as an *ExtractError (errors.Is ErrBadOutput, code EINVALID) with
// the turn ids and the start of the reply, and the other batches go on.
// Server failures are the Embedder's EUNAVAILABLE errors instead: retry
// them later, do not skip the batch.
//
// Every memory is checked: an unknown type, an empty text or a turn number
// outside the batch drops it; importance is clamped to 0..1 (by type when
// missing); a relation needs all three parts and its predicate is made
// snake_case. The source turn gives the namespace, the timestamps and, when
// the model names none, the subject; the ID is the rules extractor's
// (namespace, type, text, source turn), so re-extracting changes nothing.
//
// The default model, qwen2.5:3b-instruct, runs on a laptop CPU (about 1.9 GB),
// reads English and Chinese and follows a schema well; it is not a
// reasoning model, whose hidden thinking would use up num_predict.
//
// # Tests
//
// The tests run against a real server named by ENGRAM_TEST_OLLAMA_HOST, with
// the embedding model ENGRAM_TEST_OLLAMA_MODEL. scripts/ollama.sh up PORT
// builds the server from its Go module, creates a tiny test model
// (engram-test-embed, 128-d, made by scripts/mkmodel), starts it and prints
// both variables. Without them, -short skips those tests and a full run
// fails. Faults (a 503, a server that never answers) come from a proxy in the
// test process placed in front of the real server. The extractor's tests use
// the chat model ENGRAM_TEST_OLLAMA_CHAT_MODEL (engram-test-chat), whose
// untrained weights reply {"memories":[]} under the schema and "ok" without
// it; realistic broken replies are fed to the parser directly.
//
// # Caveats
//
//   - The first request after the server starts, or after the model was
//     unloaded (Ollama unloads an idle model after 5 minutes by default),
//     loads the model: seconds for bge-m3 on a CPU, where later requests take
//     milliseconds. DefaultTimeout is long for that reason; call Check at
//     startup to pay the cost before the first user request.
//   - The server truncates a text longer than the model's context (8,192
//     tokens for bge-m3) instead of failing: the end of a very long text does
//     not count in its vector.
//   - Batches are sent one after the other, and a failure in a later batch
//     discards the vectors of earlier ones: retry the call, embedding is
//     deterministic.
//   - A retried request is embedded again from the start: a request that
//     timed out because the batch is too large for the machine will time out
//     again. Lower BatchSize or raise Timeout instead.
//   - Ollama answers 404 for a model it does not have, and the error says to
//     pull it; a server that is not Ollama but answers 404 on /api/embed gets
//     the same message.
//   - The client honours HTTP_PROXY and HTTPS_PROXY for non-loopback hosts,
//     like any Go program.
//   - Extraction is slow on a CPU: a batch with a 3B model takes tens of
//     seconds to minutes, hence DefaultExtractTimeout of 5 minutes. A request
//     that times out is retried like any other (Config.MaxRetries), and will
//     likely time out again: lower BatchTurns or MaxTokens instead.
//   - A turn is cut to 2,000 characters in the prompt, and the server
//     truncates a prompt longer than the model's context (num_ctx, the
//     model's default) without an error: keep BatchTurns modest.
//   - A reply cut off by MaxTokens loses the memories after its last
//     complete one; with the same turns and model the reply is the same, so
//     raise MaxTokens or lower BatchTurns when ExtractErrors say "max tokens".
//   - qwen2.5:3b-instruct is under the Qwen Research License, unlike the
//     Apache-2.0 sizes of Qwen2.5 (1.5b, 7b): check it before commercial use,
//     or set another model.
package ollama
