// The client cannot drift from the API: its types, route table and methods
// are compared with the /v1/openapi.json of a running server, and the
// server's real answers with the schemas the client's types stand for.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Engram, ROUTES } from "../dist/index.js";
import { startServer } from "./server.mjs";
import { loadClientTypes, checkTypes, checkRoutes, conforms } from "./openapi.mjs";

let server, spec, types;
const requestSchemas = new Set(Object.values(ROUTES).flatMap((r) => r.body));

before(async () => {
  server = await startServer();
  const res = await fetch(`${server.url}/v1/openapi.json`);
  assert.equal(res.status, 200);
  spec = await res.json();
  types = loadClientTypes();
});
after(() => server?.stop());

test("every tagged interface agrees with its schema", () => {
  assert.ok(types.interfaces.size >= 40, `only ${types.interfaces.size} tagged interfaces found`);
  assert.deepEqual(checkTypes(spec, types, requestSchemas), []);
});

test("every schema a route sends or answers has a client interface", () => {
  const named = Object.values(ROUTES).flatMap((r) => [...r.body, r.response]);
  const missing = named.filter((n) => !types.interfaces.has(n));
  assert.deepEqual(missing, []);
});

test("every route and method of the client is the API's", () => {
  assert.deepEqual(checkRoutes(spec, ROUTES, types), []);
});

test("the checks catch a drift", () => {
  const drifted = structuredClone(spec);
  const s = drifted.components.schemas;
  delete s.Result.properties.sources; // a field the client declares is gone
  s.Memory.properties.pinned = { type: "boolean" }; // the API grew a field
  s.RecallRequest.properties.k.type = "string";
  s.RecallRequest.properties.mode.enum = s.RecallRequest.properties.mode.enum.filter((m) => m !== "hybrid");
  s.Error.properties.error.properties.code.enum.push("teapot");
  drifted.paths["/v1/memories"].get.parameters = drifted.paths["/v1/memories"].get.parameters.filter((p) => p.name !== "subject");
  drifted.paths["/v1/recall"].post.responses["200"].content["application/json"].schema = { $ref: "#/components/schemas/Stats" };
  delete drifted.paths["/v1/redact"];
  const problems = [...checkTypes(drifted, types, requestSchemas), ...checkRoutes(drifted, ROUTES, types)].join("\n");
  for (const want of [
    "Result (@schema Result).sources: the API's Result has no field sources",
    "the API's Memory has field pinned",
    "RecallRequest (@schema RecallRequest).k: the API's field is a string",
    `"hybrid" is not one of the API's values`,
    `the API's Error.error.code has "teapot"`,
    "ROUTES.memories (GET /v1/memories): the API takes no query parameter subject",
    "ROUTES.recall (POST /v1/recall): the API answers 200 with Stats",
    "ROUTES.redact (POST /v1/redact): the API has no such operation",
  ]) {
    assert.ok(problems.includes(want), `the drift "${want}" is not reported; reported:\n${problems}`);
  }
});

test("the server's answers to every call conform to the schemas", async () => {
  const engram = new Engram({ url: server.url });
  const seen = new Map();
  const check = async (name, promise) => {
    const answer = await promise;
    const schema = { $ref: `#/components/schemas/${ROUTES[name].response}` };
    assert.deepEqual(conforms(spec, schema, answer, name), [], `${name}: ${JSON.stringify(answer).slice(0, 400)}`);
    seen.set(name, answer);
    return answer;
  };
  const ts = "2026-03-02T10:00:00Z";
  await check("remember", engram.remember({ session: "s1", speaker: "Ana", content: "I live in Lisbon and I decided to use Postgres for billing.", id: "t-1", ts, meta: { msg: 1 } }));
  await check("remember", engram.remember([
    { session: "s1", role: "assistant", content: "Noted: Postgres for billing.", ts },
    { session: "s1", id: "t-1", content: "again", ts },
  ]));
  for (const job of ["l1-memories", "l2-scenes", "l3-persona", "l4-graph"]) await check("runJob", engram.runJob(job));
  await check("recall", engram.recall("which database for billing?", { mode: "deep", k: 3, budget_tokens: 200 }));
  await check("recall", engram.recall("Postgres", { mode: "keyword", kinds: ["memory", "turn", "scene", "fact", "persona"] }));
  const { memories } = await check("memories", engram.memories({ namespace: "*" }));
  assert.ok(memories.length > 0, "the l1-memories job made no memory: the layer answers prove little");
  await check("scenes", engram.scenes());
  await check("persona", engram.persona({ speaker: "Ana" }));
  const graph = await check("kg", engram.kg("Ana", { timeline: true }));
  assert.ok(graph.triples.length > 0, "the l4-graph job made no fact");
  await check("correctMemory", engram.correctMemory(memories[0].id, { text: "Ana lives in Porto", reason: "she moved" }));
  await check("correctFact", engram.correctFact(graph.triples[0].id, { wrong: true }));
  await check("turns", engram.turns({ session: "s1" }));
  await check("health", engram.health());
  await check("stats", engram.stats());
  await check("jobs", engram.jobs());
  await check("redact", engram.redact({ texts: ["Postgres"], dry_run: true }));
  await check("forget", engram.forget({ session: "s1", dry_run: true }));
  await check("forgetTurn", engram.forgetTurn("t-1", { reason: "test", dry_run: true }));
  // A re-embed starts only with a second embedding model, which needs a
  // model server; here it is refused, and its error body checked.
  await assert.rejects(engram.reembed("builtin"), (err) => err.code === "conflict" && err.status === 409);
  seen.set("reembed", "refused");
  assert.deepEqual([...Object.keys(ROUTES)].filter((n) => !seen.has(n)), [], "routes the test did not call");
});
