// Package recall answers queries over the palace.
//
// Modes (engram.RecallRequest.Mode):
//
//   - shallow: embed the query, top k turns by cosine from the vector index.
//   - deep: candidates from vector search and BM25 (restricted to a time
//     range when the query names one, and to turns dated at or before as_of),
//     fused from normalised signals: cosine, BM25, the keyword evidence of
//     the candidate's whole session, its best adjacent turn, and a time decay
//     with a floor; as a weighted product (default) or reciprocal rank fusion.
//     Each result reports its signals and carries the turns around it.
//   - keyword: BM25 over the palace's full-text indexes.
//   - auto: deep when the query holds a trigger phrase (TriggerMatcher: "do
//     you remember", "认真回忆", "覚えてる?"), removed from the search text;
//     shallow otherwise.
//
// ParseTimeExpr (package internal/timeexpr) resolves temporal expressions ("last week", "on April 30",
// "三个月前", "先月") against as_of; Pack builds a context block within a
// token budget (EstimateTokens).
//
// Every result carries its sources: the archived turns it stems from, each
// with its meta unchanged.
//
// # Caveats
//
// A failing vector side (Ollama or Chroma down) degrades shallow recall to
// keyword search and deep recall to its keyword evidence, with a warning in
// the response; it is never an error. The layer and knowledge-graph
// signals are 0 for a turn that no memory, scene or triple cites (always,
// with extractor = "none"), and enter the fused product as 1 + signal, so
// they only ever raise a score. Token counts are estimates made without a
// tokenizer, biased to over-count.
package recall
