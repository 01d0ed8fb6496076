// A real `engram serve` for the tests: built from this repository (or the
// binary ENGRAM_BIN names), started on a free loopback port with a
// temporary home, stopped after.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

// The repository root, three folders up from clients/typescript/test.
const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

let built;

// engramBinary is ENGRAM_BIN, or a binary built from the repository once per
// test process (Go's build cache makes a rebuild a link).
export function engramBinary() {
  if (process.env.ENGRAM_BIN) return process.env.ENGRAM_BIN;
  if (!built) {
    const dir = mkdtempSync(join(tmpdir(), "engram-bin-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    built = join(dir, "engram");
    execFileSync(process.env.GO ?? "go", ["build", "-o", built, "./cmd/engram"], { cwd: repo, stdio: "inherit" });
  }
  return built;
}

// waitFor polls check until it answers something truthy, and throws what
// it last saw once the server has exited or `tries` polls failed.
async function waitFor(what, check, alive, tries = 600) {
  let last;
  for (let i = 0; i < tries; i++) {
    if (!alive()) throw new Error(`engram serve exited while waiting for ${what}`);
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`engram serve: no ${what} after ${tries} polls: ${last ?? "nothing"}`);
}

// startServer starts `engram serve` with a temporary home and resolves once
// /v1/health answers. env adds variables (ENGRAM_TOKEN, say).
export async function startServer({ env = {} } = {}) {
  const home = mkdtempSync(join(tmpdir(), "engram-ts-home-"));
  const log = [];
  const child = spawn(engramBinary(), ["serve", "--home", home, "--addr", "127.0.0.1:0"], {
    env: { ...process.env, ENGRAM_TOKEN: "", ENGRAM_URL: "", ENGRAM_ADDR: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => log.push(String(d)));
  child.stderr.on("data", (d) => log.push(String(d)));
  let exited = false;
  const done = new Promise((resolve) => child.on("exit", () => ((exited = true), resolve())));
  const alive = () => !exited;
  try {
    // serve.json names the port the kernel chose, once this process owns the home.
    const addr = await waitFor("serve.json", () => {
      const info = JSON.parse(readFileSync(join(home, "serve.json"), "utf8"));
      return info.pid === child.pid && info.addr;
    }, alive);
    const url = `http://${addr}`;
    await waitFor("/v1/health", async () => (await fetch(`${url}/v1/health`)).ok, alive);
    return {
      url,
      home,
      log,
      async stop() {
        if (!exited) {
          child.kill("SIGTERM");
          await done;
        }
        rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child.kill("SIGKILL");
    await done;
    rmSync(home, { recursive: true, force: true });
    throw new Error(`${err.message}\n--- engram serve's log:\n${log.join("")}`);
  }
}

export { repo };
