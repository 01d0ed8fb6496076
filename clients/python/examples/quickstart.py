"""Give an agent a memory with engram: remember each turn, recall before answering.

Run `engram serve` first, then:

    PYTHONPATH=clients/python python3 clients/python/examples/quickstart.py

The server is $ENGRAM_URL (default http://127.0.0.1:30001); the token, when
the server has one, comes from $ENGRAM_TOKEN. The turns go to the namespace
$EXAMPLE_NAMESPACE (default "quickstart"), so that they stay apart from your
own.
"""

import os
import sys

from engram_client import Engram, EngramError, Turn


def main() -> int:
    mem = Engram(namespace=os.environ.get("EXAMPLE_NAMESPACE", "quickstart"))

    # 1. Remember a conversation: one turn, then a batch (all or nothing).
    #    With ids of your own, sending a turn again stores it once.
    mem.remember("We decided to keep the billing API on port 30001.", session="standup-1", speaker="Ana",
                 id="standup-1/1")
    mem.remember_batch([
        Turn(session="standup-1", speaker="Bob", content="Fine by me. I'll move billing to Postgres next week.",
             id="standup-1/2"),
        Turn(session="standup-1", speaker="Ana", content="I prefer tea to coffee, by the way.",
             id="standup-1/3", meta={"msg": "m-3"}),
    ])

    # 2. Before the agent answers, recall what is relevant.
    question = "Which port does the billing API use?"
    res = mem.recall(question, k=3)
    print("recall (%s) for %r:" % (res.mode, question))
    for r in res.results:
        src = ", ".join(s.id for s in r.sources)
        print("  %.3f  %s: %s  [from %s]" % (r.score, r.speaker or r.kind, r.text, src))

    # 3. Or let engram pack the results into a block for the prompt.
    packed = mem.recall("what did the team decide about billing?", mode="deep", budget_tokens=300)
    print("\nprompt context (%d tokens):\n%s" % (packed.context_tokens or 0, packed.context))

    # 4. Errors carry the API's code and the field at fault.
    try:
        mem.recall(question, k=0)
    except EngramError as e:
        print("\nrefused: code=%s field=%s: %s" % (e.code, e.field, e.message))

    print("\n%d turns in namespace %s" % (mem.stats().namespaces[mem.namespace]["turns"], mem.namespace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
