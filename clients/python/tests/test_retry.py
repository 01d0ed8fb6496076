"""Retries of 503 and Retry-After, against a real local HTTP server that
answers from a script (engram itself never sends Retry-After, and a 503
followed by a success cannot be provoked on it at will; test_client's
UnavailableTest checks the retries against engram's real 503)."""

from __future__ import annotations

import json
import threading
import time
import unittest
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

from engram_client import EngramError, Engram, InvalidError, UnavailableError

HEALTH = {"status": "ok", "version": "scripted", "archive_seq": 7, "indexed_seq": 7, "index_lag": 0}
UNAVAILABLE = {"error": {"code": "unavailable", "message": "the store is closing"}}

# (status, headers, body) answered in turn; the last one repeats.
Answer = Tuple[int, Dict[str, str], Any]


class Scripted:
    def __init__(self, answers: List[Answer]) -> None:
        self.answers = answers
        self.seen: List[Tuple[float, str, str, Optional[bytes], Dict[str, str]]] = []
        self.lock = threading.Lock()
        script = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def handle_one(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                with script.lock:
                    script.seen.append((time.monotonic(), self.command, self.path, body, dict(self.headers)))
                    i = min(len(script.seen), len(script.answers)) - 1
                status, headers, payload = script.answers[i]
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if "Content-Type" not in headers:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = handle_one

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "Scripted":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def gaps(self) -> List[float]:
        return [b[0] - a[0] for a, b in zip(self.seen, self.seen[1:])]


class RetryTest(unittest.TestCase):
    def test_503_then_200_is_retried_after_retry_after(self) -> None:
        with Scripted([(503, {"Retry-After": "1"}, UNAVAILABLE), (200, {}, HEALTH)]) as srv:
            h = Engram(srv.url, token="", backoff=0.01).health()
        self.assertEqual((h.version, h.archive_seq), ("scripted", 7))
        self.assertEqual(len(srv.seen), 2)
        self.assertGreaterEqual(srv.gaps()[0], 0.95)  # Retry-After's second, not the 0.01 s backoff

    def test_retry_after_as_a_date(self) -> None:
        when = formatdate(time.time() + 2, usegmt=True)
        with Scripted([(503, {"Retry-After": when}, UNAVAILABLE), (200, {}, HEALTH)]) as srv:
            Engram(srv.url, token="", backoff=0.01).health()
        self.assertEqual(len(srv.seen), 2)
        # The date has whole seconds: at least one of the two is still ahead.
        self.assertGreaterEqual(srv.gaps()[0], 0.95)

    def test_retry_after_is_capped(self) -> None:
        with Scripted([(503, {"Retry-After": "3600"}, UNAVAILABLE), (200, {}, HEALTH)]) as srv:
            Engram(srv.url, token="", max_retry_after=0.2).health()
        self.assertEqual(len(srv.seen), 2)
        self.assertGreaterEqual(srv.gaps()[0], 0.19)

    def test_backoff_doubles_without_retry_after(self) -> None:
        with Scripted([(503, {}, UNAVAILABLE)] * 3 + [(200, {}, HEALTH)]) as srv:
            Engram(srv.url, token="", retries=3, backoff=0.2, max_backoff=10).health()
        self.assertEqual(len(srv.seen), 4)
        gaps = srv.gaps()
        # Each wait is at least half of backoff * 2**attempt: 0.1, 0.2, 0.4 s.
        for i, g in enumerate(gaps):
            self.assertGreaterEqual(g, 0.2 * 2 ** i / 2 - 0.01, gaps)

    def test_gives_up_after_retries_with_the_error(self) -> None:
        with Scripted([(503, {}, UNAVAILABLE)]) as srv:
            with self.assertRaises(UnavailableError) as cm:
                Engram(srv.url, token="", retries=2, backoff=0.01).remember("x", session="s")
        self.assertEqual(len(srv.seen), 3)
        e = cm.exception
        self.assertEqual((e.status, e.code, e.message), (503, "unavailable", "the store is closing"))
        self.assertEqual((e.method, e.path), ("POST", "/v1/turns"))
        # Every attempt sent the same turn.
        self.assertEqual({s[3] for s in srv.seen}, {b'{"session": "s", "content": "x"}'})

    def test_4xx_is_not_retried(self) -> None:
        bad = {"error": {"code": "invalid", "message": "k must be between 1 and 200", "field": "k"}}
        with Scripted([(400, {}, bad), (200, {}, HEALTH)]) as srv:
            with self.assertRaises(InvalidError) as cm:
                Engram(srv.url, token="").recall("x", k=500)
        self.assertEqual(len(srv.seen), 1)
        self.assertEqual(cm.exception.field, "k")
        self.assertEqual(json.loads(srv.seen[0][3] or b""), {"query": "x", "k": 500})

    def test_an_answer_that_is_not_engrams(self) -> None:
        page = b"<html>502 Bad Gateway</html>"
        with Scripted([(502, {"Content-Type": "text/html"}, page)]) as srv:
            with self.assertRaises(EngramError) as cm:
                Engram(srv.url, token="").stats()
        self.assertEqual(len(srv.seen), 1)
        self.assertEqual((cm.exception.status, cm.exception.code), (502, ""))
        self.assertIn("502 Bad Gateway", cm.exception.message)

    def test_headers_sent(self) -> None:
        with Scripted([(200, {}, HEALTH)]) as srv:
            Engram(srv.url, token="tok-0123456789abcdef").health()
            Engram(srv.url, token="").health()
        with_token, without = srv.seen[0][4], srv.seen[1][4]
        self.assertEqual(with_token.get("Authorization"), "Bearer tok-0123456789abcdef")
        self.assertNotIn("Authorization", without)
        self.assertNotIn("Content-Type", without)  # no body, no Content-Type
        self.assertTrue(without.get("User-Agent", "").startswith("engram-client-python/"))


if __name__ == "__main__":
    unittest.main()
