// Package pipeline moves turns from the L0 archive into the palace.
//
// The Indexer is the first stage: it follows the archive (woken by every
// commit) and copies each archived turn, in sequence order, into the palace's
// turns table, advancing a watermark (IndexedSeq) in the same transaction. At
// start it catches up from that watermark, so a turn acknowledged just before
// a crash is indexed on the next start. Ingest ties the two together for the
// HTTP API and the CLI: archive (fsync), then wait briefly for the index so a
// client can recall what it just wrote.
//
// The VectorIndexer embeds archived turns the same way, and ExternalSync
// pushes the palace's vectors to an external index (ChromaDB).
//
// The layer workers (layers.go) derive L1-L4 and run as scheduled jobs:
// MemoryWorker (L1, any engram.Extractor: package extract holds the offline
// ones), SceneWorker (L2, the segmenter of scenes.go), PersonaWorker (L3,
// extract.MemoryFacet) and GraphWorker (L4, extract.MemoryTriple), the last
// two reading the memories changed since their watermarks. Each keeps a watermark in the
// palace that advances in the transaction writing its batch, so a run is
// idempotent, resumable after a crash at any point, and rebuildable from L0;
// a run ends once it has caught up with the archive as it was at the start.
//
// # Caveats
//
// The palace may briefly lag the archive. Ingest waits for the index up to a
// bound (IngestWait) and otherwise answers with a warning; the turns are durable
// either way and become searchable as soon as the indexer catches up.
package pipeline
