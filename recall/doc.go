// Package recall answers queries over the palace.
//
// For now recall is keyword only: BM25 over archived turns (the palace's FTS5
// indexes, CJK-aware). The shallow vector path and the deep fusion path arrive
// with their issues and plug in here behind the same request and response
// types (engram.RecallRequest, engram.RecallResponse), which clients rely on.
//
// Every result carries its sources: the archived turns it stems from, each
// with its meta unchanged.
package recall
