"""Typed results of engram's HTTP API (docs/api.md, /v1/openapi.json).

Every answer is decoded into these dataclasses by ``decode``. The API adds
fields and never removes or renames them, so a field this version of the
client does not know lands in ``extra`` (a dict) instead of failing: an older
client keeps working against a newer server.

Times are ``datetime`` objects with a time zone (UTC as the server sends
them). A JSON key that is a Python keyword is the field's name with a
trailing underscore (``from`` is ``from_``).
"""

from __future__ import annotations

import dataclasses
import re
import sys
import typing
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional

__all__ = [
    "Turn",
    "Appended",
    "RememberResult",
    "StoredTurn",
    "TurnsPage",
    "Source",
    "Signals",
    "ContextTurn",
    "DocRef",
    "TimeRange",
    "Result",
    "RecallResult",
    "ReembedStatus",
    "VectorHealth",
    "IndexHealth",
    "Health",
    "ArchiveStats",
    "Stats",
    "Relation",
    "Memory",
    "Scene",
    "FacetChange",
    "PersonaFacet",
    "Persona",
    "Entity",
    "Triple",
    "Graph",
    "ForgetReport",
    "RedactReport",
    "Correction",
    "JobStatus",
    "decode",
    "parse_time",
    "format_time",
]


@dataclass
class Turn:
    """One turn to remember (the body of POST /v1/turns).

    ``session`` and ``content`` are required; the server fills in the rest:
    namespace ``default``, role ``user``, ``ts`` now, an id when none is given.
    """

    session: str
    content: str
    namespace: Optional[str] = None
    role: Optional[str] = None
    speaker: Optional[str] = None
    ts: Optional[Any] = None  # a datetime with a time zone, or an RFC 3339 string
    meta: Optional[Dict[str, Any]] = None
    id: Optional[str] = None
    resurrect: Optional[bool] = None

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is None:
                continue
            out[f.name] = format_time(v, "ts") if f.name == "ts" else v
        return out


