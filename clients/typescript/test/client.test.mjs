// The client against a real `engram serve`: every call, its options, the
// API's errors, the token, and retries of 503.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { Engram, EngramError, DEFAULT_URL } from "../dist/index.js";
import { startServer } from "./server.mjs";

const TS = "2026-03-02T10:00:00Z";

// rejects asserts that promise fails with an EngramError of that code (and
// field, status when given).
async function rejects(promise, { code, field, status }) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof EngramError, `not an EngramError: ${err}`);
    assert.equal(err.code, code, err.message);
    if (field !== undefined) assert.equal(err.field, field, err.message);
    if (status !== undefined) assert.equal(err.status, status);
    return true;
  });
}

describe("against a server without a token", () => {
  let server, engram;
  before(async () => {
    server = await startServer();
    engram = new Engram({ url: server.url });
  });
  after(() => server?.stop());

  test("remember takes one turn and a batch, and marks a duplicate", async () => {
    const one = await engram.remember({ session: "s1", speaker: "Ana", content: "The deploy key rotates every Friday", id: "t-key", ts: TS, meta: { msg: "42" } });
    assert.deepEqual(one.ids, ["t-key"]);
    assert.equal(one.turns[0].duplicate, undefined);
    const batch = await engram.remember([
      { session: "s1", role: "assistant", content: "Noted: Friday rotation.", ts: new Date(TS) },
      { session: "s1", id: "t-key", content: "The deploy key rotates every Friday", ts: TS },
      { session: "s2", namespace: "work", speaker: "Bo", content: "The deploy key of work rotates monthly", ts: "2026-03-05T10:00:00Z" },
    ]);
    assert.equal(batch.ids.length, 3);
    assert.equal(batch.ids[1], "t-key");
    assert.equal(batch.turns[1].duplicate, true);
    const archived = await engram.remember({ session: "s3", content: "bulk line" }, { wait: "archive" });
    assert.equal(archived.ids.length, 1);
    const { turns } = await engram.turns({ session: "s1" });
    assert.deepEqual(turns.map((t) => t.content), ["The deploy key rotates every Friday", "Noted: Friday rotation."]);
    assert.equal(turns[1].ts, TS, "a Date ts is sent as its ISO string");
  });

  test("a batch with one bad turn is refused naming the field, and writes nothing", async () => {
    const turnsBefore = (await engram.stats()).archive.turns;
    await rejects(engram.remember([{ session: "s1", content: "ok" }, { content: "no session" }]), { code: "invalid", field: "turns[1].session", status: 400 });
    assert.equal((await engram.stats()).archive.turns, turnsBefore);
  });

  test("recall finds the turn with its source, in the namespace asked", async () => {
    const r = await engram.recall("when does the deploy key rotate?", { k: 5 });
    const hit = r.results.find((x) => x.id === "t-key");
    assert.ok(hit, JSON.stringify(r));
    assert.equal(hit.kind, "turn");
    assert.deepEqual(hit.sources.map((s) => s.id), ["t-key"]);
    assert.deepEqual(hit.sources[0].meta, { msg: "42" });
    assert.ok(r.results.every((x) => x.namespace === "default"));
    const work = await engram.recall("deploy key rotation", { namespace: "work" });
    assert.ok(work.results.length > 0 && work.results.every((x) => x.namespace === "work"), JSON.stringify(work));
    const one = await engram.recall("deploy key", { k: 1 });
    assert.equal(one.results.length, 1);
  });

  test("recall runs every mode", async () => {
    for (const mode of ["shallow", "hybrid", "deep", "keyword"]) {
      const r = await engram.recall("deploy key", { mode });
      assert.equal(r.mode, mode);
      assert.ok(r.results.some((x) => x.id === "t-key"), `${mode}: ${JSON.stringify(r)}`);
      if (mode === "deep") assert.equal(typeof r.results[0].signals?.final, "number");
    }
    const auto = await engram.recall("deploy key");
    assert.notEqual(auto.mode, "auto", "the answer names the mode that ran");
  });

  test("recall packs a context block within budget_tokens", async () => {
    const r = await engram.recall("deploy key", { budget_tokens: 300 });
    assert.match(r.context ?? "", /deploy key rotates every Friday/);
    assert.ok(r.context_tokens > 0 && r.context_tokens <= 300, String(r.context_tokens));
  });

  test("recall as_of leaves out what was not known then", async () => {
    const then = await engram.recall("deploy key", { as_of: new Date("2026-01-01T00:00:00Z") });
    assert.deepEqual(then.results, []);
    const later = await engram.recall("deploy key", { as_of: "2026-03-03T00:00:00Z", mode: "keyword" });
    assert.ok(later.results.some((x) => x.id === "t-key"));
  });

  test("recall refuses a bad k and mode naming the field", async () => {
    await rejects(engram.recall("x", { k: 0 }), { code: "invalid", field: "k", status: 400 });
    await rejects(engram.recall("x", { mode: "loud" }), { code: "invalid", field: "mode" });
    await rejects(engram.recall("x", { kinds: ["nope"] }), { code: "invalid" });
  });

  test("the layers: memories, scenes, persona, kg, and recall by kinds", async () => {
    await engram.remember({ session: "s4", speaker: "Ana", content: "I live in Lisbon and I decided to use Postgres for billing.", id: "t-ana", ts: TS });
    for (const job of ["l1-memories", "l2-scenes", "l3-persona", "l4-graph"]) {
      const st = await engram.runJob(job);
      assert.equal(st.name, job);
      assert.equal(st.failing, false, st.last_error);
    }
    const { memories } = await engram.memories({ subject: "Ana" });
    assert.ok(memories.some((m) => m.sources.includes("t-ana") && /Lisbon/.test(m.text)), JSON.stringify(memories));
    const decisions = await engram.memories({ type: "decision", q: "Postgres", limit: 5 });
    assert.ok(decisions.memories.length > 0 && decisions.memories.every((m) => m.type === "decision"));
    const { scenes } = await engram.scenes({ session: "s4" });
    assert.ok(scenes.length > 0 && scenes.every((s) => s.session === "s4" && s.turns.includes("t-ana")));
    const { personas } = await engram.persona({ speaker: "Ana" });
    assert.ok(personas[0]?.facets.some((f) => f.value === "Lisbon"), JSON.stringify(personas));
    const graph = await engram.kg("Ana");
    assert.equal(graph.entity.name, "Ana");
    assert.ok(graph.triples.some((t) => t.object === "Lisbon" && t.sources.includes("t-ana")));
    await rejects(engram.kg("Nobody"), { code: "not_found", status: 404 });
    const r = await engram.recall("where does Ana live?", { kinds: ["memory"] });
    assert.ok(r.results.length > 0 && r.results.every((x) => x.kind === "memory"), JSON.stringify(r));
    assert.ok(r.results.some((x) => x.sources.some((s) => s.id === "t-ana")));
    const { jobs } = await engram.jobs();
    assert.ok(jobs.some((j) => j.name === "l1-memories"));
  });

  test("correctMemory and correctFact change what the layers answer", async () => {
    const { memories } = await engram.memories({ subject: "Ana", q: "Lisbon" });
    const m = memories[0];
    const c = await engram.correctMemory(m.id, { text: "Ana lives in Porto", reason: "she moved" });
    assert.equal(c.target, "memory");
    assert.equal(c.of, m.id);
    const after = await engram.memories({ subject: "Ana" });
    assert.ok(after.memories.some((x) => x.id === m.id && x.text === "Ana lives in Porto" && x.corrected === c.id));
    await rejects(engram.correctMemory(m.id, { object: "Porto" }), { code: "invalid", field: "object" });
    await rejects(engram.correctMemory("mem-nope", { wrong: true }), { code: "not_found" });
    const graph = await engram.kg("Ana");
    const fact = graph.triples.find((t) => t.predicate !== "lives_in") ?? graph.triples[0];
    const fc = await engram.correctFact(fact.id, { wrong: true, reason: "not so" });
    assert.equal(fc.target, "fact");
    const again = await engram.kg("Ana");
    assert.ok(!again.triples.some((t) => t.subject === fact.subject && t.predicate === fact.predicate && t.object === fact.object));
  });

  test("redact replaces a span everywhere", async () => {
    await engram.remember({ session: "s5", content: "my password is hunter2, keep it", id: "t-pw" });
    const dry = await engram.redact({ texts: ["hunter2"], dry_run: true });
    assert.deepEqual(dry.turns, ["t-pw"]);
    assert.equal((await engram.turns({ session: "s5" })).turns[0].content, "my password is hunter2, keep it");
    const rep = await engram.redact({ texts: ["hunter2"], ids: ["t-pw"], marker: "[secret]", reason: "a password" });
    assert.equal(rep.spans, 1);
    assert.equal((await engram.turns({ session: "s5" })).turns[0].content, "my password is [secret], keep it");
    await rejects(engram.redact({ texts: ["ab"] }), { code: "invalid", field: "texts[0]" });
  });

  test("forget and forgetTurn remove turns from recall", async () => {
    await engram.remember([
      { session: "s6", content: "the zebra code is Z-77", id: "t-z1" },
      { session: "s6", content: "the zebra door is blue", id: "t-z2" },
      { session: "s7", content: "the zebra lamp is green", id: "t-z3" },
    ]);
    const dry = await engram.forget({ ids: ["t-z1"], dry_run: true });
    assert.deepEqual(dry.turns, ["t-z1"]);
    assert.ok((await engram.recall("zebra", { mode: "keyword" })).results.some((r) => r.id === "t-z1"));
    const rep = await engram.forget({ ids: ["t-z1", "t-unknown"], reason: "asked" });
    assert.deepEqual(rep.turns, ["t-z1"]);
    assert.deepEqual(rep.unknown, ["t-unknown"]);
    const again = await engram.forget({ ids: ["t-z1"] });
    assert.deepEqual(again.already_forgotten, ["t-z1"]);
    const one = await engram.forgetTurn("t-z3", { reason: "asked" });
    assert.deepEqual(one.turns, ["t-z3"]);
    const session = await engram.forget({ session: "s6" });
    assert.deepEqual(session.turns, ["t-z2"]);
    const left = await engram.recall("zebra", { mode: "keyword" });
    assert.deepEqual(left.results.filter((r) => r.id.startsWith("t-z")), []);
    await rejects(engram.forgetTurn("t-never"), { code: "not_found", status: 404 });
    await rejects(engram.forget({ ids: ["t-z2"], session: "s6" }), { code: "invalid" });
  });

  test("health and stats", async () => {
    const h = await engram.health();
    assert.equal(h.status, "ok", JSON.stringify(h));
    assert.ok(h.archive_seq > 0);
    const s = await engram.stats();
    assert.ok(s.namespaces.default.turns > 0);
    assert.equal(s.namespaces.work.turns, 1);
  });

  test("bad arguments are refused before anything is sent, naming them", async () => {
    assert.throws(() => new Engram({ url: "localhost:30001" }), /url "localhost:30001" is not http or https/);
    assert.throws(() => new Engram({ url: "not a url" }), /url "not a url" is not a URL/);
    assert.throws(() => new Engram({ url: server.url, retries: -1 }), /retries -1/);
    await assert.rejects(engram.memories({ speaker: "Ana" }), /takes no query parameter "speaker"/);
    await assert.rejects(engram.forgetTurn(""), /id is required/);
    await assert.rejects(engram.kg(""), /entity is required/);
  });

  test("an id with reserved characters reaches the server percent-encoded", async () => {
    await engram.remember({ session: "s8", content: "slack message", id: "slack:C1/1699?x" });
    const rep = await engram.forgetTurn("slack:C1/1699?x", { dry_run: true });
    assert.deepEqual(rep.turns, ["slack:C1/1699?x"]);
  });

  test("ENGRAM_URL, else ENGRAM_ADDR, is the default url, and a caller's signal aborts", async () => {
    const saved = { url: process.env.ENGRAM_URL, addr: process.env.ENGRAM_ADDR };
    try {
      process.env.ENGRAM_URL = server.url;
      process.env.ENGRAM_ADDR = "127.0.0.1:1";
      assert.equal(new Engram().url, server.url);
      assert.equal((await new Engram().health()).status, "ok");
      delete process.env.ENGRAM_URL;
      process.env.ENGRAM_ADDR = `0.0.0.0:${new URL(server.url).port}`;
      assert.equal(new Engram().url, server.url);
      process.env.ENGRAM_ADDR = "[::]:30009";
      assert.equal(new Engram().url, "http://[::1]:30009");
      delete process.env.ENGRAM_ADDR;
      assert.equal(new Engram().url, DEFAULT_URL);
    } finally {
      for (const [k, v] of [["ENGRAM_URL", saved.url], ["ENGRAM_ADDR", saved.addr]]) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    const ctrl = new AbortController();
    ctrl.abort();
    await rejects(engram.health({ signal: ctrl.signal }), { code: "aborted" });
  });
});

describe("against a server with a token", () => {
  const token = "ts-client-test-token-0123456789";
  let server;
  before(async () => {
    server = await startServer({ env: { ENGRAM_TOKEN: token } });
  });
  after(() => server?.stop());

  test("a call without the token is unauthorized; health needs none", async () => {
    const saved = process.env.ENGRAM_TOKEN;
    delete process.env.ENGRAM_TOKEN;
    try {
      const anon = new Engram({ url: server.url });
      await rejects(anon.stats(), { code: "unauthorized", status: 401 });
      assert.equal((await anon.health()).status, "ok");
      await rejects(new Engram({ url: server.url, token: "wrong-token-0123456789" }).stats(), { code: "unauthorized" });
    } finally {
      if (saved !== undefined) process.env.ENGRAM_TOKEN = saved;
    }
  });

  test("the token comes from the options or ENGRAM_TOKEN", async () => {
    const withOption = new Engram({ url: server.url, token });
    await withOption.remember({ session: "s1", content: "with a token" });
    assert.equal((await withOption.stats()).archive.turns, 1);
    const saved = process.env.ENGRAM_TOKEN;
    process.env.ENGRAM_TOKEN = token;
    try {
      assert.equal((await new Engram({ url: server.url }).stats()).archive.turns, 1);
    } finally {
      if (saved === undefined) delete process.env.ENGRAM_TOKEN;
      else process.env.ENGRAM_TOKEN = saved;
    }
  });
});

describe("when a model server is down", () => {
  let server, dead;
  before(async () => {
    // A port nothing listens on stands for the Ollama server that is down.
    dead = http.createServer();
    await new Promise((r) => dead.listen(0, "127.0.0.1", r));
    const ollama = `http://127.0.0.1:${dead.address().port}`;
    await new Promise((r) => dead.close(r));
    server = await startServer({ env: { ENGRAM_OLLAMA_HOST: ollama } });
  });
  after(() => server?.stop());

  // refused reads engram's own count of the 503s it answered on /v1/reembed.
  async function refused() {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith("engram_http_requests_total{") && l.includes('route="/v1/reembed"') && l.includes('status="503"'));
    return line ? Number(line.split(" ").pop()) : 0;
  }

  // waitCount polls until engram's count reaches want (the counter is
  // bumped as the answer is written), and answers the count then.
  async function waitCount(want) {
    let got = await refused();
    for (let i = 0; i < 200 && got < want; i++) {
      await new Promise((r) => setTimeout(r, 25));
      got = await refused();
    }
    return got;
  }

  test("engram's own 503 is retried, then thrown as unavailable", async () => {
    assert.equal(await refused(), 0);
    await rejects(new Engram({ url: server.url, retries: 2, retryDelayMs: 1 }).reembed("ollama"), { code: "unavailable", status: 503 });
    assert.equal(await waitCount(3), 3, "one try and two retries reached engram");
    await rejects(new Engram({ url: server.url, retries: 0 }).reembed("ollama"), { code: "unavailable" });
    assert.equal(await waitCount(4), 4);
  });
});

