// The request and response shapes of engram's HTTP API, with the API's own
// (snake_case) field names, so that a body reads the same here, in
// docs/api.md and on the wire.
//
// Each interface names the schema of /v1/openapi.json it stands for with a
// `@schema` tag: test/openapi.test.mjs compares every tagged interface with
// the running server's schema (every field declared here exists there, every
// field the API requires is declared here and not optional, types and enums
// agree), so the client and the API cannot drift apart unnoticed.

/** Who said a turn. */
export type Role = "user" | "assistant" | "system" | "tool";

/** What a recall result is. */
export type Kind = "turn" | "doc" | "memory" | "scene" | "fact" | "persona";

/** How recall ranks: `auto` (the default) picks deep on a trigger phrase, else shallow. */
export type RecallMode = "auto" | "hybrid" | "shallow" | "deep" | "keyword";

/** The kinds of L1 memory. */
export type MemoryType = "fact" | "decision" | "preference" | "plan" | "event";

/** A JSON object: a turn's `meta`, returned with every result from the turn. */
export type Meta = { [key: string]: unknown };

/**
 * One conversation turn to archive. `session` and `content` are required.
 * @schema TurnInput
 */
export interface TurnInput {
  /** Optional; a known id is not written again and comes back as a duplicate. */
  id?: string;
  /** Default "default". */
  namespace?: string;
  session: string;
  /** Default "user". */
  role?: Role;
  speaker?: string;
  content: string;
  /** RFC 3339 (a Date is sent as its ISO string); default now. */
  ts?: string | Date;
  meta?: Meta;
  /** Archive again a turn whose id was forgotten. */
  resurrect?: boolean;
}

/**
 * A batch of turns: all or nothing.
 * @schema TurnBatch
 */
export interface TurnBatch {
  turns: TurnInput[];
}

/**
 * A turn as archived.
 * @schema Appended
 */
export interface Appended {
  id: string;
  seq: number;
  /** The id was archived before; nothing was written. */
  duplicate?: boolean;
  /** The duplicate's id was forgotten (send it with `resurrect` to archive it again). */
  forgotten?: boolean;
}

/**
 * The answer to remember.
 * @schema Ingested
 */
export interface Ingested {
  /** The turns' ids, in the order sent. */
  ids: string[];
  turns: Appended[];
  /** Why the turns may not be searchable yet. */
  warnings?: string[];
}

/**
 * A recall. Only `query` is required.
 * @schema RecallRequest
 */
export interface RecallRequest {
  query: string;
  namespace?: string;
  /** 1 to 200; default 10. */
  k?: number;
  mode?: RecallMode;
  /** RFC 3339 (a Date is sent as its ISO string): what was known then. */
  as_of?: string | Date;
  /** Pack the results into a `context` block of at most this many tokens. */
  budget_tokens?: number;
  kinds?: Kind[];
}

/**
 * An archived turn (or a document's lines) a result stems from.
 * @schema Source
 */
export interface Source {
  id: string;
  session?: string;
  ts?: string;
  meta?: Meta;
  path?: string;
  lines?: string;
}

/**
 * Why a deep result ranked where it did.
 * @schema Signals
 */
export interface Signals {
  vector?: number;
  bm25?: number;
  session?: number;
  scene?: number;
  neighbour?: number;
  layer?: number;
  kg?: number;
  persona?: number;
  speaker?: number;
  decay?: number;
  final?: number;
  in_range?: boolean;
}

/**
 * A turn around a deep hit.
 * @schema ContextTurn
 */
export interface ContextTurn {
  id: string;
  speaker?: string;
  role: string;
  text: string;
  ts: string;
}

/**
 * Where a document result is.
 * @schema DocRef
 */
export interface DocRef {
  vault?: string;
  path?: string;
  title?: string;
  heading?: string[];
  start_line?: number;
  end_line?: number;
  linked_from?: string;
  depth?: number;
}

/**
 * A time span a query named.
 * @schema TimeRange
 */
export interface TimeRange {
  from: string;
  to: string;
  expr: string;
}

/**
 * One recall result; `sources` lists the archived turns it stems from.
 * @schema Result
 */
export interface Result {
  id: string;
  kind: Kind;
  text: string;
  score: number;
  ts: string;
  namespace: string;
  session?: string;
  role?: string;
  speaker?: string;
  meta?: Meta;
  sources: Source[];
  signals?: Signals;
  context?: ContextTurn[];
  doc?: DocRef;
  session_start?: string;
  times?: TimeRange[];
}

/**
 * The answer to recall: results in rank order.
 * @schema RecallResponse
 */
export interface RecallResponse {
  /** The mode that ran. */
  mode: "hybrid" | "shallow" | "deep" | "keyword";
  results: Result[];
  took_ms: number;
  /** Set when recall ran degraded. */
  warnings?: string[];
  trigger?: string;
  time_range?: TimeRange;
  /** The packed context block (with `budget_tokens`). */
  context?: string;
  context_tokens?: number;
}

