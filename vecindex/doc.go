// Package vecindex is engram's in-process vector index: an engram.VectorIndex
// that scans one model's vectors in memory, beside the Chroma adapter
// (package chroma), which keeps them in a server. It holds no vectors of its
// own on disk: an Index loads them from a Store, the palace's SQLite
// (palace.VectorStore), writes through it, and is told by it of every write
// committed after the load, whoever made it (vecrow.Follower). The palace
// keeps the rows, the model states and the watermarks; this package keeps
// the in-memory matrix and the kernels that scan it. What both need, the
// encoding the rows are stored in and the follower's contract, is package
// internal/vecrow: neither imports the other.
//
// An Index scans every vector that passes a query's filters and keeps the
// best candidates in a min-heap. In memory each vector is its unit vector
// as int8 codes with one scale (dim + 4 bytes), in chunks of rows, so a
// query is a sequential pass over memory; namespace, kind and time sit in
// parallel slices, namespaces and kinds interned to integers. On amd64 with
// AVX2 an assembly kernel takes the int8 dot products (build tag purego
// turns it off). The codes are what the store keeps, so the scores are the
// cosines of the vectors as stored, and there is nothing finer to rescore
// with. A write reaches the matrix after the store commits it (a replaced
// vector is overwritten in place, a deleted one swapped with the last row);
// queries run beside writes under a read lock, which a write takes only
// while it changes rows: new chunks are allocated before. The matrix loads
// on the first query, or on Load, and Unload releases it.
// BenchmarkVectorQuery measures a query; docs/benchmarks.md quotes it.
//
// # Caveats
//
//   - Memory: the matrix holds N x (dim + 4) bytes per loaded model, plus
//     ids and metadata for each vector (docs/benchmarks.md measures both).
//     A retired model's matrix stays loaded until Unload, so that recall can
//     query it until it has switched; during a re-embed both matrices are
//     held. Keep one Index per store: loading a second releases the first's.
//   - A query reads the whole matrix: latency grows linearly with the number
//     of vectors (arm64 has no assembly kernel yet).
//   - Scores are cosines of the stored vectors (the codes): within about
//     0.001 of those of the vectors as written at 512 dimensions, so that a
//     near tie at the edge of the top k may come out either way (recall@10
//     against exact search in TestQuantizedRecall, which docs/benchmarks.md
//     quotes).
//   - Vector times are int64 nanoseconds: a vector dated before 1677-09-21
//     or after 2262-04-11 is refused (a little wider than the years
//     engram.MinYear to engram.MaxYear that the API accepts).
package vecindex
