import { EngramError } from "./errors.js";
import { ROUTES, type Route } from "./routes.js";
import type {
  Correction,
  FactCorrection,
  ForgetReport,
  ForgetRequest,
  GraphResult,
  Health,
  Ingested,
  JobStatus,
  JobsResponse,
  KGQuery,
  MemoriesQuery,
  MemoriesResponse,
  MemoryCorrection,
  PersonaQuery,
  PersonasResponse,
  RecallRequest,
  RecallResponse,
  RedactReport,
  RedactRequest,
  ReembedStatus,
  ScenesQuery,
  ScenesResponse,
  Stats,
  TurnInput,
  TurnsQuery,
  TurnsResponse,
} from "./types.js";

/** Where engram listens when neither the options, ENGRAM_URL nor ENGRAM_ADDR say. */
export const DEFAULT_URL = "http://127.0.0.1:30001";

/** Options of an Engram client. */
export interface EngramOptions {
  /** The server's base URL; default ENGRAM_URL, else http://ENGRAM_ADDR (in Node), else http://127.0.0.1:30001. */
  url?: string;
  /** The bearer token; default ENGRAM_TOKEN (in Node). Needed only when the server has one. */
  token?: string;
  /** Per attempt, in milliseconds; default 30000. 0: none. */
  timeoutMs?: number;
  /** How many times a 503 answer is retried; default 3. 0: never. */
  retries?: number;
  /** The first retry's delay in milliseconds, doubled at each retry (with jitter); default 250. */
  retryDelayMs?: number;
  /** The longest delay between two tries, in milliseconds; default 5000. */
  maxRetryDelayMs?: number;
  /** The fetch to use; default the global one (Node 18+, browsers). */
  fetch?: typeof fetch;
}

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
}

/** Options of remember(). */
export interface RememberOptions extends CallOptions {
  /**
   * `index` (the default): answer once the turns are searchable; `archive`:
   * once they are archived, the index catching up behind (bulk imports).
   */
  wait?: "index" | "archive";
}

/** Options of recall(): every field of the request but the query. */
export type RecallOptions = Omit<RecallRequest, "query"> & CallOptions;

/** Options of forgetTurn(). */
export interface ForgetTurnOptions extends CallOptions {
  reason?: string;
  dry_run?: boolean;
}

// defaultUrl is ENGRAM_URL, else engram serve's own listen address
// (ENGRAM_ADDR; a wildcard one is reached on loopback), else DEFAULT_URL.
function defaultUrl(): string {
  const url = env("ENGRAM_URL")?.trim();
  if (url) return url;
  const addr = env("ENGRAM_ADDR")?.trim();
  if (!addr) return DEFAULT_URL;
  const i = addr.lastIndexOf(":");
  let host = addr.slice(0, i);
  const port = addr.slice(i + 1);
  if (host === "" || host === "0.0.0.0") host = "127.0.0.1";
  else if (host === "[::]" || host === "::") host = "[::1]";
  return `http://${host}:${port}`;
}

// env reads a variable in Node (and Deno, Bun); a browser has none.
function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const v = p?.env?.[name];
  return v === "" ? undefined : v;
}

type Query = { [name: string]: string | number | boolean | Date | undefined };

/**
 * A client of one engram server. Every method answers the API's JSON as
 * typed here, or throws an EngramError carrying the API's code and field.
 * A 503 (engram or a dependency unavailable; nothing was acknowledged, so
 * any call may be sent again) is retried with exponential backoff.
 */
export class Engram {
  /** The server's base URL, without a trailing slash. */
  readonly url: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #retryDelayMs: number;
  readonly #maxRetryDelayMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: EngramOptions = {}) {
    const url = options.url ?? defaultUrl();
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TypeError(`engram: url ${JSON.stringify(url)} is not a URL: pass one like ${DEFAULT_URL}`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(`engram: url ${JSON.stringify(url)} is not http or https: pass one like ${DEFAULT_URL}`);
    }
    if (parsed.search || parsed.hash) {
      throw new TypeError(`engram: url ${JSON.stringify(url)} has a query or fragment: pass the base URL only, like ${DEFAULT_URL}`);
    }
    this.url = parsed.href.replace(/\/+$/, "");
    this.#token = options.token ?? env("ENGRAM_TOKEN");
    this.#timeoutMs = count("timeoutMs", options.timeoutMs, 30_000);
    this.#retries = count("retries", options.retries, 3);
    this.#retryDelayMs = count("retryDelayMs", options.retryDelayMs, 250);
    this.#maxRetryDelayMs = count("maxRetryDelayMs", options.maxRetryDelayMs, 5_000);
    if (options.fetch === undefined && typeof globalThis.fetch !== "function") {
      throw new TypeError("engram: no fetch in this runtime (Node 18 or later has one): pass options.fetch");
    }
    // A browser's fetch must be called on the window, not on this client.
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * Archives one turn, or a batch (all or nothing). The answer comes after
   * the archive's fsync and, by default, once the turns are searchable.
   */
  async remember(turns: TurnInput | TurnInput[], options: RememberOptions = {}): Promise<Ingested> {
    const body = Array.isArray(turns) ? { turns } : turns;
    return this.#call(ROUTES.remember, { query: { wait: options.wait }, body, signal: options.signal });
  }

