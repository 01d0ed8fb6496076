"""The token: taken from $ENGRAM_TOKEN, refused when wrong, by a real
`engram serve` that has one configured."""

from __future__ import annotations

import os
import unittest
from unittest import mock

from engram_client import Engram, UnauthorizedError

from .engram_server import EngramServer

TOKEN = "py-client-test-token-0123456789abcdef"


class AuthTest(unittest.TestCase):
    server: EngramServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = EngramServer({"ENGRAM_TOKEN": TOKEN})
        cls.server.start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_token_from_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {"ENGRAM_TOKEN": TOKEN, "ENGRAM_URL": self.server.url}):
            mem = Engram()
        self.assertEqual(mem.url, self.server.url)
        self.assertEqual(mem.token, TOKEN)
        mem.remember("a turn behind a token", session="auth")
        self.assertIn("auth", {r.session for r in mem.recall("behind a token", mode="keyword").results})
        h = mem.health()
        self.assertIsNotNone(h.vectors)  # only sent to a client with the token

    def test_wrong_or_missing_token_is_refused(self) -> None:
        for token in ("wrong-token-0123456789abcdef", ""):
            with self.subTest(token=token):
                mem = Engram(self.server.url, token=token)
                with self.assertRaises(UnauthorizedError) as cm:
                    mem.stats()
                self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))
                with self.assertRaises(UnauthorizedError):
                    mem.remember("not written", session="auth")
                # Health answers anyone, without the parts that need the token.
                h = mem.health()
                self.assertEqual(h.status, "ok")
                self.assertIsNone(h.vectors)

    def test_url_from_engram_addr(self) -> None:
        addr = self.server.url[len("http://"):]
        env = {"ENGRAM_ADDR": addr, "ENGRAM_TOKEN": TOKEN}
        with mock.patch.dict(os.environ, env):
            os.environ.pop("ENGRAM_URL", None)
            mem = Engram()
        self.assertEqual(mem.url, self.server.url)
        self.assertGreaterEqual(mem.stats().archive.turns, 0)
        with mock.patch.dict(os.environ, {"ENGRAM_ADDR": "0.0.0.0:30001"}):
            os.environ.pop("ENGRAM_URL", None)
            self.assertEqual(Engram().url, "http://127.0.0.1:30001")


if __name__ == "__main__":
    unittest.main()
