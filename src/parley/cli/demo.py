"""``parley demo``: the customer-support swarm, on the embedded model or an endpoint."""

from __future__ import annotations

import argparse
import os
import sys

from rich.console import Console
from rich.markup import escape

DEMO_HELP = (
    "Watch a customer-support swarm work: triage routes the customer to billing or technical support, "
    "who use their tools and answer."
)


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``parley demo`` to the command line."""
    demo = commands.add_parser("demo", help=DEMO_HELP, description=DEMO_HELP)
    demo.add_argument(
        "--message",
        "-m",
        action="append",
        help="the customer's request; without it, ask at the terminal. Repeat it for the customer's "
        "next messages, said in turn whenever the conversation comes back to them",
    )
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
    demo.set_defaults(run=lambda args: _demo(args, demo))


def _demo(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from parley.demo.models import endpoint_models
    from parley.demo.run import Ask, console_ask, run_demo, scripted_ask

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
        ask: Ask | None = console_ask(console)
        if interactive:
            message = console_ask(console)("How can we help you?").strip()
            if not message:
                return 0
        else:
            message, *later = args.message
            ask = scripted_ask(later) if later else None
        console.print()
        result = run_demo(message, model_for, console=console, ask=ask, max_rounds=args.max_rounds)
    except KeyboardInterrupt:
        console.print("\n[dim]interrupted[/]")
        return 130
    except (ImportError, RuntimeError, ValueError, OSError) as error:
        console.print(f"\n[bold red]error:[/] {escape(str(error))}")
        return 1
    return 0 if result.stop_reason is not None else 1