/**
 * A forget by ids, a session or a namespace.
 * @schema ForgetRequest
 */
export interface ForgetRequest {
  ids?: string[];
  session?: string;
  namespace?: string;
  /** Kept in the tombstone; at most 1024 bytes. */
  reason?: string;
  /** Report what would be forgotten, change nothing. */
  dry_run?: boolean;
}

/**
 * What a forget removed (or, with dry_run, would remove).
 * @schema ForgetReport
 */
export interface ForgetReport {
  turns: string[];
  already_forgotten?: string[];
  unknown?: string[];
  memories_deleted?: number;
  memories_updated?: number;
  scenes_deleted?: number;
  scenes_remade?: number;
  facts_changed?: number;
  persona_facets_changed?: number;
  units_changed?: number;
  vectors_deleted?: number;
  archive_files_rewritten?: number;
  previous_palace_removed?: boolean;
  dry_run?: boolean;
  took_ms?: number;
}

/**
 * A redaction: every occurrence of each text, in the turns named by ids, a
 * session, a namespace, or every namespace.
 * @schema RedactRequest
 */
export interface RedactRequest {
  /** The spans to replace, each at least 3 bytes; at most 1000. */
  texts: string[];
  ids?: string[];
  session?: string;
  namespace?: string;
  /** Default "[redacted]". */
  marker?: string;
  reason?: string;
  dry_run?: boolean;
}

/**
 * What a redaction changed.
 * @schema RedactReport
 */
export interface RedactReport {
  turns: string[];
  spans: number;
  memories_rederived?: number;
  scenes_rebuilt?: number;
  archive_files_rewritten?: number;
  previous_palace_removed?: boolean;
  dry_run?: boolean;
  took_ms?: number;
  warnings?: string[];
}

/**
 * A correction of a memory: one of `wrong` or `text`, or `restore` alone.
 * @schema MemoryCorrection
 */
export interface MemoryCorrection {
  wrong?: boolean;
  text?: string;
  restore?: boolean;
  reason?: string;
}

/**
 * A correction of a knowledge-graph fact: one of `wrong` or `object`, or `restore` alone.
 * @schema FactCorrection
 */
export interface FactCorrection {
  wrong?: boolean;
  object?: string;
  restore?: boolean;
  reason?: string;
}

/**
 * A correction as recorded in the home's corrections journal.
 * @schema Correction
 */
export interface Correction {
  id: string;
  at: string;
  target: "memory" | "fact";
  of: string;
  text?: string;
  object?: string;
  wrong?: boolean;
  restore?: boolean;
  reason?: string;
  namespace: string;
  memories?: string[];
  type?: string;
  subject?: string;
  predicate?: string;
  original?: string;
  sources?: string[];
  key?: string;
}

/**
 * A memory's subject, predicate and object.
 * @schema Relation
 */
export interface Relation {
  subject: string;
  predicate: string;
  object: string;
}

/**
 * An L1 memory; `sources` are the turn ids it stems from.
 * @schema Memory
 */
export interface Memory {
  id: string;
  namespace: string;
  type: MemoryType;
  text: string;
  rationale?: string;
  subject?: string;
  entities?: string[];
  importance: number;
  ts: string;
  valid_from?: string;
  sources: string[];
  relation?: Relation;
  superseded_by?: string;
  seq?: number;
  wrong?: boolean;
  corrected?: string;
  extracted_text?: string;
}

/** @schema MemoriesResponse */
export interface MemoriesResponse {
  memories: Memory[];
}

/**
 * An L2 scene: a stretch of one session, summarised.
 * @schema Scene
 */
export interface Scene {
  id: string;
  namespace: string;
  session: string;
  title: string;
  summary: string;
  start: string;
  end: string;
  participants?: string[];
  /** The turn ids of the scene. */
  turns: string[];
  seq?: number;
}

/** @schema ScenesResponse */
export interface ScenesResponse {
  scenes: Scene[];
}

/**
 * An earlier value of a persona facet.
 * @schema FacetChange
 */
export interface FacetChange {
  value: string;
  from: string;
  to: string;
  evidence?: string[];
}

/**
 * One thing known of a speaker; `evidence` are turn ids.
 * @schema PersonaFacet
 */
export interface PersonaFacet {
  facet: "identity" | "preference" | "relationship" | "project" | "habit" | "activity" | "place" | "possession" | "plan";
  key: string;
  value: string;
  since: string;
  evidence: string[];
  history?: FacetChange[];
}

/**
 * The L3 persona of a speaker.
 * @schema Persona
 */
export interface Persona {
  namespace: string;
  speaker: string;
  facets: PersonaFacet[];
  updated: string;
}

/** @schema PersonasResponse */
export interface PersonasResponse {
  personas: Persona[];
}

/**
 * A knowledge-graph entity.
 * @schema Entity
 */
