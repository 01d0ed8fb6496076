#!/usr/bin/env python3
"""examples/mcp/client.py: engram as MCP tools over stdio, from any MCP client.

Usage: python3 examples/mcp/client.py [ENGRAM [--home DIR]]
Starts `engram mcp` (ENGRAM defaults to `engram` on the PATH), initialises the
session, lists the tools, calls remember and then recall, and prints what recall
found. An MCP host (Claude Code: `claude mcp add engram -- engram mcp`) does the
same on its own; this is the exchange it has, in the standard library alone.
"""
import json
import subprocess
import sys


def main() -> int:
    cmd = sys.argv[1:] or ["engram"]
    proc = subprocess.Popen(cmd + ["mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    next_id = 0

    def call(method, params=None):
        nonlocal next_id
        next_id += 1
        msg = {"jsonrpc": "2.0", "id": next_id, "method": method}
        if params is not None:
            msg["params"] = params
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("engram mcp closed its output")
            reply = json.loads(line)
            if reply.get("id") == next_id:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                return reply["result"]

    call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "engram-example", "version": "1"}})
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    tools = [t["name"] for t in call("tools/list")["tools"]]
    print("tools:", ", ".join(sorted(tools)))
    call("tools/call", {"name": "remember", "arguments": {
        "content": "The staging database listens on port 5433.", "session": "ops", "speaker": "Ana"}})
    found = call("tools/call", {"name": "recall", "arguments": {"query": "staging database port", "k": 3}})
    result = found.get("structuredContent") or json.loads(found["content"][0]["text"])
    for r in result["results"]:
        print(f"{r['score']:.3f} {r['text']}")
    proc.stdin.close()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
