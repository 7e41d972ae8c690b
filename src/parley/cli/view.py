"""``parley view``: a chat's trace as a page in the browser, served on 127.0.0.1."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

VIEW_HELP = (
    "Serve a chat's JSONL trace, or a chat a store keeps (parley view STORE CHAT_ID), as a page on "
    "127.0.0.1: the conversation, the handoff graph with the path taken, context variables over time, "
    "and tokens, latency and cost per agent."
)


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``parley view`` to the command line."""
    view = commands.add_parser("view", help=VIEW_HELP, description=VIEW_HELP)
    view.add_argument(
        "trace",
        metavar="TRACE.jsonl|STORE",
        help="the trace file (it may still be growing), or a store's URL",
    )
    view.add_argument("chat_id", nargs="?", help="with a store: the chat to show")
    view.add_argument("--port", type=_port, default=0, help="the port to serve on (default: a free one)")

    view.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``parley view``."""
    from parley.viewer import TraceServer

    source: Any = args.trace
    name = args.trace
    is_url = "://" in args.trace
    if args.chat_id is not None and not is_url and os.path.isfile(args.trace):
        print(
            f"parley view: {args.trace} is a trace file, which shows every chat it holds: give no CHAT_ID "
            "(a CHAT_ID picks a chat of a store)",
            file=sys.stderr,
        )
        return 2
    if args.chat_id is not None:
        source, name, status = _stored_chat(args.trace, args.chat_id)
        if source is None:
            return status
    elif is_url:
        print(
            f"parley view: a store needs the chat to show: parley view {args.trace} CHAT_ID "
            f"(parley chats list {args.trace} lists its chats)",
            file=sys.stderr,
        )
        return 2
    elif not os.path.isfile(args.trace):
        print(f"parley view: no trace file at {args.trace}", file=sys.stderr)
        return 1
    try:
        server = TraceServer(source, port=args.port, name=name)
    except OSError as error:
        print(
            f"parley view: cannot serve on 127.0.0.1:{args.port}: {error.strerror or error}", file=sys.stderr
        )
        return 1
    # The server answers from a thread of its own, so that Ctrl-C lands here, in a sleep, and not inside
    # the server's own code (starting a request's thread, say), where it would be taken for a failed
    # request and the server would go on. The sleeps are short: a signal the kernel hands to another
    # thread does not cut this thread's sleep short.
    try:
        with _interrupts_held():  # a Ctrl-C while the server starts counts once it has
            server.start()
        print(f"parley view: {name} at {server.url} (Ctrl-C to stop)", flush=True)
        while True:
            time.sleep(_WAKE_S)
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """SIGINT waits until the block ends (its threads, started here, never take it)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


_WAKE_S = 0.25


def _port(text: str) -> int:
    """A port number for ``--port``: 0 (a free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0 to 65535)")
    return port


def _stored_chat(url: str, chat_id: str) -> tuple[Callable[[], bytes] | None, str, int]:
    """A function reading the chat's trace from the store (again on each request), or why not, with the
    exit status ``parley chats`` gives for it (1: no such chat; 2: the store cannot be read)."""
    from parley.store import StoreError, store_from_url
    from parley.viewer.from_store import trace_of

    try:
        store = store_from_url(url, create=False)
        if not store.load(chat_id):
            print(f"parley view: {store.url} has no chat {chat_id!r}", file=sys.stderr)
            return None, chat_id, 1
    except (StoreError, ValueError) as error:
        print(f"parley view: {error}", file=sys.stderr)
        return None, chat_id, 2
    return (lambda: trace_of(store.load(chat_id), chat_id)), f"{chat_id} in {store.url}", 0
