// The client in a real browser: headless Chromium loads dist/ as ES modules
// from a page and calls a real `engram serve` with the browser's own fetch.
// The page's server passes /v1/ on to engram (a reverse proxy, as a web app
// in front of engram has one); engram admits the page's Origin through
// ENGRAM_ALLOWED_ORIGINS, as docs/api.md says for a UI in development.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "./server.mjs";

const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");

// chromium is ENGRAM_TEST_CHROMIUM (scripts/test-ts-client.sh sets it from
// scripts/chromium.sh), else one on the PATH.
function chromium() {
  if (process.env.ENGRAM_TEST_CHROMIUM) return process.env.ENGRAM_TEST_CHROMIUM;
  for (const name of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
    } catch {
      // not this one
    }
  }
  return undefined;
}

const page = `<!doctype html>
<script type="module">
import { Engram, EngramError } from "/dist/index.js";
const out = {};
try {
  const engram = new Engram({ url: location.origin });
  const put = await engram.remember({ session: "browser", speaker: "Ana", content: "The browser test turn mentions a lighthouse." });
  out.ids = put.ids;
  const r = await engram.recall("lighthouse", { mode: "keyword" });
  out.recalled = r.results.map((x) => x.id);
  out.sources = r.results.map((x) => x.sources.map((s) => s.id));
  try {
    await engram.recall("x", { k: 0 });
  } catch (err) {
    out.error = { isEngramError: err instanceof EngramError, code: err.code, field: err.field, status: err.status };
  }
} catch (err) {
  out.failed = String(err && err.stack || err);
}
await fetch("/result", { method: "POST", body: JSON.stringify(out) });
</script>`;

let server, web, webUrl, gotResult;
const result = new Promise((resolve) => (gotResult = resolve));

before(async () => {
  web = http.createServer((req, res) => {
    if (req.url === "/") {
      res.writeHead(200, { "Content-Type": "text/html" });
      return res.end(page);
    }
    if (req.url === "/result" && req.method === "POST") {
      let body = "";
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        res.end();
        gotResult(JSON.parse(body));
      });
      return;
    }
    if (req.url.startsWith("/dist/")) {
      const file = normalize(join(dist, req.url.slice("/dist/".length)));
      if (!file.startsWith(dist)) return res.writeHead(404).end();
      try {
        const js = readFileSync(file);
        res.writeHead(200, { "Content-Type": "text/javascript" });
        return res.end(js);
      } catch {
        return res.writeHead(404).end();
      }
    }
    if (req.url.startsWith("/v1/")) {
      const up = new URL(server.url);
      const fwd = http.request({ host: up.hostname, port: up.port, path: req.url, method: req.method, headers: { ...req.headers, host: up.host } }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      return req.pipe(fwd);
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => web.listen(0, "127.0.0.1", r));
  webUrl = `http://127.0.0.1:${web.address().port}`;
  server = await startServer({ env: { ENGRAM_ALLOWED_ORIGINS: webUrl } });
});

after(async () => {
  await new Promise((r) => web?.close(r));
  await server?.stop();
});

test("the client runs in headless Chromium against a real server", { skip: chromium() ? false : "no chromium (scripts/chromium.sh up installs it)" }, async () => {
  const profile = mkdtempSync(join(tmpdir(), "engram-ts-chromium-"));
  const args = ["--headless", "--disable-gpu", "--no-first-run", `--user-data-dir=${profile}`, webUrl + "/"];
  if (process.getuid?.() === 0) args.unshift("--no-sandbox");
  // Its own process group, so that stopping it stops its helpers too.
  const browser = spawn(chromium(), args, { stdio: ["ignore", "ignore", "pipe"], detached: true });
  let stderr = "";
  browser.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) => browser.on("exit", (code) => resolve(code)));
  try {
    // The page reports once it has run; a browser that quits first fails.
    const out = await Promise.race([result, exited.then((code) => Promise.reject(new Error(`chromium exited (${code}) before the page reported:\n${stderr.slice(-2000)}`)))]);
    assert.equal(out.failed, undefined, out.failed);
    assert.equal(out.ids.length, 1);
    assert.deepEqual(out.recalled, out.ids);
    assert.deepEqual(out.sources, [out.ids]);
    assert.deepEqual(out.error, { isEngramError: true, code: "invalid", field: "k", status: 400 });
    const stats = await (await fetch(`${server.url}/v1/stats`)).json();
    assert.equal(stats.namespaces.default.turns, 1, "the turn the browser sent is in the server");
  } finally {
    try {
      process.kill(-browser.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await exited;
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }
});
