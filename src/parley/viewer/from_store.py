"""A stored chat as a trace, for ``parley view STORE CHAT_ID``: its records read as the events they stand
for (without timings: a store keeps what happened, not when)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from parley.events import (
    ChatEvent,
    ChatStarted,
    ChatStopped,
    ContextUpdated,
    Handoff,
    HumanInputGiven,
    MessageSent,
    ModelResponded,
    SpeakerSelected,
    ToolFinished,
)
from parley.models.usage import UsageSummary, call_response
from parley.store import StoredRecord
from parley.termination import StopReason


def trace_of(records: Iterable[StoredRecord], chat_id: str) -> bytes:
    """The JSONL trace of a stored chat."""
    events = list(events_of([json.loads(record.data) for record in records]))
    for seq, event in enumerate(events):
        event.chat_id, event.seq, event.ts = chat_id, seq, float(seq)
    return "".join(json.dumps(event.to_dict(), default=str) + "\n" for event in events).encode()


def events_of(records: list[dict[str, Any]]) -> Iterable[ChatEvent]:
    """The events a chat's records stand for, in order."""
    usage = UsageSummary()
    last_speaker = ""
    index = 0
    for record in records:
        kind = record.get("kind")
        if kind == "chat_started":
            agents = list(record.get("agents") or [])
            yield ChatStarted(
                record.get("shape", "chat"), agents, dict(record.get("context") or {}), record.get("graph")
            )
            index = len(record.get("seed_log") or [])
            continue
        for call in record.get("usage") or ():
            response = call_response(call)
            usage.add(response)
            yield ModelResponded(
                record.get("speaker") or last_speaker, response.model, 0.0, *_tokens(response)
            )
        if kind == "message":
            speaker = record["speaker"]
            message = record["message"]
            for response in message.get("tool_responses") or ():
                if message.get("role") == "tool":
                    yield ToolFinished(
                        speaker, "", response.get("tool_call_id"), str(response.get("content"))
                    )
            yield MessageSent(speaker, "", message, index)
            index += 1
            last_speaker = speaker
        changes, removed = record.get("context_set") or {}, record.get("context_removed") or []
        if changes or removed:
            yield ContextUpdated(record.get("speaker") or last_speaker, dict(changes), list(removed))
        if kind == "message" and record.get("handoff"):
            handoff = record["handoff"]
            target = handoff.get("agent") or handoff.get("option", "")
            yield Handoff(record["speaker"], target, "handoff")
        elif kind == "turn":
            yield SpeakerSelected(record["speaker"], "recorded choice")
        elif kind == "human_input":
            yield HumanInputGiven(record["agent"], record["answer"])
        elif kind == "stopped":
            yield ChatStopped(StopReason.from_dict(record["stop_reason"]), usage.totals())


def _tokens(response: Any) -> tuple[int, int, float, bool]:
    return response.usage.prompt_tokens, response.usage.completion_tokens, response.cost, response.cached
