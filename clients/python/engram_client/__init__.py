"""engram_client: a Python client of engram's HTTP API, standard library only.

    from engram_client import Engram

    mem = Engram()  # $ENGRAM_URL or http://127.0.0.1:30001, token from $ENGRAM_TOKEN
    mem.remember("We decided to keep the API on port 30001", session="s1", speaker="Ana")
    for r in mem.recall("which port did we pick?", k=3).results:
        print(r.score, r.text)

See clients/python/README.md and docs/api.md.
"""

from .client import DEFAULT_URL, Engram, __version__
from . import errors as _errors
from . import types as _types
from .errors import *  # noqa: F401,F403 (listed in errors.__all__)
from .types import *  # noqa: F401,F403 (listed in types.__all__)

__all__ = ["DEFAULT_URL", "Engram", "__version__"] + _errors.__all__ + _types.__all__
