"""``parley chats``: read the chats a store keeps."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from parley.store import ChatInfo, ChatTranscript, ContextChange

CHATS_HELP = "Read the chats a store keeps: list them, show one, or export one as JSON."
STORE_HELP = "the store's URL: sqlite:///path/chats.db or postgresql://user@host/database"


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``parley chats`` to the command line."""
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

    chats.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run ``parley chats``."""
    from parley.store import StoreError, read_transcript, store_from_url
    from parley.store.base import check_chat_id

    for stream in (sys.stdout, sys.stderr):  # text a model gave with lone surrogates, as escapes
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    if args.action != "list":
        try:
            check_chat_id(args.chat_id)
        except (TypeError, ValueError) as error:
            errors.print(f"[bold red]error:[/] {escape(str(error))}")
            return 2
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
    widths = [max(map(cell_len, column)) for column in zip(columns, *rows, strict=False)]
    for row in (columns, *rows):
        cells = (cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())


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
    header = header.translate(_CONTROL_ESCAPES)
    lines = [
        (speaker.translate(_CONTROL_ESCAPES), text.translate(_CONTROL_ESCAPES), style)
        for speaker, text, style in lines
    ]
    footer = [(label, value.translate(_CONTROL_ESCAPES)) for label, value in _summary_rows(transcript)]
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
    grid.add_column(overflow="fold")  # a long URL or JSON text is wrapped whole, not cut off
    for speaker, text, style in lines:
        grid.add_row(escape(speaker), f"[{style}]{escape(text)}[/]" if style else escape(text))
    console.print(grid)
    summary = Table(show_header=False, box=None, pad_edge=False)
    summary.add_column(style="bold")
    summary.add_column(overflow="fold")
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


_CONTROL_ESCAPES = {
    code: f"\\x{code:02x}" for code in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if code not in (0x09, 0x0A)
}
"""Control characters (terminal escape sequences, carriage returns) shown as ``\\x1b``, not sent to the
terminal, where a stored message could rewrite what is shown."""


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