@dataclass
class Appended:
    id: str
    seq: int
    duplicate: bool = False
    forgotten: bool = False
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RememberResult:
    """The answer of POST /v1/turns: the ids in the order sent."""

    ids: List[str]
    turns: List[Appended]
    warnings: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class StoredTurn:
    """A turn as engram stored it (GET /v1/turns)."""

    id: str
    seq: int
    namespace: str
    session: str
    role: str
    content: str
    ts: datetime
    speaker: Optional[str] = None
    received_at: Optional[datetime] = None
    meta: Optional[Dict[str, Any]] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class TurnsPage:
    """A page of GET /v1/turns; ``next`` is the cursor of the next page
    (``before`` for the timeline, ``after`` for a session), 0 on the last."""

    turns: List[StoredTurn]
    next: int
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Source:
    id: str
    session: Optional[str] = None
    ts: Optional[datetime] = None
    meta: Optional[Dict[str, Any]] = None
    path: Optional[str] = None
    lines: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Signals:
    vector: Optional[float] = None
    bm25: Optional[float] = None
    session: Optional[float] = None
    scene: Optional[float] = None
    neighbour: Optional[float] = None
    layer: Optional[float] = None
    kg: Optional[float] = None
    persona: Optional[float] = None
    speaker: Optional[float] = None
    decay: Optional[float] = None
    final: Optional[float] = None
    in_range: Optional[bool] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ContextTurn:
    id: str
    role: str
    text: str
    ts: datetime
    speaker: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class DocRef:
    vault: Optional[str] = None
    path: Optional[str] = None
    title: Optional[str] = None
    heading: List[str] = field(default_factory=list)
    start_line: Optional[int] = None
    end_line: Optional[int] = None
    linked_from: Optional[str] = None
    depth: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class TimeRange:
    from_: datetime
    to: datetime
    expr: str
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    """One recall result. ``sources`` are the archived turns it stems from."""

    id: str
    kind: str
    text: str
    score: float
    ts: datetime
    namespace: str
    sources: List[Source] = field(default_factory=list)
    session: Optional[str] = None
    role: Optional[str] = None
    speaker: Optional[str] = None
    meta: Optional[Dict[str, Any]] = None
    signals: Optional[Signals] = None
    context: List[ContextTurn] = field(default_factory=list)
    doc: Optional[DocRef] = None
    session_start: Optional[datetime] = None
    times: List[TimeRange] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RecallResult:
    """The answer of POST /v1/recall. ``mode`` is the mode that ran;
    ``context`` is the packed block when ``budget_tokens`` was given."""

    mode: str
    results: List[Result]
    took_ms: float
    warnings: List[str] = field(default_factory=list)
    trigger: Optional[str] = None
    time_range: Optional[TimeRange] = None
    context: Optional[str] = None
    context_tokens: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ReembedStatus:
    model: str
    state: str
    done: int
    total: int
    started: datetime
    error: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class VectorHealth:
    embedded_seq: int
    lag: int
    model: Optional[str] = None
    backend: Optional[str] = None
    chroma_lag: Optional[int] = None
    reembed_pending: Optional[str] = None
    reembed: Optional[ReembedStatus] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class IndexHealth:
    """An in-memory index a server loads in the background after it starts:
    ``state`` is loading, ready or failed; ``loaded`` and ``total`` count rows
    where the index counts them (the vectors)."""

    state: str
    loaded: Optional[int] = None
    total: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Health:
    """GET /v1/health. Without the token (when one is configured) the server
    leaves out ``problems`` and ``vectors``."""

    status: str
    version: str
    archive_seq: int
    indexed_seq: int
    index_lag: int
    skipped_turns: Optional[int] = None
    layer_lag: Dict[str, int] = field(default_factory=dict)
    vectors: Optional[VectorHealth] = None
    indexes: Dict[str, IndexHealth] = field(default_factory=dict)
    problems: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ArchiveStats:
    turns: int
    last_seq: int
    files: int
    bytes: int
    index_lag: int
    corrupt_lines: Optional[int] = None
    forgotten: Optional[int] = None
    redacted_turns: Optional[int] = None
    secrets_redacted: Dict[str, int] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Stats:
    """GET /v1/stats: ``namespaces`` maps a namespace to its layers' counts
    (``{"default": {"turns": 2, "memories": 1}}``)."""

    namespaces: Dict[str, Dict[str, int]]
    archive: ArchiveStats
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Relation:
    subject: str
    predicate: str
    object: str
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Memory:
    id: str
    namespace: str
    type: str
    text: str
    importance: float
    ts: datetime
    sources: List[str] = field(default_factory=list)
    rationale: Optional[str] = None
    subject: Optional[str] = None
    entities: List[str] = field(default_factory=list)
    valid_from: Optional[datetime] = None
    relation: Optional[Relation] = None
    superseded_by: Optional[str] = None
    seq: Optional[int] = None
    wrong: bool = False
    corrected: Optional[str] = None
    extracted_text: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Scene:
    id: str
    namespace: str
    session: str
    title: str
    summary: str
    start: datetime
    end: datetime
    turns: List[str] = field(default_factory=list)
    participants: List[str] = field(default_factory=list)
    seq: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class FacetChange:
    value: str
    from_: datetime
    to: datetime
    evidence: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class PersonaFacet:
    facet: str
    key: str
    value: str
    since: datetime
    evidence: List[str] = field(default_factory=list)
    history: List[FacetChange] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Persona:
    namespace: str
    speaker: str
    facets: List[PersonaFacet]
    updated: datetime
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Entity:
    namespace: str
    name: str
    aliases: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Triple:
    id: str
    namespace: str
    subject: str
    predicate: str
    object: str
    valid_from: datetime
    confidence: float
    sources: List[str] = field(default_factory=list)
    valid_to: Optional[datetime] = None
    memory: Optional[str] = None
    seq: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Graph:
    """GET /v1/kg: an entity and its triples."""

    entity: Entity
    triples: List[Triple]
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ForgetReport:
    turns: List[str]
    already_forgotten: List[str] = field(default_factory=list)
    unknown: List[str] = field(default_factory=list)
    memories_deleted: int = 0
    memories_updated: int = 0
    scenes_deleted: int = 0
    scenes_remade: int = 0
    facts_changed: int = 0
    persona_facets_changed: int = 0
    units_changed: int = 0
    vectors_deleted: int = 0
    archive_files_rewritten: int = 0
    previous_palace_removed: bool = False
    dry_run: bool = False
    took_ms: Optional[float] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RedactReport:
    turns: List[str]
    spans: int
    memories_rederived: int = 0
    scenes_rebuilt: int = 0
    archive_files_rewritten: int = 0
    previous_palace_removed: bool = False
    dry_run: bool = False
    took_ms: Optional[float] = None
    warnings: List[str] = field(default_factory=list)
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Correction:
    id: str
    at: datetime
    target: str
    of: str
    namespace: str
    text: Optional[str] = None
    object: Optional[str] = None
    wrong: bool = False
    restore: bool = False
    reason: Optional[str] = None
    memories: List[str] = field(default_factory=list)
    type: Optional[str] = None
    subject: Optional[str] = None
    predicate: Optional[str] = None
    original: Optional[str] = None
    sources: List[str] = field(default_factory=list)
    key: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


