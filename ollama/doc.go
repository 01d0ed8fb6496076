// Package ollama is an engram.Embedder over an Ollama server's /api/embed,
// through the server's own Go client (github.com/ollama/ollama/api, pure Go:
// importing it builds none of the server's cgo).
//
//	e, err := ollama.NewEmbedder(ollama.Config{Model: "bge-m3"}) // host from $OLLAMA_HOST
//	dim, err := e.Check(ctx)                                    // loads the model, learns the dimension
//	vecs, err := e.Embed(ctx, texts)
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
// # Tests
//
// The tests run against a real server named by ENGRAM_TEST_OLLAMA_HOST, with
// the embedding model ENGRAM_TEST_OLLAMA_MODEL. scripts/ollama.sh up PORT
// builds the server from its Go module, creates a tiny test model
// (engram-test-embed, 128-d, made by scripts/mkmodel), starts it and prints
// both variables. Without them, -short skips those tests and a full run
// fails. Faults (a 503, a server that never answers) come from a proxy in the
// test process placed in front of the real server.
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
package ollama
