"""The demo's live terminal display, driven by the events of every chat (``parley.events.subscribe``).

Who speaks, the tools they run and what comes back, handoffs and context changes are printed as they
happen; while a model thinks a spinner runs (:class:`Thinking`), and a summary closes the chat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from parley import ChatResult
from parley.events import (
    ChatStopped,
    ContextUpdated,
    Event,
    Handoff,
    MessageSent,
    Notice,
    ToolExecuting,
)
from parley.models import ModelClient, ModelResponse

Message = dict[str, Any]

STYLES = {"triage": "bold cyan", "billing": "bold green", "technical_support": "bold magenta"}
USER_STYLE = "bold yellow"
WIDTH = 18


class LiveDisplay:
    """Prints a swarm as it runs; subscribe it with ``parley.events.listening(display)``."""

    def __init__(self, console: Console | None = None, *, user_names: Sequence[str] = ("_User", "customer")):
        self.console = console or Console(highlight=False)
        self.user_names = set(user_names)

    # events ------------------------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        if isinstance(event, MessageSent):
            self._message(event.sender, event.message)
        elif isinstance(event, ToolExecuting):
            self._line(
                event.executor, f"[dim]calls[/] [bold]{escape(event.tool)}[/]({_arguments(event.arguments)})"
            )
        elif isinstance(event, ContextUpdated):
            changes = ", ".join(
                f"{escape(key)} = {escape(repr(value))}" for key, value in event.changes.items()
            )
            self._line("", f"[blue]context[/] {changes}")
        elif isinstance(event, Handoff):
            target = "the customer" if event.target in self.user_names else event.target
            self._line(
                "", f"[bold]{escape(event.source)} → {escape(target)}[/] [dim]({escape(event.via)})[/]"
            )
        elif isinstance(event, Notice):
            self._line("", f"[dim]{escape(event.text)}[/]")
        elif isinstance(event, ChatStopped):
            self._line("", f"[bold red]stopped[/] {escape(event.reason.detail)}")

    def _message(self, sender: str, message: Message) -> None:
        if message.get("role") == "tool":
            for response in message.get("tool_responses") or [message]:
                self._line("", f"[dim]↳ {escape(_one_line(_text(response.get('content'))))}[/]")
            return
        text = _text(message.get("content")).strip()
        if text:
            self._line(sender, escape(text))

    def _line(self, speaker: str, text: str) -> None:
        if speaker in self.user_names:
            label = f"[{USER_STYLE}]customer[/]"
        elif speaker:
            label = f"[{STYLES.get(speaker, 'bold')}]{escape(speaker)}[/]"
        else:
            label = ""
        row = Table.grid()
        row.add_column(width=WIDTH, no_wrap=True)
        row.add_column()
        row.add_row(label, text)
        self.console.print(row)

    # the model thinking ------------------------------------------------------------------------------

    @contextmanager
    def thinking(self, agent_name: str) -> Iterator[None]:
        """Show a spinner while ``agent_name``'s model works."""
        style = STYLES.get(agent_name, "bold")
        with self.console.status(f"[{style}]{escape(agent_name)}[/] is thinking…", spinner="dots"):
            yield

    # the end -----------------------------------------------------------------------------------------

    def summary(self, result: ChatResult, context: dict[str, Any], seconds: float) -> None:
        """The closing summary: why the chat stopped, rounds, tokens, time and the final context."""
        usage = result.cost.get("usage_including_cached_inference", {})
        prompt = sum(model.get("prompt_tokens", 0) for model in usage.values() if isinstance(model, dict))
        completion = sum(
            model.get("completion_tokens", 0) for model in usage.values() if isinstance(model, dict)
        )
        models = ", ".join(name for name, value in usage.items() if isinstance(value, dict)) or "none"
        rounds = sum(1 for message in result.chat_history if message.get("role") != "tool")
        table = Table(title="summary", show_header=False, title_justify="left", box=None, pad_edge=False)
        table.add_column(style="bold", min_width=WIDTH - 1)
        table.add_column()
        reason = result.stop_reason
        table.add_row("stop reason", escape(f"{reason.kind.value}: {reason.detail}" if reason else "unknown"))
        table.add_row("rounds", f"{rounds} ({len(result.chat_history)} messages with tool results)")
        table.add_row("tokens", f"{prompt + completion} ({prompt} prompt, {completion} completion)")
        table.add_row("time", f"{seconds:.1f}s")
        table.add_row("model", escape(models))
        table.add_row("context", escape(json.dumps(dict(context), ensure_ascii=False)))
        self.console.print()
        self.console.print(table)


class Thinking:
    """Wraps an agent's model so that the display shows a spinner while it thinks."""

    def __init__(self, model: ModelClient, agent_name: str, display: LiveDisplay) -> None:
        self.model = model
        self.agent_name = agent_name
        self.display = display

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Ask the model, with the spinner running."""
        with self.display.thinking(self.agent_name):
            return self.model.create(messages, tools, **params)

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Async twin of :meth:`create`."""
        with self.display.thinking(self.agent_name):
            return await self.model.a_create(messages, tools, **params)


def _arguments(raw: str) -> str:
    try:
        arguments = json.loads(raw) if raw else {}
    except ValueError:
        return escape(raw)
    if not isinstance(arguments, dict):
        return escape(raw)
    return ", ".join(
        f"{escape(key)}={escape(json.dumps(value, ensure_ascii=False))}" for key, value in arguments.items()
    )


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _one_line(text: str, limit: int = 300) -> str:
    flat = " | ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
