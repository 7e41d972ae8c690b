"""The ``parley`` command.

parley demo                                   # the support swarm on the embedded model, interactively
parley demo --message "I was charged twice"   # one request, then the chat ends (for scripts)
parley demo --model-path other.gguf           # another GGUF file
parley demo --base-url http://localhost:8000/v1 --model qwen2.5   # an OpenAI-compatible server
OPENAI_API_KEY=... parley demo --model gpt-4o-mini                # OpenAI
parley graph my_swarm:agents                  # a swarm's handoff graph, as Mermaid text
parley graph my_swarm:pattern --output graph.svg   # ... drawn by Graphviz
parley view trace.jsonl                       # a chat's trace as a page in the browser
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

DEMO_HELP = (
    "Watch a customer-support swarm work: triage routes the customer to billing or technical support, "
    "who use their tools and answer."
)


def main(argv: list[str] | None = None) -> int:
    """Run the ``parley`` command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="parley", description="parley: conversations between agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help=DEMO_HELP, description=DEMO_HELP)
    demo.add_argument("--message", "-m", help="the customer's request; without it, ask at the terminal")
    demo.add_argument(
        "--model-path", help="a GGUF file for the embedded model instead of the default weights"
    )
    demo.add_argument("--base-url", help="an OpenAI-compatible endpoint, such as http://localhost:8000/v1")
    demo.add_argument("--model", help="the endpoint's model (with --base-url, or OpenAI with OPENAI_API_KEY)")
    demo.add_argument("--api-key", help="the endpoint's API key (default: OPENAI_API_KEY)")
    demo.add_argument(
        "--json-tools", action="store_true", help="ask the endpoint for tool calls through a JSON schema"
    )
    demo.add_argument("--max-rounds", type=int, default=20, help="end the chat after this many rounds")
    _add_graph_command(commands)
    _add_view_command(commands)
    args = parser.parse_args(argv)
    if args.command == "graph":
        return _graph(args)
    if args.command == "view":
        return _view(args)
    return _demo(args, parser)


def _demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from parley.demo.models import endpoint_models
    from parley.demo.run import console_ask, run_demo

    console = Console(highlight=False)
    api_key = args.api_key or os.environ.get("OPENAI_API_KEY")
    if args.base_url and not args.model:
        parser.error("--base-url needs --model")
    if args.model and not (args.base_url or api_key):
        parser.error("--model needs --base-url, or OPENAI_API_KEY for OpenAI")
    interactive = args.message is None
    if interactive and not sys.stdin.isatty():
        parser.error("no terminal to ask the customer at: pass --message")

    console.rule("[bold]parley demo[/]: a customer-support swarm")
    console.print(
        "[dim]triage routes the customer to billing or technical_support; they use their tools and answer[/]"
    )
    try:
        if args.model:
            where = args.base_url or "OpenAI"
            console.print(f"[dim]model: {escape(args.model)} at {escape(where)}[/]")
            model_for = endpoint_models(args.model, args.base_url, api_key, json_tools=args.json_tools)
        else:
            from parley.demo.loading import load_local_models

            model_for = load_local_models(args.model_path, console)
        message = args.message
        if interactive:
            message = console_ask(console)("How can we help you?").strip()
            if not message:
                return 0
        console.print()
        result = run_demo(
            message,
            model_for,
            console=console,
            ask=console_ask(console) if interactive else None,
            max_rounds=args.max_rounds,
        )
    except KeyboardInterrupt:
        console.print("\n[dim]interrupted[/]")
        return 130
    except (ImportError, RuntimeError, ValueError, OSError) as error:
        console.print(f"\n[bold red]error:[/] {escape(str(error))}")
        return 1
    return 0 if result.stop_reason is not None else 1


# parley graph ------------------------------------------------------------------------------------------

GRAPH_HELP = (
    "Print the handoff graph of a swarm or group pattern: MODULE:ATTRIBUTE names a list of agents or a "
    "DefaultPattern (the module is imported from the current directory or sys.path)."
)
GRAPH_FORMATS = ("mermaid", "dot", "svg", "png")
_FORMAT_BY_SUFFIX = {
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".dot": "dot",
    ".gv": "dot",
    ".svg": "svg",
    ".png": "png",
}


def _add_graph_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    graph = commands.add_parser("graph", help=GRAPH_HELP, description=GRAPH_HELP)
    graph.add_argument("target", metavar="MODULE:ATTRIBUTE", help="such as my_swarm:agents")
    graph.add_argument(
        "--format",
        choices=GRAPH_FORMATS,
        help="mermaid (the default), dot, or svg and png drawn by Graphviz; "
        "by default the --output file's suffix says",
    )
    graph.add_argument("--output", "-o", help="write the graph to this file instead of standard output")
    graph.add_argument(
        "--after-work",
        help="the chat's default after-work for a list of agents: TERMINATE (the default), REVERT_TO_USER, "
        "STAY or an agent's name (a pattern has its group_after_work)",
    )


def _graph(args: argparse.Namespace) -> int:
    from parley.graph import GraphvizNotFoundError, handoff_graph

    output_format = args.format or _FORMAT_BY_SUFFIX.get(
        os.path.splitext(args.output or "")[1].lower(), "mermaid"
    )
    try:
        graph = handoff_graph(_load_attribute(args.target), after_work=args.after_work)
        if output_format in ("svg", "png"):
            if args.output is None and output_format == "png" and sys.stdout.isatty():
                raise ValueError("a PNG is binary: pass --output FILE")
            drawn = graph.render("svg" if output_format == "svg" else "png")
        else:
            drawn = (graph.to_mermaid() if output_format == "mermaid" else graph.to_dot()).encode()
    except (ImportError, AttributeError, TypeError, ValueError, GraphvizNotFoundError, RuntimeError) as error:
        print(f"parley graph: {error}", file=sys.stderr)
        return 1
    if args.output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(drawn)
        sys.stdout.buffer.flush()
    else:
        with open(args.output, "wb") as file:
            file.write(drawn)
    return 0


def _load_attribute(target: str) -> Any:
    """The object ``MODULE:ATTRIBUTE`` names (the attribute may be dotted).

    Raises:
        ValueError: ``target`` is not of that form.
        ImportError: the module cannot be imported.
        AttributeError: the module has no such attribute.
    """
    import importlib

    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"expected MODULE:ATTRIBUTE, such as my_swarm:agents, not {target!r}")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        found: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        raise ImportError(
            f"cannot import {module_name!r} from the current directory or sys.path: {error}"
        ) from None
    path = module_name
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise AttributeError(f"{path} has no attribute {part!r}")
        found = getattr(found, part)
        path = f"{path}.{part}"
    return found


# parley view -------------------------------------------------------------------------------------------

VIEW_HELP = (
    "Serve a chat's JSONL trace as a page on 127.0.0.1: the conversation, the handoff graph with the path "
    "taken, context variables over time, and tokens, latency and cost per agent."
)


def _add_view_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    view = commands.add_parser("view", help=VIEW_HELP, description=VIEW_HELP)
    view.add_argument("trace", metavar="TRACE.jsonl", help="the trace file (it may still be growing)")
    view.add_argument("--port", type=int, default=0, help="the port to serve on (default: a free one)")


def _view(args: argparse.Namespace) -> int:
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
