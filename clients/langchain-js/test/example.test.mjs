// The README's LangChain.js example runs as written against a real server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { startServer } from "../../typescript/test/server.mjs";

let server;
before(async () => {
  server = await startServer();
});
after(() => server?.stop());

test("examples/agent-memory.mjs stores the chat and recalls into the prompt", async () => {
  const script = fileURLToPath(new URL("../examples/agent-memory.mjs", import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script], { env: { ...process.env, ENGRAM_URL: server.url, ENGRAM_TOKEN: "" } });
  assert.match(stdout, /^system: You are Ana's assistant\. What you remember:$/m);
  assert.match(stdout, /^- Ana \(\S+\): We're moving the billing service to Postgres 16 next sprint\. \[turns \S+\]$/m);
  assert.match(stdout, /^human: We're moving the billing service/m);
  assert.match(stdout, /^ai: Got it: billing moves to Postgres 16 next sprint\.$/m);
  assert.match(stdout, /^human: Which database will billing use\?$/m);
});
