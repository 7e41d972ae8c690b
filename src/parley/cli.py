"""The ``parley`` command.

parley demo                                   # the support swarm on the embedded model, interactively
parley demo --message "I was charged twice"   # one request, then the chat ends (for scripts)
parley demo --model-path other.gguf           # another GGUF file
parley demo --base-url http://localhost:8000/v1 --model qwen2.5   # an OpenAI-compatible server
OPENAI_API_KEY=... parley demo --model gpt-4o-mini                # OpenAI
parley chats list sqlite:///chats.db                               # the chats a store keeps
parley chats show sqlite:///chats.db CHAT_ID                       # one chat: who said what, how it ended
parley chats export sqlite:///chats.db CHAT_ID [--records]         # one chat as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from parley.store import ChatInfo, ChatTranscript, ContextChange

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
    _add_chats_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "chats":
        return _chats(args)
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


# parley chats ------------------------------------------------------------------------------------------

CHATS_HELP = "Read the chats a store keeps: list them, show one, or export one as JSON."
STORE_HELP = "the store's URL: sqlite:///path/chats.db or postgresql://user@host/database"


def _add_chats_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chats = commands.add_parser(
        "chats",
        help=CHATS_HELP,
        description=f"{CHATS_HELP} Exit status: 1 for an unknown chat, 2 for a store that cannot be read.",
    )
    actions = chats.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="the store's chats, oldest first")
    listing.add_argument("store", help=STORE_HELP)
    show = actions.add_parser("show", help="one chat: who said what, tool calls and results, how it ended")
    show.add_argument("store", help=STORE_HELP)
    show.add_argument("chat_id")
    export = actions.add_parser("export", help="one chat as JSON")
    export.add_argument("store", help=STORE_HELP)
    export.add_argument("chat_id")
    export.add_argument("--records", action="store_true", help="the raw stored records instead")


def _chats(args: argparse.Namespace) -> int:
    from parley.store import StoreError, read_transcript, store_from_url

    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        store = store_from_url(args.store, create=False)
    except StoreError as error:
        errors.print(f"[bold red]error:[/] {escape(str(error))}")
        return 2
    try:
        if args.action == "list":
            _chats_list(console, store.list_chats())
            return 0
        records = store.load(args.chat_id)
        if not records:
            errors.print(
                f"[bold red]error:[/] no chat {escape(repr(args.chat_id))} in {escape(store.url)} "
                f"(parley chats list {escape(store.url)} lists its chats)"
            )
            return 1
        if args.action == "export" and args.records:
            raw = [
                {"seq": record.seq, "kind": record.kind, "data": _json_or_text(record.data)}
                for record in records
            ]
            print(json.dumps(raw, indent=2, ensure_ascii=False))
            return 0
        transcript = read_transcript(args.chat_id, records)
        if args.action == "export":
            print(json.dumps(transcript.to_json(), indent=2, ensure_ascii=False))
        else:
            _chats_show(console, transcript)
        return 0
    except StoreError as error:
        errors.print(f"[bold red]error:[/] {escape(str(error))}")
        return 2
    except BrokenPipeError:  # the reader (| head) has had enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        store.close()


def _chats_list(console: Console, chats: list[ChatInfo]) -> None:
    columns = ("chat", "records", "started", "updated", "last record", "status")
    rows = [
        (
            chat.chat_id,
            str(chat.record_count),
            _when(chat.created_at),
            _when(chat.updated_at),
            chat.last_kind,
            "finished" if chat.finished else f"running: {chat.holder}" if chat.holder else "unfinished",
        )
        for chat in chats
    ]
    if console.is_terminal:
        table = Table(*columns, box=None, header_style="bold", pad_edge=False)
        for row in rows:
            table.add_row(*(escape(cell) for cell in row))
        console.print(table if rows else "[dim]no chats[/]")
        return
    widths = [max(len(cell) for cell in column) for column in zip(columns, *rows, strict=False)]
    for row in (columns, *rows):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _chats_show(console: Console, transcript: ChatTranscript) -> None:
    lines: list[tuple[str, str, str]] = []  # (speaker, text, style of the text)
    changes: dict[int, list[ContextChange]] = {}
    for change in transcript.context_changes:
        changes.setdefault(change.after_message, []).append(change)
    for change in changes.get(-1, []):
        lines.append(("", f"context {_context_text(change.set, change.removed)}", "blue"))
    for index, (speaker, message) in enumerate(zip(transcript.speakers, transcript.messages, strict=True)):
        for response in message.get("tool_responses") or ([message] if message.get("role") == "tool" else []):
            lines.append((speaker, f"↳ {_message_text(response.get('content'))}", "dim"))
        if message.get("role") != "tool":
            text = _message_text(message.get("content")).strip()
            if text:
                lines.append((speaker, text, ""))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            lines.append(
                (speaker, f"calls {function.get('name')}({_call_arguments(function.get('arguments'))})", "")
            )
        for change in changes.get(index, []):
            lines.append(("", f"context {_context_text(change.set, change.removed)}", "blue"))
        if index in transcript.handoffs:
            lines.append(("", f"handoff to {transcript.handoffs[index]}", "bold"))

    agents = ", ".join(transcript.agents) or "unknown agents"
    state = "finished" if transcript.finished else "not finished"
    shape = transcript.shape or "chat"
    header = f"chat {transcript.chat_id}: {shape} of {agents}; {state}, {transcript.record_count} records"
    footer = _summary_rows(transcript)
    if not console.is_terminal:
        print(header)
        print()
        for speaker, text, _style in lines:
            prefix = f"{speaker}: " if speaker else "  "
            print(prefix + text.replace("\n", "\n" + " " * len(prefix)))
        print()
        for label, value in footer:
            print(f"{label}: " + value.replace("\n", "\n" + " " * (len(label) + 2)))
        return
    console.rule(f"[bold]{escape(transcript.chat_id)}[/]")
    console.print(f"[dim]{escape(header)}[/]")
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold cyan")
    grid.add_column()
    for speaker, text, style in lines:
        grid.add_row(escape(speaker), f"[{style}]{escape(text)}[/]" if style else escape(text))
    console.print(grid)
    summary = Table(show_header=False, box=None, pad_edge=False)
    summary.add_column(style="bold")
    summary.add_column()
    for label, value in footer:
        summary.add_row(label, escape(value))
    console.print()
    console.print(summary)


def _summary_rows(transcript: ChatTranscript) -> list[tuple[str, str]]:
    reason = transcript.stop_reason
    stop = f"{reason.get('kind')}: {reason.get('detail')}" if reason else "not stopped"
    rows = [("stop reason", stop)]
    for model, sums in transcript.usage.items():
        tokens = int(sums["prompt_tokens"] + sums["completion_tokens"])
        cached = int(transcript.cached_usage.get(model, {}).get("calls", 0))
        calls = f"{int(sums['calls'])} calls" + (f" ({cached} from the cache)" if cached else "")
        rows.append(
            (
                "usage",
                f"{model}: {calls}, {tokens} tokens ({int(sums['prompt_tokens'])} prompt, "
                f"{int(sums['completion_tokens'])} completion), ${sums['cost']:.6f}",
            )
        )
    if not transcript.usage:
        rows.append(("usage", "no model calls"))
    if transcript.context_variables:
        rows.append(("context", json.dumps(transcript.context_variables, ensure_ascii=False)))
    if transcript.summary is not None:
        rows.append(("summary", transcript.summary))
    return rows


def _json_or_text(data: str) -> object:
    try:
        return json.loads(data)
    except ValueError:
        return data  # as stored: the export shows what is there


def _message_text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _call_arguments(raw: object) -> str:
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return str(raw)
    if not isinstance(arguments, dict):
        return str(raw)
    return ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items())


def _context_text(changes: dict[str, object], removed: list[str]) -> str:
    parts = [f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in changes.items()]
    parts += [f"{key} removed" for key in removed]
    return ", ".join(parts)


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
