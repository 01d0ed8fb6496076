"""The engram HTTP client: one class, ``Engram``, standard library only."""

from __future__ import annotations

import email.utils
import http.client
import ipaddress
import json
import os
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import errors
from .types import (
    Correction,
    ForgetReport,
    Graph,
    Health,
    JobStatus,
    Memory,
    Persona,
    RecallResult,
    RedactReport,
    ReembedStatus,
    RememberResult,
    Scene,
    Stats,
    Turn,
    TurnsPage,
    decode,
    format_time,
)

__all__ = ["Engram", "DEFAULT_URL", "__version__"]

__version__ = "0.1.0"

DEFAULT_URL = "http://127.0.0.1:30001"

Strs = Union[str, Sequence[str]]
Time = Union[datetime, str]


def _strs(v: Optional[Strs]) -> Optional[List[str]]:
    # A single string where a list is taken is one item, not its letters.
    if v is None:
        return None
    if isinstance(v, str):
        return [v]
    return list(v)


def _url_from_env(env: Dict[str, str]) -> str:
    url = env.get("ENGRAM_URL", "").strip()
    if url:
        return url
    addr = env.get("ENGRAM_ADDR", "").strip()
    if addr:
        # engram serve's own listen address; a wildcard one is reached on
        # loopback from the same machine.
        host, _, port = addr.rpartition(":")
        if host in ("", "0.0.0.0"):
            host = "127.0.0.1"
        elif host in ("[::]", "::"):
            host = "[::1]"
        return "http://%s:%s" % (host, port)
    return DEFAULT_URL


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


