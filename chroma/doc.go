// Package chroma is an engram.VectorIndex over a ChromaDB server (1.x, API
// v2), through the chroma-go client. Engram supplies every vector: the
// server never embeds, and the collections are opened with an embedding
// function that refuses to (without one, chroma-go would build its ONNX
// default, which downloads a runtime).
//
//	ix, err := chroma.Open(ctx, chroma.Config{URL: "http://127.0.0.1:8000", Model: "bge-m3", Dim: 1024})
//
// # Data layout
//
// One collection per embedding model and dimension, named by CollectionName:
// engram_<model>_<dim>, e.g. engram_bge-m3_1024. A model switch therefore
// never meets Chroma's "Collection expecting embedding with dimension of
// 1024, got 384": the new model's vectors go to a collection of their own,
// and the old one stays until DropCollection. Collections are created with
// cosine distance (configuration hnsw.space = "cosine") in Config.Database
// (created when missing) of Config.Tenant, and carry engram_model and
// engram_dim in their metadata for whoever inspects the server.
//
// Each record is a VectorItem: id = ID, embedding = Vector, and metadata
//
//	kind       string  VectorItem.Kind
//	namespace  string  VectorItem.Namespace
//	ts         int     VectorItem.TS in Unix seconds (TS.Unix()), for range filters
//
// No document text is stored: the archive and the palace hold the text.
//
// # Queries
//
// Query sends one where filter: namespace $eq (when set), kind $eq or $in
// (when set), ts $gte From.Unix() and ts $lt To rounded up to a whole
// second (when set), joined by $and when there are several. Chroma returns
// cosine distances d = 1 - cos; a hit's Score is 1 - d, the cosine
// similarity, in [-1, 1].
//
// # Errors
//
// Every error is an *engram.Error: EINVALID for bad input, checked before
// anything is sent (wrong dimension, naming both; zero or non-finite vector;
// empty id; K < 1); EUNAVAILABLE naming the URL when the server cannot be
// reached, does not answer within Config.Timeout, or fails (5xx); ENOTFOUND
// and ECONFLICT for the server's 404 and 409. A canceled context returns the
// context's error. When a collection disappears under an open Index (dropped
// by another Index or process, or a server Reset), the next call creates it
// again and retries once.
//
// # Tests
//
// The tests run internal/vectortest's conformance suite against a real
// server named by ENGRAM_TEST_CHROMA_URL; scripts/chroma.sh up PORT starts
// one and prints the variable. Without it, -short skips those tests and a
// full run fails.
//
// # Caveats
//
//   - Recall is approximate: HNSW, with the server's defaults unless
//     Config.HNSW says otherwise. On embedding-like 384-d vectors (a low-rank
//     projection plus noise, as in the benchmarks) recall@10 was 1.0 at 10k,
//     filtered or not. On uniform random vectors, HNSW's worst case and
//     unlike any embedding, it was about 0.5 at 10k and 0.12 at 100k
//     unfiltered; HNSW.SearchEF 400 raised the 10k figure to 0.91. A query
//     equal to a stored vector still finds it first. Settings apply when a
//     collection is created: changing ef_search afterwards through the API
//     did not change recall on server 1.0.5.
//   - Time filters have one-second resolution, because ts is stored in whole
//     seconds: From compares against its second (floor) and To is rounded up,
//     so a range never drops an item inside it but may keep one from the
//     same second just outside it.
//   - Deleting a collection (DropCollection, Reset) leaves its HNSW folder
//     on the server's disk (about 45 MB per 10k 1024-d vectors); chroma
//     vacuum does not remove it. Re-embedding into new collections grows the
//     data directory until it is cleaned by hand.
//   - The server takes at most 5,461 records per request; Upsert and Delete
//     split larger calls (Config.BatchSize). A failure in a later batch
//     leaves the earlier ones written; Upsert is idempotent, so retry.
//   - Adds are CPU-bound on the server: about 1,300 vectors/s for 1024-d on
//     two cores, whatever the batch size. Indexing a large archive takes
//     minutes.
//   - Older Chroma servers reject an $and of fewer than two clauses; Query
//     sends a lone clause bare.
//   - chroma-go v0.4.0's WithTimeout is stored but never applied; Open
//     passes its own http.Client instead, with Config.Timeout per request and
//     at most DefaultDialTimeout to connect.
//   - Reset deletes everything on the server and works only when it runs
//     with allow_reset: true. It is meant for tests against a scratch server.
package chroma
