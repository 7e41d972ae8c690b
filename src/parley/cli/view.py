"""``parley view``: a chat's trace as a page in the browser, served on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
import sys

VIEW_HELP = (
    "Serve a chat's JSONL trace as a page on 127.0.0.1: the conversation, the handoff graph with the path "
    "taken, context variables over time, and tokens, latency and cost per agent."
)


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``parley view`` to the command line."""
    view = commands.add_parser("view", help=VIEW_HELP, description=VIEW_HELP)
    view.add_argument("trace", metavar="TRACE.jsonl", help="the trace file (it may still be growing)")
    view.add_argument("--port", type=int, default=0, help="the port to serve on (default: a free one)")

    view.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``parley view``."""
    from parley.viewer import TraceServer

    if not os.path.isfile(args.trace):
        print(f"parley view: no trace file at {args.trace}", file=sys.stderr)
        return 1
    try:
        server = TraceServer(args.trace, port=args.port)
    except OSError as error:
        print(
            f"parley view: cannot serve on 127.0.0.1:{args.port}: {error.strerror or error}", file=sys.stderr
        )
        return 1
    print(f"parley view: {args.trace} at {server.url} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