@dataclass
class JobStatus:
    name: str
    interval: Optional[str] = None
    last_run: Optional[datetime] = None
    last_success: Optional[datetime] = None
    next_run: Optional[datetime] = None
    lag_seconds: Optional[float] = None
    running: bool = False
    failures: int = 0
    failing: bool = False
    last_error: Optional[str] = None
    extra: Dict[str, Any] = field(default_factory=dict)


# RFC 3339 as Go writes it: up to nine fractional digits, Z or an offset.
_RFC3339 = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)$"
)


def parse_time(s: str) -> datetime:
    """Parses an RFC 3339 time as the server writes it (nanoseconds are cut
    to the microseconds a datetime holds). Raises ValueError otherwise."""
    m = _RFC3339.match(s)
    if not m:
        raise ValueError("time %r is not RFC 3339" % (s,))
    year, month, day, hour, minute, sec = (int(g) for g in m.groups()[:6])
    frac = (m.group(7) or "")[:6].ljust(6, "0")
    zone = m.group(8)
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = -1 if zone[0] == "-" else 1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return datetime(year, month, day, hour, minute, sec, int(frac), tzinfo=tz)


def format_time(v: Any, name: str) -> str:
    """An RFC 3339 string for a datetime (which must carry a time zone: a
    naive one is ambiguous) or a string, passed as it is."""
    if isinstance(v, datetime):
        if v.tzinfo is None or v.utcoffset() is None:
            raise ValueError(
                "%s: datetime %s has no time zone; give one (e.g. tzinfo=timezone.utc)" % (name, v)
            )
        return v.isoformat()
    if isinstance(v, str):
        return v
    raise TypeError("%s: want a datetime or an RFC 3339 string, got %s" % (name, type(v).__name__))


_hints_cache: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    h = _hints_cache.get(cls)
    if h is None:
        h = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        _hints_cache[cls] = h
    return h


def _convert(tp: Any, v: Any) -> Any:
    if v is None:
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union:  # Optional[X]
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(args[0], v) if len(args) == 1 else v
    if origin is list:
        (item,) = typing.get_args(tp)
        return [_convert(item, x) for x in v] if isinstance(v, list) else v
    if origin is dict:
        _, val = typing.get_args(tp)
        return {k: _convert(val, x) for k, x in v.items()} if isinstance(v, dict) else v
    if tp is datetime:
        if isinstance(v, str):
            try:
                return parse_time(v)
            except ValueError:
                return v  # kept as sent rather than lost
        return v
    if tp is float and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    if dataclasses.is_dataclass(tp) and isinstance(v, dict):
        return decode(tp, v)
    return v


T = typing.TypeVar("T")


def decode(cls: typing.Type[T], data: Dict[str, Any]) -> T:
    """Builds dataclass ``cls`` from a JSON object; keys it does not know go
    to ``extra``. A required field the server left out is an error naming it,
    since the answer is then not what the API documents."""
    if not isinstance(data, dict):
        raise ValueError("%s: want a JSON object, got %s" % (cls.__name__, type(data).__name__))
    hints = _hints(cls)
    kwargs: Dict[str, Any] = {}
    known = set()
    for f in dataclasses.fields(cls):
        if f.name == "extra":
            continue
        key = f.name[:-1] if f.name.endswith("_") else f.name
        known.add(key)
        v = _convert(hints[f.name], data.get(key))
        if v is None and typing.get_origin(hints[f.name]) is list:
            v = []  # a list the server sent as null is an empty one
        if v is not None:
            kwargs[f.name] = v
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
            raise ValueError("%s: the answer has no %s" % (cls.__name__, key))
    if any(f.name == "extra" for f in dataclasses.fields(cls)):
        kwargs["extra"] = {k: v for k, v in data.items() if k not in known}
    return cls(**kwargs)  # type: ignore[call-arg]
