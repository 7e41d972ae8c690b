"""What a stored chat says, rebuilt from its records: the conversation, context, usage and how it ended.

Readers (``parley chats show`` and ``export``) use this: it needs no agents and no engine. Records of
kinds it does not know, and keys it does not know, are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from parley.store.base import StoredRecord
from parley.store.errors import StoreError

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ContextChange:
    """A change to the chat's context variables, and what they were after it."""

    after_message: int
    """The index of the message it came with or after (-1: before the first message)."""
    agent: str | None
    set: dict[str, Any]
    removed: list[str]
    context: dict[str, Any]
    """All the context variables once the change was made."""


@dataclass(slots=True)
class ChatTranscript:
    """A stored chat as a reader sees it (see :func:`read_transcript`)."""

    chat_id: str
    shape: str | None = None
    """``chat``, ``group`` or ``swarm``."""
    agents: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    """OpenAI-format message dicts, each named after its speaker."""
    speakers: list[str] = field(default_factory=list)
    """Who spoke each message."""
    handoffs: dict[int, str] = field(default_factory=dict)
    """The message index → the agent that message handed the chat to."""
    context_variables: dict[str, Any] = field(default_factory=dict)
    """The context variables as the chat left them."""
    context_changes: list[ContextChange] = field(default_factory=list)
    usage: dict[str, dict[str, float]] = field(default_factory=dict)
    """Model → ``calls``, ``prompt_tokens``, ``completion_tokens`` and ``cost``, summed over every call
    (the calls answered from the cache included)."""
    cached_usage: dict[str, dict[str, float]] = field(default_factory=dict)
    """The same sums for the cached calls alone."""
    stop_reason: dict[str, Any] | None = None
    """``{"kind", "detail", "agent"}`` once the chat stopped."""
    finished: bool = False
    """Whether the chat's result was recorded: it ended and will not go on."""
    summary: str | None = None
    record_count: int = 0

    def usage_dict(self) -> dict[str, Any]:
        """Usage in AG2's shape, as ``ChatResult.cost`` has it: including and excluding cached calls."""
        return {
            "usage_including_cached_inference": _ag2_usage(self.usage, None),
            "usage_excluding_cached_inference": _ag2_usage(self.usage, self.cached_usage),
        }

    def to_json(self) -> dict[str, Any]:
        """The chat as plain JSON data (what ``parley chats export`` prints)."""
        return {
            "chat_id": self.chat_id,
            "shape": self.shape,
            "agents": self.agents,
            "finished": self.finished,
            "messages": self.messages,
            "context_variables": self.context_variables,
            "stop_reason": self.stop_reason,
            "usage": self.usage_dict(),
            "summary": self.summary,
        }


def read_transcript(chat_id: str, records: Iterable[StoredRecord]) -> ChatTranscript:
    """Rebuild what a chat says from its stored records, in seq order."""
    transcript = ChatTranscript(chat_id)
    context = transcript.context_variables
    for record in records:
        transcript.record_count += 1
        data = _decode(chat_id, record)
        kind = data.get("kind", record.kind)
        if kind == "chat_started":
            transcript.shape = _str_or_none(data.get("shape"))
            transcript.agents = [str(name) for name in data.get("agents") or []]
            initial = data.get("context")
            if isinstance(initial, dict) and initial:
                context.update(initial)
                transcript.context_changes.append(ContextChange(-1, None, dict(initial), [], dict(context)))
        elif kind == "message":
            message = data.get("message")
            if not isinstance(message, dict):
                continue
            speaker = str(data.get("speaker") or message.get("name") or "")
            if "name" not in message and speaker:
                message = {**message, "name": speaker}
            transcript.messages.append(message)
            transcript.speakers.append(speaker)
            index = len(transcript.messages) - 1
            _change(transcript, index, speaker, data.get("context_set"), data.get("context_removed"))
            if data.get("handoff"):
                transcript.handoffs[index] = _handoff_target(data["handoff"])
        elif kind != "context":
            agent = _str_or_none(data.get("agent") or data.get("speaker"))
            _change(
                transcript,
                len(transcript.messages) - 1,
                agent,
                data.get("context_set"),
                data.get("context_removed"),
            )
        for call in data.get("usage") or []:
            _count(transcript, call)
        if kind == "context":
            agent = _str_or_none(data.get("agent"))
            _change(transcript, len(transcript.messages) - 1, agent, data.get("set"), data.get("removed"))
        elif kind == "stopped":
            reason = data.get("stop_reason")
            if isinstance(reason, dict):
                transcript.stop_reason = {
                    "kind": reason.get("kind"),
                    "detail": reason.get("detail"),
                    "agent": reason.get("agent"),
                }
        elif kind == "result":
            transcript.finished = True
            summary = data.get("summary")
            transcript.summary = summary if isinstance(summary, str) else None
    return transcript


def _decode(chat_id: str, record: StoredRecord) -> dict[str, Any]:
    try:
        data = json.loads(record.data)
    except ValueError as error:
        raise StoreError(f"record {record.seq} of chat {chat_id!r} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise StoreError(f"record {record.seq} of chat {chat_id!r} is not a JSON object")
    return data


def _change(transcript: ChatTranscript, after: int, agent: str | None, set_: Any, removed: Any) -> None:
    changes = set_ if isinstance(set_, dict) else {}
    gone = [str(key) for key in removed] if isinstance(removed, list) else []
    if not changes and not gone:
        return
    context = transcript.context_variables
    context.update(changes)
    for key in gone:
        context.pop(key, None)
    transcript.context_changes.append(ContextChange(after, agent, dict(changes), gone, dict(context)))


def _handoff_target(handoff: Any) -> str:
    """The agent or option a recorded handoff names."""
    if isinstance(handoff, dict):
        return str(handoff.get("agent") or handoff.get("option") or handoff)
    return str(handoff)


def _count(transcript: ChatTranscript, call: Any) -> None:
    if isinstance(call, list) and len(call) == 5:  # the engine's compact form
        model, prompt, completion, cost, cached = call
        call = {"model": model, "prompt_tokens": prompt, "completion_tokens": completion, "cost": cost}
        call["cached"] = cached
    if not isinstance(call, dict):
        return
    model = str(call.get("model") or "unknown")
    totals = [transcript.usage]
    if call.get("cached"):
        totals.append(transcript.cached_usage)
    for usage in totals:
        sums = usage.setdefault(model, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0})
        sums["calls"] += 1
        sums["prompt_tokens"] += _number(call.get("prompt_tokens"))
        sums["completion_tokens"] += _number(call.get("completion_tokens"))
        sums["cost"] += _number(call.get("cost"))


def _ag2_usage(
    including: dict[str, dict[str, float]], cached: dict[str, dict[str, float]] | None
) -> dict[str, Any]:
    shaped: dict[str, Any] = {"total_cost": 0}
    for model, sums in including.items():
        minus = (cached or {}).get(model, {})
        if cached is not None and sums["calls"] - minus.get("calls", 0) <= 0:
            continue
        prompt = int(sums["prompt_tokens"] - minus.get("prompt_tokens", 0))
        completion = int(sums["completion_tokens"] - minus.get("completion_tokens", 0))
        cost = sums["cost"] - minus.get("cost", 0.0)
        shaped[model] = {
            "cost": cost,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        shaped["total_cost"] += cost
    return shaped


def _number(value: Any) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