  /** Recalls turns, documents and layer items for a query, in rank order. */
  async recall(query: string, options: RecallOptions = {}): Promise<RecallResponse> {
    const { signal, ...rest } = options;
    const body: RecallRequest = { query, ...rest };
    return this.#call(ROUTES.recall, { body, signal });
  }

  /** Forgets turns by ids, every turn of a session, or of a namespace. */
  async forget(request: ForgetRequest, options: CallOptions = {}): Promise<ForgetReport> {
    return this.#call(ROUTES.forget, { body: request, signal: options.signal });
  }

  /** Forgets one turn. */
  async forgetTurn(id: string, options: ForgetTurnOptions = {}): Promise<ForgetReport> {
    return this.#call(ROUTES.forgetTurn, {
      params: { id },
      query: { reason: options.reason, dry_run: options.dry_run },
      signal: options.signal,
    });
  }

  /** Replaces spans (a password, a key) in turns and everything derived from them. */
  async redact(request: RedactRequest, options: CallOptions = {}): Promise<RedactReport> {
    return this.#call(ROUTES.redact, { body: request, signal: options.signal });
  }

  /** Corrects an L1 memory: marks it wrong, replaces its text, or restores it. */
  async correctMemory(id: string, correction: MemoryCorrection, options: CallOptions = {}): Promise<Correction> {
    return this.#call(ROUTES.correctMemory, { params: { id }, body: correction, signal: options.signal });
  }

  /** Corrects a knowledge-graph fact: marks it wrong, replaces its object, or restores it. */
  async correctFact(id: string, correction: FactCorrection, options: CallOptions = {}): Promise<Correction> {
    return this.#call(ROUTES.correctFact, { params: { id }, body: correction, signal: options.signal });
  }

  /** Lists or searches L1 memories. */
  async memories(query: MemoriesQuery = {}, options: CallOptions = {}): Promise<MemoriesResponse> {
    return this.#call(ROUTES.memories, { query: { ...query }, signal: options.signal });
  }

  /** Lists or searches L2 scenes. */
  async scenes(query: ScenesQuery = {}, options: CallOptions = {}): Promise<ScenesResponse> {
    return this.#call(ROUTES.scenes, { query: { ...query }, signal: options.signal });
  }

  /** The L3 persona of a speaker, or of every speaker. */
  async persona(query: PersonaQuery = {}, options: CallOptions = {}): Promise<PersonasResponse> {
    return this.#call(ROUTES.persona, { query: { ...query }, signal: options.signal });
  }

  /** The L4 knowledge graph around an entity (a not_found error for an unknown one). */
  async kg(entity: string, query: KGQuery = {}, options: CallOptions = {}): Promise<GraphResult> {
    return this.#call(ROUTES.kg, { query: { ...query, entity: nonEmpty("entity", entity) }, signal: options.signal });
  }

  /** A page of archived turns: the timeline, newest first, or one session in order. */
  async turns(query: TurnsQuery = {}, options: CallOptions = {}): Promise<TurnsResponse> {
    return this.#call(ROUTES.turns, { query: { ...query }, signal: options.signal });
  }

  /** Liveness and index lag. Needs no token. */
  async health(options: CallOptions = {}): Promise<Health> {
    return this.#call(ROUTES.health, { signal: options.signal });
  }

  /** Counts per namespace and layer, and the archive's size. */
  async stats(options: CallOptions = {}): Promise<Stats> {
    return this.#call(ROUTES.stats, { signal: options.signal });
  }

  /** The scheduled jobs (the layer builders among them) and their state. */
  async jobs(options: CallOptions = {}): Promise<JobsResponse> {
    return this.#call(ROUTES.jobs, { signal: options.signal });
  }

  /**
   * Starts embedding every turn with another model (see docs/api.md,
   * POST /v1/reembed); progress is in health().vectors.reembed.
   */
  async reembed(model?: string, options: CallOptions = {}): Promise<ReembedStatus> {
    return this.#call(ROUTES.reembed, { body: model === undefined ? {} : { model }, signal: options.signal });
  }

  /** Runs one job now (e.g. `l1-memories`) and answers its state after the run. */
  async runJob(name: string, options: CallOptions = {}): Promise<JobStatus> {
    return this.#call(ROUTES.runJob, { params: { name }, signal: options.signal });
  }

  async #call<T>(
    route: Route,
    req: { params?: Record<string, string>; query?: Query; body?: unknown; signal?: AbortSignal | undefined },
  ): Promise<T> {
    let path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(nonEmpty(name, req.params?.[name])));
    const what = `${route.method} ${route.path}`;
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (!route.query.includes(name)) {
        throw new TypeError(`engram: ${what} takes no query parameter ${JSON.stringify(name)}: it takes ${route.query.join(", ") || "none"}`);
      }
      search.append(name, value instanceof Date ? value.toISOString() : String(value));
    }
    const qs = search.toString();
    if (qs) path += `?${qs}`;
    const headers: Record<string, string> = { Accept: "application/json" };
    let body: string | undefined;
    if (req.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(req.body);
    }
    if (this.#token) headers["Authorization"] = `Bearer ${this.#token}`;

    for (let attempt = 0; ; attempt++) {
      const res = await this.#send(this.url + path, { method: route.method, headers, body }, req.signal, what);
      const text = res.text;
      if (res.ok) {
        try {
          return JSON.parse(text) as T;
        } catch (cause) {
          throw new EngramError("bad_response", `${what}: the answer (HTTP ${res.status}) is not JSON`, { status: res.status, request: what, cause });
        }
      }
      const err = EngramError.fromAnswer(res.status, text, what);
      if (res.status !== 503 || attempt >= this.#retries) throw err;
      await sleep(this.#delay(attempt, res.headers.get("Retry-After")), req.signal, what);
    }
  }

  // #send makes one attempt, the answer's body read included, under the
  // client's timeout and the caller's signal.
  async #send(url: string, init: RequestInit, signal: AbortSignal | undefined, what: string): Promise<{ ok: boolean; status: number; headers: Headers; text: string }> {
    if (signal?.aborted) throw aborted(what, signal.reason);
    const ctrl = new AbortController();
    let timedOut = false;
    const onAbort = () => ctrl.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = this.#timeoutMs > 0 ? setTimeout(() => ((timedOut = true), ctrl.abort()), this.#timeoutMs) : undefined;
    try {
      const res = await this.#fetch(url, { ...init, signal: ctrl.signal });
      return { ok: res.ok, status: res.status, headers: res.headers, text: await res.text() };
    } catch (cause) {
      if (timedOut) throw new EngramError("client_timeout", `${what}: no answer within ${this.#timeoutMs} ms (timeoutMs)`, { request: what, cause });
      if (signal?.aborted) throw aborted(what, cause);
      throw new EngramError("network", `${what}: could not reach engram at ${this.url}: ${describe(cause)}`, { request: what, cause });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  // #delay is the wait before retry attempt+1: the server's Retry-After when
  // it sends one, else exponential backoff with full jitter, capped.
  #delay(attempt: number, retryAfter: string | null): number {
    const seconds = retryAfter === null ? NaN : Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, this.#maxRetryDelayMs);
    const ceiling = Math.min(this.#retryDelayMs * 2 ** attempt, this.#maxRetryDelayMs);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }
}

function count(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new TypeError(`engram: ${name} ${value} is not a number of 0 or more`);
  }
  return value;
}

function nonEmpty(name: string, value: string | undefined): string {
  if (typeof value !== "string" || value === "") {
    throw new TypeError(`engram: ${name} is required (a non-empty string), got ${JSON.stringify(value)}`);
  }
  return value;
}

function aborted(what: string, cause: unknown): EngramError {
  return new EngramError("aborted", `${what}: aborted by the caller's signal`, { request: what, cause });
}

function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return cause.code;
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(aborted(what, signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted(what, signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
