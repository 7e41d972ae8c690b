"""``parley graph``: a swarm's handoff graph, as Mermaid or DOT text, or drawn by Graphviz."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

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


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``parley graph`` to the command line."""
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

    graph.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``parley graph``."""
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
