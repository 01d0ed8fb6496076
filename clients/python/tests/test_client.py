"""The client against a real `engram serve`: every call, end to end."""

from __future__ import annotations

import socket
import time
import unittest
import uuid
from datetime import datetime, timezone

from engram_client import (
    Correction,
    Engram,
    EngramConnectionError,
    EngramError,
    ForgetReport,
    Graph,
    Health,
    IndexHealth,
    InvalidError,
    Memory,
    NotFoundError,
    RecallResult,
    RedactReport,
    Result,
    Stats,
    Turn,
    UnavailableError,
)

from .engram_server import EngramServer

T0 = datetime(2026, 1, 2, 10, 0, tzinfo=timezone.utc)


def fresh(prefix: str) -> str:
    # Each test works in a namespace of its own on the shared server.
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


class ClientTest(unittest.TestCase):
    server: EngramServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = EngramServer()
        cls.server.start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def client(self, **kw: object) -> Engram:
        return Engram(self.server.url, token="", **kw)  # type: ignore[arg-type]

    def ids_of(self, res: RecallResult) -> list:
        return [r.id for r in res.results]

    def test_remember_then_recall_finds_it_in_every_mode(self) -> None:
        ns = fresh("modes")
        mem = self.client(namespace=ns)
        ans = mem.remember("We decided to keep the billing API on port 30001", session="s1",
                           speaker="Ana", id="port-1", meta={"msg": 42}, ts=T0)
        self.assertEqual(ans.ids, ["port-1"])
        self.assertEqual(ans.turns[0].id, "port-1")
        self.assertGreater(ans.turns[0].seq, 0)
        self.assertFalse(ans.turns[0].duplicate)
        mem.remember("Lunch is at noon on Fridays", session="s2", speaker="Bob", ts=T0)

        for mode in ("auto", "hybrid", "shallow", "deep", "keyword"):
            with self.subTest(mode=mode):
                res = mem.recall("which port for the billing API?", mode=mode, k=5)
                self.assertIsInstance(res, RecallResult)
                if mode == "auto":
                    self.assertIn(res.mode, ("hybrid", "deep"))
                else:
                    self.assertEqual(res.mode, mode)
                self.assertIn("port-1", self.ids_of(res))
                hit = next(r for r in res.results if r.id == "port-1")
                self.assertIsInstance(hit, Result)
                self.assertEqual(hit.kind, "turn")
                self.assertEqual(hit.namespace, ns)
                self.assertEqual(hit.speaker, "Ana")
                self.assertEqual(hit.ts, T0)
                self.assertIsInstance(hit.score, float)
                self.assertEqual(hit.meta, {"msg": 42})
                self.assertEqual([s.id for s in hit.sources], ["port-1"])
                self.assertEqual(hit.sources[0].ts, T0)
                if mode == "deep":
                    self.assertIsNotNone(hit.signals)
                    self.assertIsInstance(hit.signals.final, float)  # type: ignore[union-attr]

        # A namespace is a wall: another one does not see the turn.
        other = mem.recall("billing API port", namespace=fresh("empty"), mode="keyword")
        self.assertEqual(other.results, [])

    def test_recall_k_budget_kinds_as_of(self) -> None:
        ns = fresh("params")
        mem = self.client(namespace=ns)
        mem.remember_batch([
            Turn(session="s1", speaker="Ana", content="I live in Lisbon and I work on the billing service", ts=T0),
            Turn(session="s1", speaker="Ana", content="We decided to use Postgres for the billing service", ts=T0),
            Turn(session="s1", speaker="Bob", role="assistant", content="The billing service deploys on Tuesdays", ts=T0),
        ])
        many = mem.recall("billing service", mode="keyword", k=10)
        self.assertEqual(len(many.results), 3)
        one = mem.recall("billing service", mode="keyword", k=1)
        self.assertEqual(len(one.results), 1)

        self.assertIsNone(many.context)
        packed = mem.recall("billing service", budget_tokens=400)
        self.assertIsInstance(packed.context, str)
        self.assertIn("Postgres", packed.context)
        self.assertGreater(packed.context_tokens or 0, 0)

        # as_of: nothing was known before the turns were said.
        before = mem.recall("billing service", as_of=datetime(2025, 6, 1, tzinfo=timezone.utc))
        self.assertEqual(before.results, [])
        after = mem.recall("billing service", as_of="2026-02-01T00:00:00Z", mode="keyword")
        self.assertEqual(len(after.results), 3)
        with self.assertRaises(ValueError) as cm:
            mem.recall("billing", as_of=datetime(2026, 1, 1))
        self.assertIn("as_of", str(cm.exception))

        # kinds: only the memories derived from the turns.
        mem.run_job("l1-memories")
        only = mem.recall("which database for billing?", kinds=["memory"], mode="hybrid")
        self.assertTrue(only.results, "no memory recalled")
        self.assertEqual({r.kind for r in only.results}, {"memory"})
        self.assertTrue(any("Postgres" in r.text for r in only.results))
        turns = mem.recall("which database for billing?", kinds="turn", mode="hybrid")
        self.assertEqual({r.kind for r in turns.results}, {"turn"})

    def test_batch_duplicates_and_all_or_nothing(self) -> None:
        ns = fresh("batch")
        mem = self.client(namespace=ns)
        first = mem.remember_batch([
            {"session": "s", "content": "first of the batch", "id": "b-1"},
            Turn(session="s", content="second of the batch"),
        ])
        self.assertEqual(len(first.ids), 2)
        self.assertEqual(first.ids[0], "b-1")
        again = mem.remember_batch([{"session": "s", "content": "first of the batch", "id": "b-1"}])
        self.assertTrue(again.turns[0].duplicate)

        with self.assertRaises(InvalidError) as cm:
            mem.remember_batch([Turn(session="s", content="fine"), {"content": "no session"}])
        e = cm.exception
        self.assertEqual((e.status, e.code, e.field), (400, "invalid", "turns[1].session"))
        self.assertIn("session", e.message)
        # Nothing of the refused batch was written.
        self.assertEqual(mem.stats().namespaces[ns]["turns"], 2)

    def test_turns_pages(self) -> None:
        ns = fresh("pages")
        mem = self.client(namespace=ns)
        ids = mem.remember_batch([Turn(session="s", content="turn %d" % i, speaker="Ana",
                                       ts=datetime(2026, 1, 2, 10, i, tzinfo=timezone.utc)) for i in range(3)]).ids
        mem.remember("elsewhere", session="other", ts=datetime(2026, 1, 3, tzinfo=timezone.utc))
        first = mem.turns(session="s", limit=2)
        self.assertEqual([t.id for t in first.turns], ids[:2])
        self.assertEqual([t.content for t in first.turns], ["turn 0", "turn 1"])
        self.assertEqual(first.turns[1].ts, datetime(2026, 1, 2, 10, 1, tzinfo=timezone.utc))
        self.assertEqual((first.turns[0].namespace, first.turns[0].speaker, first.turns[0].role), (ns, "Ana", "user"))
        rest = mem.turns(session="s", after=first.next)
        self.assertEqual([t.id for t in rest.turns], ids[2:])
        self.assertEqual(rest.next, 0)
        timeline = mem.turns()
        self.assertEqual([t.content for t in timeline.turns], ["elsewhere", "turn 2", "turn 1", "turn 0"])
        with self.assertRaises(InvalidError) as cm:
            mem.turns(after=1)
        self.assertEqual(cm.exception.field, "after")

    def test_errors_carry_code_and_field(self) -> None:
        mem = self.client()
        cases = [
            (lambda: mem.recall("x", k=0), "k"),
            (lambda: mem.recall("x", mode="bogus"), "mode"),
            (lambda: mem.recall("x", kinds=["nothing"]), "kinds"),
            (lambda: mem.remember("x", session="s", role="robot"), "role"),
            (lambda: mem.remember("x", session="s", namespace="a/b"), "namespace"),
            (lambda: mem.memories(type="rumour"), "type"),
        ]
        for call, field in cases:
            with self.subTest(field=field):
                with self.assertRaises(InvalidError) as cm:
                    call()
                self.assertEqual(cm.exception.code, "invalid")
                self.assertEqual(cm.exception.status, 400)
                self.assertTrue(cm.exception.field and cm.exception.field.startswith(field), cm.exception.field)
                self.assertIn(field, str(cm.exception))
        with self.assertRaises(NotFoundError) as nf:
            mem.kg("Nobody-" + uuid.uuid4().hex)
        self.assertEqual((nf.exception.status, nf.exception.code), (404, "not_found"))
        self.assertIsInstance(nf.exception, EngramError)

    def test_layers_and_corrections(self) -> None:
        ns = fresh("layers")
        mem = self.client(namespace=ns)
        t = mem.remember("I live in Lisbon. We decided to use Postgres for the billing service.",
                         session="s1", speaker="Ana", ts=T0).ids[0]
        mem.remember("Noted, Postgres it is.", session="s1", speaker="Bob", role="assistant", ts=T0)
        for job in ("l1-memories", "l2-scenes", "l3-persona", "l4-graph"):
            st = mem.run_job(job)
            self.assertEqual(st.name, job)
            self.assertFalse(st.failing, st.last_error)

        memories = mem.memories()
        self.assertTrue(memories, "no memories derived")
        self.assertTrue(all(isinstance(m, Memory) and m.namespace == ns for m in memories))
        decision = next(m for m in memories if m.type == "decision")
        self.assertIn("Postgres", decision.text)
        self.assertEqual(decision.sources, [t])
        self.assertEqual(decision.ts, T0)
        self.assertEqual([m.id for m in mem.memories(type="decision")], [decision.id])
        self.assertEqual(mem.memories(q="Postgres", limit=1)[0].id, decision.id)
        self.assertEqual(mem.memories(from_=datetime(2027, 1, 1, tzinfo=timezone.utc)), [])

        scenes = mem.scenes(session="s1")
        self.assertEqual(len(scenes), 1)
        self.assertIn(t, scenes[0].turns)
        self.assertEqual(set(scenes[0].participants), {"Ana", "Bob"})
        self.assertEqual(mem.scenes(session="no-such-session"), [])

        personas = mem.persona("Ana")
        self.assertEqual([p.speaker for p in personas], ["Ana"])
        facets = {(f.key, f.value) for f in personas[0].facets}
        self.assertIn(("lives_in", "Lisbon"), facets)

        graph = mem.kg("Ana")
        self.assertIsInstance(graph, Graph)
        self.assertEqual(graph.entity.name, "Ana")
        lives = next(tr for tr in graph.triples if tr.predicate == "lives_in")
        self.assertEqual((lives.subject, lives.object, lives.sources), ("Ana", "Lisbon", [t]))
        self.assertEqual(mem.kg("Ana", as_of=datetime(2025, 1, 1, tzinfo=timezone.utc)).triples, [])
        self.assertTrue(mem.kg("Ana", timeline=True).triples)

        # Correct the memory's text, then take it back.
        cor = mem.correct(memory=decision.id, text="Ana and Bob chose MySQL for billing", reason="test")
        self.assertIsInstance(cor, Correction)
        self.assertEqual((cor.target, cor.of, cor.namespace), ("memory", decision.id, ns))
        now = {m.id: m for m in mem.memories()}[decision.id]
        self.assertEqual(now.text, "Ana and Bob chose MySQL for billing")
        self.assertEqual(now.corrected, cor.id)
        mem.correct(memory=decision.id, restore=True)
        self.assertEqual({m.id: m for m in mem.memories()}[decision.id].text, decision.text)

        # A fact marked wrong leaves the graph.
        fact = mem.correct(fact=lives.id, wrong=True)
        self.assertEqual((fact.target, fact.of), ("fact", lives.id))
        left = [(tr.predicate, tr.object) for tr in mem.kg("Ana").triples]
        self.assertNotIn(("lives_in", "Lisbon"), left)

        with self.assertRaises(InvalidError) as cm:
            mem.correct(memory=decision.id, object="Porto")
        self.assertEqual(cm.exception.field, "object")
        with self.assertRaises(NotFoundError):
            mem.correct(memory="mem-nonexistent", wrong=True)
        with self.assertRaises(ValueError):
            mem.correct(text="no target")

    def test_forget(self) -> None:
        ns = fresh("forget")
        mem = self.client(namespace=ns)
        a = mem.remember("The staging password rotates every Monday", session="s1").ids[0]
        b = mem.remember("The staging server is in Frankfurt", session="s1").ids[0]

        dry = mem.forget(a, dry_run=True)
        self.assertTrue(dry.dry_run)
        self.assertEqual(dry.turns, [a])
        self.assertIn(a, self.ids_of(mem.recall("staging password", mode="keyword")))

        rep = mem.forget([a], reason="asked to")
        self.assertIsInstance(rep, ForgetReport)
        self.assertEqual(rep.turns, [a])
        found = self.ids_of(mem.recall("staging", mode="keyword"))
        self.assertNotIn(a, found)
        self.assertIn(b, found)
        self.assertEqual(mem.forget([a, b]).already_forgotten, [a])
        with self.assertRaises(NotFoundError):
            mem.forget(["never-was-" + uuid.uuid4().hex])
        with self.assertRaises(InvalidError) as cm:
            mem.forget()
        self.assertIsNotNone(cm.exception.field)

        # A whole session, of the client's namespace.
        mem.remember("one more in s2", session="s2")
        self.assertEqual(len(mem.forget(session="s2").turns), 1)
        self.assertEqual(mem.recall("one more", mode="keyword").results, [])

    def test_redact(self) -> None:
        ns = fresh("redact")
        mem = self.client(namespace=ns)
        t = mem.remember("my password is hunter2-secret, keep it safe", session="s1").ids[0]
        dry = mem.redact("hunter2-secret", ids=[t], dry_run=True)
        self.assertEqual((dry.turns, dry.spans, dry.dry_run), ([t], 1, True))

        rep = mem.redact(["hunter2-secret"], ids=t, marker="[secret]", reason="a password")
        self.assertIsInstance(rep, RedactReport)
        self.assertEqual((rep.turns, rep.spans), ([t], 1))
        hit = next(r for r in mem.recall("password keep it safe", mode="keyword").results if r.id == t)
        self.assertIn("[secret]", hit.text)
        self.assertNotIn("hunter2", hit.text)
        self.assertEqual(mem.recall("hunter2", mode="keyword").results, [])
        self.assertGreaterEqual(mem.stats().archive.redacted_turns or 0, 1)

        with self.assertRaises(InvalidError) as cm:
            mem.redact("ab", ids=[t])
        self.assertEqual(cm.exception.field, "texts[0]")
        with self.assertRaises(NotFoundError):
            mem.redact("something", ids=["no-such-turn"])

    def test_health_and_stats(self) -> None:
        ns = fresh("stats")
        mem = self.client(namespace=ns)
        before = mem.health()
        mem.remember_batch([Turn(session="s", content="counted %d" % i) for i in range(3)])
        h = mem.health()
        self.assertIsInstance(h, Health)
        self.assertEqual(h.status, "ok", h.problems)
        self.assertGreaterEqual(h.archive_seq, before.archive_seq + 3)
        self.assertIsNotNone(h.vectors)
        # The indexes a server loads in the background, typed.
        self.assertIn("vectors", h.indexes)
        self.assertIsInstance(h.indexes["vectors"], IndexHealth)
        self.assertIn(h.indexes["vectors"].state, ("loading", "ready"))
        st = mem.stats()
        self.assertIsInstance(st, Stats)
        self.assertEqual(st.namespaces[ns]["turns"], 3)
        self.assertGreaterEqual(st.archive.turns, 3)
        self.assertGreaterEqual(st.archive.last_seq, h.archive_seq)
        jobs = {j.name for j in mem.jobs()}
        self.assertLessEqual({"l1-memories", "l2-scenes", "l3-persona", "l4-graph"}, jobs)

    def test_path_ids_are_encoded(self) -> None:
        # An id with reserved characters reaches the server as the same id.
        ns = fresh("ids")
        mem = self.client(namespace=ns)
        weird = "slack:C1/1699?x=1&y#z"
        mem.remember("an id with reserved characters", session="s", id=weird)
        with self.assertRaises(NotFoundError) as cm:
            mem.correct(memory=weird, wrong=True)
        self.assertIn(weird, cm.exception.message)
        self.assertEqual(mem.forget(weird).turns, [weird])

    def test_unreachable_server(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
            mem = Engram("http://127.0.0.1:%d" % s.getsockname()[1], token="")
            with self.assertRaises(EngramConnectionError) as cm:
                mem.health()
        self.assertEqual(cm.exception.status, 0)
        self.assertIn("not reachable", str(cm.exception))


class UnavailableTest(unittest.TestCase):
    """A real 503 from engram: a re-embed into an Ollama server that is not
    there. The client sends it again `retries` times, then raises; the
    server's own request counter shows every attempt."""

    def test_503_is_retried_then_raised(self) -> None:
        with socket.socket() as dead:
            dead.bind(("127.0.0.1", 0))
            ollama = "http://127.0.0.1:%d" % dead.getsockname()[1]
            with EngramServer({"ENGRAM_OLLAMA_HOST": ollama}) as srv:
                mem = Engram(srv.url, token="", retries=2, backoff=0.05)
                labels = {"method": "POST", "route": "/v1/reembed", "status": "503"}

                def refused(want: float) -> float:
                    # The counter is bumped as the answer is written: wait
                    # until it shows the requests made, then take it as it is.
                    deadline = time.monotonic() + 30
                    while True:
                        got = srv.metric("engram_http_requests_total", **labels)
                        if got >= want or time.monotonic() > deadline:
                            return got
                        time.sleep(0.02)

                self.assertEqual(refused(0), 0)
                with self.assertRaises(UnavailableError) as cm:
                    mem.reembed("ollama")
                e = cm.exception
                self.assertEqual((e.status, e.code), (503, "unavailable"))
                self.assertIn("not reachable", e.message)
                self.assertEqual(refused(3), 3)

                none = Engram(srv.url, token="", retries=0)
                with self.assertRaises(UnavailableError):
                    none.reembed("ollama")
                self.assertEqual(refused(4), 4)


if __name__ == "__main__":
    unittest.main()