describe("when engram is unavailable", () => {
  let server, proxy, proxyUrl;
  // failures is how many requests the proxy answers 503 before it passes
  // them to the real server; attempts counts what reached it.
  let failures = 0;
  let attempts = 0;
  let retryAfter;
  // hang: the proxy reads requests and never answers them.
  let hang = false;
  before(async () => {
    server = await startServer();
    const upstream = new URL(server.url);
    // A proxy in front of the real server stands for a store that is
    // closing or a dependency that is down: engram's own 503s come only
    // from such states, which a test cannot hold open on demand.
    proxy = http.createServer((req, res) => {
      attempts++;
      if (hang) return;
      if (failures > 0) {
        failures--;
        const headers = { "Content-Type": "application/json" };
        if (retryAfter !== undefined) headers["Retry-After"] = retryAfter;
        res.writeHead(503, headers);
        res.end(JSON.stringify({ error: { code: "unavailable", message: "the store is closing" } }));
        return;
      }
      const fwd = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      req.pipe(fwd);
    });
    await new Promise((r) => proxy.listen(0, "127.0.0.1", r));
    proxyUrl = `http://127.0.0.1:${proxy.address().port}`;
  });
  after(async () => {
    proxy?.closeAllConnections();
    await new Promise((r) => proxy?.close(r));
    await server?.stop();
  });

  test("a 503 is retried until the server answers", async () => {
    const engram = new Engram({ url: proxyUrl, retries: 3, retryDelayMs: 1 });
    failures = 2;
    attempts = 0;
    const res = await engram.remember({ session: "s1", content: "sent through a flaky proxy" });
    assert.equal(attempts, 3);
    assert.equal(res.ids.length, 1);
    assert.equal((await engram.stats()).archive.turns, 1, "the retried turn was archived once");
  });

  test("a 503 past the retries is an unavailable error; Retry-After is honoured", async () => {
    const engram = new Engram({ url: proxyUrl, retries: 2, retryDelayMs: 60_000 });
    failures = 10;
    attempts = 0;
    retryAfter = "0";
    try {
      await rejects(engram.recall("anything"), { code: "unavailable", status: 503 });
    } finally {
      retryAfter = undefined;
      failures = 0;
    }
    assert.equal(attempts, 3, "one try and two retries");
    const never = new Engram({ url: proxyUrl, retries: 0 });
    failures = 1;
    attempts = 0;
    await rejects(never.health(), { code: "unavailable" });
    assert.equal(attempts, 1);
  });

  test("a server that does not answer is a client_timeout, not retried", async () => {
    hang = true;
    attempts = 0;
    try {
      await rejects(new Engram({ url: proxyUrl, timeoutMs: 200 }).health(), { code: "client_timeout", status: 0 });
    } finally {
      hang = false;
    }
    assert.equal(attempts, 1);
  });

  test("a server that is not there is a network error", async () => {
    const closed = http.createServer();
    await new Promise((r) => closed.listen(0, "127.0.0.1", r));
    const port = closed.address().port;
    await new Promise((r) => closed.close(r));
    await rejects(new Engram({ url: `http://127.0.0.1:${port}` }).health(), { code: "network", status: 0 });
  });
});