export interface Entity {
  namespace: string;
  name: string;
  aliases?: string[];
}

/**
 * A knowledge-graph fact, valid from `valid_from` to `valid_to` (open when absent).
 * @schema Triple
 */
export interface Triple {
  id: string;
  namespace: string;
  subject: string;
  predicate: string;
  object: string;
  valid_from: string;
  valid_to?: string;
  confidence: number;
  sources: string[];
  memory?: string;
  seq?: number;
}

/**
 * An entity and its triples.
 * @schema GraphResult
 */
export interface GraphResult {
  entity: Entity;
  triples: Triple[];
}

/**
 * A re-embed: `builtin`, `ollama`, `ollama:NAME`, `openai`, `openai:NAME`; empty: the configured model.
 * @schema ReembedRequest
 */
export interface ReembedRequest {
  model?: string;
}

/**
 * A re-embed's progress.
 * @schema ReembedStatus
 */
export interface ReembedStatus {
  model: string;
  state: "running" | "done" | "failed";
  done: number;
  total: number;
  error?: string;
  started: string;
}

/**
 * The vector index's state.
 * @schema VectorHealth
 */
export interface VectorHealth {
  model?: string;
  backend?: "embedded" | "chroma";
  embedded_seq: number;
  lag: number;
  chroma_lag?: number;
  reembed_pending?: string;
  reembed?: ReembedStatus;
}

/**
 * An in-memory index a server loads in the background after it starts.
 * @schema IndexHealth
 */
export interface IndexHealth {
  state: "loading" | "ready" | "failed";
  loaded?: number;
  total?: number;
}

/**
 * Liveness and index lag; `problems` make `status` degraded.
 * @schema Health
 */
export interface Health {
  status: "ok" | "degraded";
  version: string;
  archive_seq: number;
  indexed_seq: number;
  index_lag: number;
  skipped_turns?: number;
  layer_lag?: { [layer: string]: number };
  vectors?: VectorHealth;
  indexes?: { [index: string]: IndexHealth };
  problems?: string[];
}

/**
 * The archive's size.
 * @schema ArchiveStats
 */
export interface ArchiveStats {
  turns: number;
  last_seq: number;
  files: number;
  bytes: number;
  corrupt_lines?: number;
  index_lag: number;
  forgotten?: number;
  redacted_turns?: number;
  secrets_redacted?: { [rule: string]: number };
}

/**
 * Counts per namespace and layer (`turns`, `memories`, `scenes`, ...), and the archive.
 * @schema Stats
 */
export interface Stats {
  namespaces: { [namespace: string]: { [layer: string]: number } };
  archive: ArchiveStats;
}

/**
 * A scheduled job.
 * @schema JobStatus
 */
export interface JobStatus {
  name: string;
  interval: string;
  last_run?: string;
  last_success?: string;
  next_run?: string;
  lag_seconds: number;
  running: boolean;
  failures: number;
  failing: boolean;
  last_error?: string;
  /** Batches a layer worker gave up on. */
  skipped_batches?: number;
  last_skip?: string;
}

/** @schema JobsResponse */
export interface JobsResponse {
  jobs: JobStatus[];
}

/**
 * An archived turn, as listed.
 * @schema StoredTurn
 */
export interface StoredTurn {
  id: string;
  seq: number;
  namespace: string;
  session: string;
  role: string;
  speaker?: string;
  content: string;
  ts: string;
  received_at?: string;
  meta?: Meta;
}

/**
 * A page of turns; `next` is the cursor of the next page (0 on the last).
 * @schema TurnsResponse
 */
export interface TurnsResponse {
  turns: StoredTurn[];
  next: number;
}

/** The query of memories(). */
export interface MemoriesQuery {
  /** "*" for every namespace; default "default". */
  namespace?: string;
  type?: MemoryType;
  subject?: string;
  /** Keyword search. */
  q?: string;
  /** Include replaced (and wrong) memories. */
  superseded?: boolean;
  from?: string | Date;
  to?: string | Date;
  limit?: number;
}

/** The query of scenes(). */
export interface ScenesQuery {
  namespace?: string;
  session?: string;
  q?: string;
  from?: string | Date;
  to?: string | Date;
  limit?: number;
}

/** The query of persona(). */
export interface PersonaQuery {
  namespace?: string;
  /** Every speaker when absent. */
  speaker?: string;
}

/** The query of kg(), beside the entity. */
export interface KGQuery {
  namespace?: string;
  /** Triples valid then (default now). */
  as_of?: string | Date;
  /** Every triple, closed ones included, in time order. */
  timeline?: boolean;
  limit?: number;
}

/** The query of turns(). */
export interface TurnsQuery {
  /** "*" for every namespace. */
  namespace?: string;
  /** A session's turns, oldest first; without it the timeline, newest first. */
  session?: string;
  before?: number;
  after?: number;
  limit?: number;
}
