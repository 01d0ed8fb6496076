"""Errors of the engram client.

engram answers every error with ``{"error": {"code", "message", "field"}}``
(docs/api.md, "Errors"). ``code`` is stable and is what to branch on;
``message`` is a sentence for people; ``field`` names the request field at
fault when there is one (``turns[1].session``, ``k``, ``Authorization``...).
Each code has its own subclass of ``EngramError``, so both styles work::

    try:
        mem.recall("x", k=0)
    except InvalidError as e:          # or: except EngramError as e: if e.code == "invalid"
        print(e.field)                 # "k"
"""

from __future__ import annotations

from typing import Dict, Optional, Type

__all__ = [
    "EngramError",
    "InvalidError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "MethodNotAllowedError",
    "ConflictError",
    "LockedError",
    "RequestTimeoutError",
    "TooLargeError",
    "UnsupportedMediaTypeError",
    "InternalError",
    "NotSupportedError",
    "UnavailableError",
    "NoSpaceError",
    "EngramConnectionError",
    "error_for",
]


class EngramError(Exception):
    """An error answer of the API, or (``EngramConnectionError``) no answer.

    Attributes: ``status`` (the HTTP status; 0 without an answer), ``code``
    (the API's error code; "" when the answer was not engram's error body),
    ``message``, ``field`` (None when no single field is at fault), and
    ``method`` and ``path`` of the request.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: Optional[str] = None,
        method: str = "",
        path: str = "",
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.method = method
        self.path = path
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ("%s %s: " % (self.method, self.path)) if self.method else ""
        head = "%d %s" % (self.status, self.code) if self.status else (self.code or "error")
        fld = " (field %s)" % self.field if self.field else ""
        return "%s%s%s: %s" % (where, head, fld, self.message)


class InvalidError(EngramError):
    """400 invalid: a malformed body, a bad or unknown field or parameter."""


class UnauthorizedError(EngramError):
    """401 unauthorized: a token is configured and was missing or wrong."""


class ForbiddenError(EngramError):
    """403 forbidden: a Host or Origin engram does not answer."""


class NotFoundError(EngramError):
    """404 not_found: an unknown id, entity, job, route."""


class MethodNotAllowedError(EngramError):
    """405 method_not_allowed."""


class ConflictError(EngramError):
    """409 conflict: the state forbids it now (a job or reindex running...)."""


class LockedError(ConflictError):
    """409 locked: another process owns the home."""


class RequestTimeoutError(EngramError):
    """408 timeout: the request body did not arrive in time."""


class TooLargeError(EngramError):
    """413 too_large: a body, batch, content or parameter over its limit."""


class UnsupportedMediaTypeError(EngramError):
    """415 unsupported_media_type."""


class InternalError(EngramError):
    """500 internal: a bug or unexpected failure in engram."""


class NotSupportedError(EngramError):
    """501 not_supported: not available in this configuration."""


class UnavailableError(EngramError):
    """503 unavailable: a dependency is down or the store is closing; nothing
    was acknowledged, so the client retries it (``retries``) before raising."""


class NoSpaceError(EngramError):
    """507 no_space: the server's disk is full; nothing was acknowledged."""


class EngramConnectionError(EngramError):
    """No answer: the server could not be reached, or the connection broke."""


_by_code: Dict[str, Type[EngramError]] = {
    "invalid": InvalidError,
    "unauthorized": UnauthorizedError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "method_not_allowed": MethodNotAllowedError,
    "conflict": ConflictError,
    "locked": LockedError,
    "timeout": RequestTimeoutError,
    "too_large": TooLargeError,
    "unsupported_media_type": UnsupportedMediaTypeError,
    "internal": InternalError,
    "not_supported": NotSupportedError,
    "unavailable": UnavailableError,
    "no_space": NoSpaceError,
}

# An answer without engram's error body (a proxy's page, say) still gets the
# class its status stands for.
_by_status: Dict[int, Type[EngramError]] = {
    400: InvalidError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    408: RequestTimeoutError,
    409: ConflictError,
    413: TooLargeError,
    415: UnsupportedMediaTypeError,
    500: InternalError,
    501: NotSupportedError,
    503: UnavailableError,
    507: NoSpaceError,
}


def error_for(
    status: int, code: str, message: str, field: Optional[str] = None, method: str = "", path: str = ""
) -> EngramError:
    """The EngramError subclass for an answer's code (else its status)."""
    cls = _by_code.get(code) or _by_status.get(status) or EngramError
    return cls(status, code, message, field, method, path)
