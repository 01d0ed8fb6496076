// The README's example runs as written against a real server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { startServer } from "./server.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.stop());

test("examples/quickstart.mjs remembers and recalls", async () => {
  const script = fileURLToPath(new URL("../examples/quickstart.mjs", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script], { env: { ...process.env, ENGRAM_URL: server.url, ENGRAM_TOKEN: "" } });
  assert.match(stdout, /^recall \((shallow|hybrid|deep|keyword)\):$/m);
  assert.match(stdout, /Ana: Let's keep the billing service on Postgres 16\.\s+\[from \S+\]/);
  assert.match(stdout, /refused: invalid on k: /);
  const stats = await (await fetch(`${server.url}/v1/stats`)).json();
  assert.equal(stats.archive.turns, 3);
});