class Engram:
    """A client of one engram server.

    ``url`` defaults to ``$ENGRAM_URL``, else ``http://$ENGRAM_ADDR`` (the
    server's own listen address setting), else ``http://127.0.0.1:30001``.
    ``token`` defaults to ``$ENGRAM_TOKEN``, the variable ``engram serve``
    reads its token from; it is sent as ``Authorization: Bearer``.
    ``namespace`` is used by every call that takes one and is not given one
    (forget and redact use it only beside a ``session``: a call that would
    touch a whole namespace must name it).

    A 503 (``unavailable``: a dependency down, the store closing; nothing was
    acknowledged) is sent again up to ``retries`` times, waiting the
    server's ``Retry-After`` when it sends one (at most ``max_retry_after``
    seconds), else ``backoff`` seconds doubled each time up to
    ``max_backoff``, with jitter. Any other error raises at once: a 4xx means
    the request must change. ``timeout`` is the socket timeout of one
    attempt, in seconds.
    """

    def __init__(
        self,
        url: Optional[str] = None,
        *,
        token: Optional[str] = None,
        namespace: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_after: float = 60.0,
        user_agent: Optional[str] = None,
    ) -> None:
        env = os.environ
        self.url = (url or _url_from_env(dict(env))).rstrip("/")
        parts = urllib.parse.urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("url %r: want http://HOST:PORT (or https://)" % (self.url,))
        self.token = token if token is not None else (env.get("ENGRAM_TOKEN") or None)
        self.namespace = namespace
        self.timeout = timeout
        if retries < 0:
            raise ValueError("retries %d: want 0 or more" % retries)
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.user_agent = user_agent or ("engram-client-python/" + __version__)
        # A proxy set in the environment for the outside world must not see
        # the requests (and the token) meant for a server on this machine.
        handlers: List[Any] = []
        if _is_loopback(parts.hostname):
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)
        self._sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        return "Engram(%r)" % (self.url,)

    # -- turns -----------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        session: str,
        namespace: Optional[str] = None,
        role: Optional[str] = None,
        speaker: Optional[str] = None,
        ts: Optional[Time] = None,
        meta: Optional[Dict[str, Any]] = None,
        id: Optional[str] = None,
        resurrect: Optional[bool] = None,
        wait: Optional[str] = None,
    ) -> RememberResult:
        """Archives one turn (POST /v1/turns). The answer comes once the turn
        is fsync'd and, by default, searchable; ``wait="archive"`` answers
        once it is archived (for bulk imports)."""
        turn = Turn(session=session, content=content, namespace=namespace, role=role,
                    speaker=speaker, ts=ts, meta=meta, id=id, resurrect=resurrect)
        return self._post_turns(self._turn_json(turn), wait)

    def remember_batch(
        self, turns: Iterable[Union[Turn, Dict[str, Any]]], *, wait: Optional[str] = None
    ) -> RememberResult:
        """Archives a batch of turns (``Turn`` objects or dicts of the same
        fields) in one request: all of them, or none when one is refused (the
        error's ``field`` names it, e.g. ``turns[3].session``)."""
        items = [self._turn_json(t) for t in turns]
        return self._post_turns({"turns": items}, wait)

    def _turn_json(self, t: Union[Turn, Dict[str, Any]]) -> Dict[str, Any]:
        if isinstance(t, Turn):
            d = t.to_json()
        elif isinstance(t, dict):
            d = dict(t)
            if isinstance(d.get("ts"), datetime):
                d["ts"] = format_time(d["ts"], "ts")
        else:
            raise TypeError("a turn is a Turn or a dict, not %s" % type(t).__name__)
        if self.namespace is not None and d.get("namespace") is None:
            d["namespace"] = self.namespace
        return d

    def _post_turns(self, body: Dict[str, Any], wait: Optional[str]) -> RememberResult:
        return decode(RememberResult, self._call("POST", "/v1/turns", {"wait": wait}, body))

    def turns(
        self,
        *,
        session: Optional[str] = None,
        namespace: Optional[str] = None,
        after: Optional[int] = None,
        before: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> TurnsPage:
        """The stored turns (GET /v1/turns): one ``session`` in the order
        they arrived, paged with ``after``; without it, the namespace's
        timeline, newest first, paged with ``before``. ``limit``: 1 to 1000
        (default 50)."""
        query = {"namespace": self._ns(namespace), "session": session, "after": after,
                 "before": before, "limit": limit}
        return decode(TurnsPage, self._call("GET", "/v1/turns", query, None))

    # -- recall ----------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        k: Optional[int] = None,
        mode: Optional[str] = None,
        budget_tokens: Optional[int] = None,
        kinds: Optional[Strs] = None,
        as_of: Optional[Time] = None,
        namespace: Optional[str] = None,
    ) -> RecallResult:
        """Searches what engram remembers (POST /v1/recall).

        ``mode``: ``auto`` (the server's default), ``hybrid``, ``shallow``,
        ``deep`` or ``keyword``; the answer's ``mode`` is the one that ran.
        ``k``: 1 to 200 results (default 10). ``kinds``: any of ``turn``,
        ``doc``, ``memory``, ``scene``, ``fact``, ``persona``. ``as_of``: what
        was known then (a datetime with a time zone, or RFC 3339).
        ``budget_tokens``: adds ``context``, the results packed as one block
        for a prompt.
        """
        body: Dict[str, Any] = {"query": query}
        ns = namespace if namespace is not None else self.namespace
        for key, v in (("namespace", ns), ("k", k), ("mode", mode), ("budget_tokens", budget_tokens),
                       ("kinds", _strs(kinds))):
            if v is not None:
                body[key] = v
        if as_of is not None:
            body["as_of"] = format_time(as_of, "as_of")
        return decode(RecallResult, self._call("POST", "/v1/recall", None, body))

    # -- forgetting, redacting, correcting --------------------------------

    def forget(
        self,
        ids: Optional[Strs] = None,
        *,
        session: Optional[str] = None,
        namespace: Optional[str] = None,
        reason: Optional[str] = None,
        dry_run: Optional[bool] = None,
    ) -> ForgetReport:
        """Forgets turns everywhere (POST /v1/forget): the turns ``ids``, or
        every turn of ``session`` (of ``namespace``), or of ``namespace``.
        ``dry_run`` reports what would go and changes nothing."""
        if namespace is None and session is not None:
            namespace = self.namespace
        body = self._drop_none({"ids": _strs(ids), "session": session, "namespace": namespace,
                                "reason": reason, "dry_run": dry_run})
        return decode(ForgetReport, self._call("POST", "/v1/forget", None, body))

    def redact(
        self,
        texts: Strs,
        *,
        ids: Optional[Strs] = None,
        session: Optional[str] = None,
        namespace: Optional[str] = None,
        marker: Optional[str] = None,
        reason: Optional[str] = None,
        dry_run: Optional[bool] = None,
    ) -> RedactReport:
        """Replaces the spans ``texts`` (each at least 3 bytes) with
        ``marker`` (default ``[redacted]``) everywhere they were stored
        (POST /v1/redact): in the turns ``ids``, or those of ``session``, of
        ``namespace``, or of every namespace that holds a span."""
        if namespace is None and session is not None:
            namespace = self.namespace
        body = self._drop_none({"texts": _strs(texts), "ids": _strs(ids), "session": session,
                                "namespace": namespace, "marker": marker, "reason": reason,
                                "dry_run": dry_run})
        return decode(RedactReport, self._call("POST", "/v1/redact", None, body))

    def correct(
        self,
        *,
        memory: Optional[str] = None,
        fact: Optional[str] = None,
        text: Optional[str] = None,
        object: Optional[str] = None,
        wrong: Optional[bool] = None,
        restore: Optional[bool] = None,
        reason: Optional[str] = None,
    ) -> Correction:
        """Corrects a memory (``memory=ID``: ``text=`` or ``wrong=True``) or a
        knowledge-graph fact (``fact=ID``: ``object=`` or ``wrong=True``), or
        takes the corrections back (``restore=True``); PATCH
        /v1/memories/{id} or /v1/kg/facts/{id}."""
        if (memory is None) == (fact is None):
            raise ValueError("correct: give exactly one of memory=ID or fact=ID")
        body = self._drop_none({"text": text, "object": object, "wrong": wrong,
                                "restore": restore, "reason": reason})
        if memory is not None:
            path = "/v1/memories/" + _path_id(memory)
        else:
            path = "/v1/kg/facts/" + _path_id(fact or "")
        return decode(Correction, self._call("PATCH", path, None, body))

    # -- derived layers -----------------------------------------------------

    def memories(
        self,
        *,
        namespace: Optional[str] = None,
        type: Optional[str] = None,
        subject: Optional[str] = None,
        q: Optional[str] = None,
        superseded: Optional[bool] = None,
        from_: Optional[Time] = None,
        to: Optional[Time] = None,
        limit: Optional[int] = None,
    ) -> List[Memory]:
        """The L1 memories (GET /v1/memories). ``namespace="*"`` lists all;
        ``type`` is fact, decision, preference, plan or event;
        ``superseded=True`` lists replaced and wrong ones too."""
        query = {"namespace": self._ns(namespace), "type": type, "subject": subject, "q": q,
                 "superseded": superseded, "from": _opt_time(from_, "from_"),
                 "to": _opt_time(to, "to"), "limit": limit}
        ans = self._call("GET", "/v1/memories", query, None)
        return [decode(Memory, m) for m in (ans.get("memories") or [])]

    def scenes(
        self,
        *,
        namespace: Optional[str] = None,
        session: Optional[str] = None,
        q: Optional[str] = None,
        from_: Optional[Time] = None,
        to: Optional[Time] = None,
        limit: Optional[int] = None,
    ) -> List[Scene]:
        """The L2 scenes of conversations (GET /v1/scenes)."""
        query = {"namespace": self._ns(namespace), "session": session, "q": q,
                 "from": _opt_time(from_, "from_"), "to": _opt_time(to, "to"), "limit": limit}
        ans = self._call("GET", "/v1/scenes", query, None)
        return [decode(Scene, s) for s in (ans.get("scenes") or [])]

    def persona(self, speaker: Optional[str] = None, *, namespace: Optional[str] = None) -> List[Persona]:
        """The L3 profile of ``speaker``, or of every speaker (GET /v1/persona)."""
        ans = self._call("GET", "/v1/persona", {"namespace": self._ns(namespace), "speaker": speaker}, None)
        return [decode(Persona, p) for p in (ans.get("personas") or [])]

    def kg(
        self,
        entity: str,
        *,
        namespace: Optional[str] = None,
        as_of: Optional[Time] = None,
        timeline: Optional[bool] = None,
        limit: Optional[int] = None,
    ) -> Graph:
        """An entity's knowledge-graph triples now, ``as_of`` a time, or
        (``timeline=True``) all of them over time (GET /v1/kg); NotFoundError
        for an entity the graph does not have."""
        query = {"entity": entity, "namespace": self._ns(namespace), "as_of": _opt_time(as_of, "as_of"),
                 "timeline": timeline, "limit": limit}
        return decode(Graph, self._call("GET", "/v1/kg", query, None))

    # -- status and jobs ---------------------------------------------------

    def health(self) -> Health:
        """GET /v1/health (needs no token; with it, ``problems`` and ``vectors``
        are there too)."""
        return decode(Health, self._call("GET", "/v1/health", None, None))

    def stats(self) -> Stats:
        """Counts per namespace and layer, and the archive's (GET /v1/stats)."""
        return decode(Stats, self._call("GET", "/v1/stats", None, None))

    def jobs(self) -> List[JobStatus]:
        """The scheduled jobs (GET /v1/jobs)."""
        ans = self._call("GET", "/v1/jobs", None, None)
        return [decode(JobStatus, j) for j in (ans.get("jobs") or [])]

    def run_job(self, name: str) -> JobStatus:
        """Runs a scheduled job now and answers its status after the run
        (POST /v1/jobs/{name}/run): ``l1-memories``, ``l2-scenes``,
        ``l3-persona``, ``l4-graph`` bring the layers up to date at once."""
        return decode(JobStatus, self._call("POST", "/v1/jobs/%s/run" % _path_id(name), None, None))

    def reembed(self, model: str = "") -> ReembedStatus:
        """Starts embedding every turn with ``model`` (POST /v1/reembed; ""
        is the configured one); progress is in ``health().vectors.reembed``."""
        return decode(ReembedStatus, self._call("POST", "/v1/reembed", None, {"model": model}))

    # -- transport ---------------------------------------------------------

    def _ns(self, namespace: Optional[str]) -> Optional[str]:
        return namespace if namespace is not None else self.namespace

    @staticmethod
    def _drop_none(d: Dict[str, Any]) -> Dict[str, Any]:
        return {k: v for k, v in d.items() if v is not None}

    def _call(
        self, method: str, path: str, query: Optional[Dict[str, Any]], body: Optional[Dict[str, Any]]
    ) -> Dict[str, Any]:
        """Sends one request, retrying a 503, and answers the decoded JSON
        object; raises the EngramError subclass of the answer's code."""
        url = self.url + path
        if query:
            params = []
            for k, v in query.items():
                if v is None:
                    continue  # the server refuses parameters it does not take; send only those set
                params.append((k, ("true" if v else "false") if isinstance(v, bool) else str(v)))
            if params:
                url += "?" + urllib.parse.urlencode(params)
        data = None
        headers = {"Accept": "application/json", "User-Agent": self.user_agent}
        if body is not None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with self._opener.open(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    status = resp.status
                break
            except urllib.error.HTTPError as e:
                raw = e.read()
                err = self._error(method, path, e.code, raw)
                retry_after = _retry_after(e.headers.get("Retry-After") if e.headers else None)
                e.close()
                if e.code != 503 or attempt >= self.retries:
                    raise err from None
                self._sleep(self._delay(attempt, retry_after))
                attempt += 1
            except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                reason = getattr(e, "reason", e)
                if isinstance(reason, socket.timeout) or isinstance(e, socket.timeout):
                    msg = "no answer within %gs: %s" % (self.timeout, reason)
                elif isinstance(e, (http.client.HTTPException, ConnectionResetError)):
                    msg = "the connection to %s broke: %r" % (self.url, e)
                else:
                    msg = "%s is not reachable: %s (is `engram serve` running there?)" % (self.url, reason)
                raise errors.EngramConnectionError(0, "", msg, None, method, path) from None
        if not raw:
            return {}
        try:
            ans = json.loads(raw.decode("utf-8"))
        except ValueError:
            raise errors.EngramError(status, "", "the answer is not JSON: %r" % raw[:200], None, method, path) from None
        if not isinstance(ans, dict):
            raise errors.EngramError(status, "", "the answer is not a JSON object: %r" % raw[:200], None, method, path)
        return ans

    def _delay(self, attempt: int, retry_after: Optional[float]) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        d = min(self.backoff * (2 ** attempt), self.max_backoff)
        # Jitter, so that several agents refused together do not come back together.
        return d / 2 + random.random() * d / 2

    @staticmethod
    def _error(method: str, path: str, status: int, raw: bytes) -> errors.EngramError:
        try:
            body = json.loads(raw.decode("utf-8"))
            e = body["error"]
            return errors.error_for(status, str(e["code"]), str(e.get("message", "")),
                                    e.get("field") or None, method, path)
        except (ValueError, KeyError, TypeError, AttributeError):
            text = raw.decode("utf-8", "replace").strip()[:500]
            return errors.error_for(status, "", text or "HTTP %d with no body" % status, None, method, path)


def _path_id(id: str) -> str:
    # The server percent-decodes a path parameter once: every reserved
    # character of an id travels encoded (docs/api.md).
    return urllib.parse.quote(id, safe="")


def _opt_time(v: Optional[Time], name: str) -> Optional[str]:
    return None if v is None else format_time(v, name)
