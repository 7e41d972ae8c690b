"""How well the demo's triage agent routes on the embedded model.

Twenty fixed customer requests go, one at a time, to the triage agent of ``parley demo`` running on the
embedded model (the default weights unless ``--model-path`` names another GGUF file). Each reply is one
routing decision: the handoff tool it calls names the agent. Prints every decision, the share routed to
the right agent and the median seconds per decision. The goal is at least 90% routed right.

    .venv/bin/python -m benchmarks.local_routing [--model-path FILE.gguf] [--json] [--limit N]

Needs ``parley-llm[local]`` (``./scripts/demo`` installs it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from parley.demo.models import local_models
from parley.demo.support import BILLING, TECHNICAL, build_support_swarm

GOAL = 0.9

REQUESTS: list[tuple[str, str]] = [
    ("I was charged twice for my subscription this month.", BILLING),
    ("Can I get a refund for the annual plan I bought by mistake yesterday?", BILLING),
    ("Where do I download the invoice for my March payment? My accountant needs it.", BILLING),
    ("My credit card expired. How do I update the card you charge?", BILLING),
    ("Why did my monthly bill go up from $29 to $39?", BILLING),
    ("Please cancel my subscription, I don't need it anymore.", BILLING),
    ("I'm a student, is there a discount on the Pro plan?", BILLING),
    ("The payment failed but my bank shows the money was taken anyway.", BILLING),
    ("Hi, I'm Maria. Could you switch our team from monthly to yearly billing?", BILLING),
    ("We need our company's VAT number on all receipts.", BILLING),
    ("The desktop app crashes every time I export a PDF.", TECHNICAL),
    ("I can't log in, it says 'invalid token' even after resetting my password.", TECHNICAL),
    ("Your API has been returning 502 errors since this morning.", TECHNICAL),
    ("Sync between my phone and my laptop stopped working two days ago.", TECHNICAL),
    ("The installer fails on Windows 11 with error 0x80070005.", TECHNICAL),
    ("Hello, this is Tom. The two-factor codes never arrive by SMS, so I'm locked out.", TECHNICAL),
    ("The dashboard takes over a minute to load any page.", TECHNICAL),
    ("Since the latest update the app won't even open on my Mac.", TECHNICAL),
    ("How do I create an API key for our integration?", TECHNICAL),
    ("The export button does nothing in Firefox, but it works in Chrome.", TECHNICAL),
]


def route(triage: Any, routes: dict[str, str], request: str) -> tuple[str, str]:
    """Ask triage once; return the agent it hands off to (or why it did not) and what it said."""
    reply = triage.generate_reply(messages=[{"role": "user", "content": request, "name": "customer"}])
    if isinstance(reply, dict) and reply.get("tool_calls"):
        function = reply["tool_calls"][0]["function"]
        said = f"{function['name']}({function['arguments']})"
        return routes.get(function["name"], f"(no handoff: {function['name']})"), said
    text = reply.get("content") if isinstance(reply, dict) else reply
    return "(no handoff)", repr(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model-path", help="a GGUF file instead of the default weights")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    parser.add_argument("--limit", type=int, help="only the first LIMIT requests (a smoke run)")
    args = parser.parse_args(argv)
    requests = REQUESTS[: args.limit] if args.limit else REQUESTS

    started = time.perf_counter()
    model_for = local_models(args.model_path)
    print(f"model loaded in {time.perf_counter() - started:.1f}s", flush=True)
    swarm = build_support_swarm(model_for, with_user=False)

    right, seconds = 0, []
    for request, expected in requests:
        started = time.perf_counter()
        got, said = route(swarm.triage, swarm.routes, request)
        seconds.append(time.perf_counter() - started)
        right += got == expected
        mark = "ok  " if got == expected else "MISS"
        print(
            f"{mark} {seconds[-1]:5.2f}s  {expected:<17} -> {got:<17} {request!r}\n            {said}",
            flush=True,
        )

    share = right / len(requests)
    median = statistics.median(seconds)
    print(f"\nrouted right: {right}/{len(requests)} ({share:.0%}; goal {GOAL:.0%})")
    print(
        f"median seconds per routing decision: {median:.2f} (first, with the prompt cold: {seconds[0]:.2f})"
    )
    if args.json:
        print(json.dumps({"right": right, "total": len(requests), "share": share, "median_seconds": median}))
    return 0 if share >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
