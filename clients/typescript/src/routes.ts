// Every route the client calls, in one table: the client's methods build
// their requests from it (a query parameter not listed here is refused
// before anything is sent), and test/openapi.test.mjs checks each entry
// against the server's /v1/openapi.json: the path and method exist, the query
// parameters are the route's, the body and answer are the schemas named here,
// and the method of the same name resolves to the interface of that schema.

/** One route of the API as the client uses it. */
export interface Route {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** The OpenAPI path; `{name}` parts are filled from path parameters. */
  readonly path: string;
  /** The query parameters the client may send. */
  readonly query: readonly string[];
  /** The schemas a request body may take (none: no body). */
  readonly body: readonly string[];
  /** The schema of the success answer. */
  readonly response: string;
  /** The success status. */
  readonly status: number;
}

/** The routes, keyed by the name of the Engram method that calls each. */
export const ROUTES = {
  remember: { method: "POST", path: "/v1/turns", query: ["wait"], body: ["TurnInput", "TurnBatch"], response: "Ingested", status: 201 },
  recall: { method: "POST", path: "/v1/recall", query: [], body: ["RecallRequest"], response: "RecallResponse", status: 200 },
  forget: { method: "POST", path: "/v1/forget", query: [], body: ["ForgetRequest"], response: "ForgetReport", status: 200 },
  forgetTurn: { method: "DELETE", path: "/v1/turns/{id}", query: ["reason", "dry_run"], body: [], response: "ForgetReport", status: 200 },
  redact: { method: "POST", path: "/v1/redact", query: [], body: ["RedactRequest"], response: "RedactReport", status: 200 },
  correctMemory: { method: "PATCH", path: "/v1/memories/{id}", query: [], body: ["MemoryCorrection"], response: "Correction", status: 200 },
  correctFact: { method: "PATCH", path: "/v1/kg/facts/{id}", query: [], body: ["FactCorrection"], response: "Correction", status: 200 },
  memories: { method: "GET", path: "/v1/memories", query: ["namespace", "type", "subject", "q", "superseded", "from", "to", "limit"], body: [], response: "MemoriesResponse", status: 200 },
  scenes: { method: "GET", path: "/v1/scenes", query: ["namespace", "session", "q", "from", "to", "limit"], body: [], response: "ScenesResponse", status: 200 },
  persona: { method: "GET", path: "/v1/persona", query: ["namespace", "speaker"], body: [], response: "PersonasResponse", status: 200 },
  kg: { method: "GET", path: "/v1/kg", query: ["entity", "namespace", "as_of", "timeline", "limit"], body: [], response: "GraphResult", status: 200 },
  turns: { method: "GET", path: "/v1/turns", query: ["namespace", "session", "before", "after", "limit"], body: [], response: "TurnsResponse", status: 200 },
  health: { method: "GET", path: "/v1/health", query: [], body: [], response: "Health", status: 200 },
  stats: { method: "GET", path: "/v1/stats", query: [], body: [], response: "Stats", status: 200 },
  jobs: { method: "GET", path: "/v1/jobs", query: [], body: [], response: "JobsResponse", status: 200 },
  reembed: { method: "POST", path: "/v1/reembed", query: [], body: ["ReembedRequest"], response: "ReembedStatus", status: 202 },
  runJob: { method: "POST", path: "/v1/jobs/{name}/run", query: [], body: [], response: "JobStatus", status: 200 },
} as const satisfies Record<string, Route>;

/** The name of a route (and of the Engram method that calls it). */
export type RouteName = keyof typeof ROUTES;
