"""The records a durable chat writes through its door, and how they rebuild its state.

Every change to a chat is one record, a JSON object with a ``kind``:

- ``chat_started``: the shape, the agents' names, the initial context, and the messages and views the
  chat was seeded with (a continued conversation);
- ``message``: a message appended to the log, by ``speaker``;
- ``tool_result``: the outcome of one tool call of the last message, while the others still run;
- ``human_input``: a human's answer;
- ``turn``: the agent chosen to speak next, when the choice cannot be derived from the log;
- ``stopped``: why the chat stopped; ``result``: its summary (the chat is finished).

Each record also carries what else changed since the record before it: context variables set or removed
(``context_set``, ``context_removed``), auto-reply counters, system messages, the usage of the model
calls made, and, on a tool reply, the handoff it asks for. Replaying the records in order gives back the
state the chat had after the last one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parley import json_text
from parley.limits import Spent
from parley.models.base import ModelResponse
from parley.models.usage import Call
from parley.records import Record
from parley.state import ChatState
from parley.termination import StopReason
from parley.utf8 import is_utf8

if TYPE_CHECKING:
    from parley.messages import Message
    from parley.store import ChatLog, StoredRecord

FORMAT = 1
"""The version of the record format."""

_IMMUTABLE = (str, int, float, bool, type(None))


class UnstorableValueError(TypeError):
    """A value a durable chat must store is not JSON data."""


_STRICT_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""For context values, which must come back as they were: no NaN or infinity (not JSON)."""


def _compact_encoder(ensure_ascii: bool) -> Callable[[Any], str]:
    """``json.dumps`` with ``separators=(",", ":")``, set up once. It does not look for circular references,
    which costs more than the rest of the encoding: data that contains itself goes on until it is nested
    too deeply (a ``RecursionError``)."""
    return json.JSONEncoder(ensure_ascii=ensure_ascii, separators=(",", ":"), check_circular=False).encode


_encode = _compact_encoder(ensure_ascii=False)
_encode_ascii = _compact_encoder(ensure_ascii=True)


def encode(record: dict[str, Any]) -> str:
    """A record as compact JSON text that is valid UTF-8: text holding a lone surrogate (a model's reply
    with an undecodable byte, say), which no database takes as text, is written with escapes.

    Raises:
        TypeError: a value is not JSON data.
        ValueError: a value is nested too deeply, or contains itself.
    """
    try:
        text = _encode(record)
    except RecursionError:
        raise ValueError("a value is nested too deeply, or contains itself") from None
    return text if is_utf8(text) else _encode_ascii(record)


def handoff_data(handoff: Any) -> Any:
    """A pending handoff as plain data: an agent's name, or an option such as ``"TERMINATE"``."""
    if handoff is None:
        return None
    if isinstance(handoff, str):
        return {"agent": handoff}
    agent_name = getattr(handoff, "agent_name", None)
    if isinstance(agent_name, str):
        return {"agent": agent_name}
    name = getattr(handoff, "name", None)
    if isinstance(name, str) and not hasattr(handoff, "display_name"):
        return {"agent": name}
    value = getattr(handoff, "value", None)
    if isinstance(value, str):
        return {"option": value}
    display = getattr(handoff, "display_name", None)
    if callable(display) and type(handoff).__name__ != "FunctionTarget":
        return {"option": str(display())}
    raise UnstorableValueError(
        f"a tool handed off to {handoff!r}, which a durable chat cannot store: hand off to an agent, an "
        "agent's name or an AfterWorkOption"
    )


def handoff_from_data(data: Any) -> Any:
    """The handoff :func:`handoff_data` describes, as a transition target."""
    if data is None:
        return None
    from parley.group.targets import AfterWorkOption, AgentNameTarget, as_target

    if "agent" in data:
        return AgentNameTarget(data["agent"])
    return as_target(AfterWorkOption(data["option"]), what="a recorded handoff")


def usage_data(response: ModelResponse) -> list[Any]:
    """One model call's usage as compact data: ``[model, prompt, completion, cost, cached]`` (read back by
    :func:`parley.models.usage.call_response`)."""
    usage = response.usage
    return [response.model, usage.prompt_tokens, usage.completion_tokens, response.cost, response.cached]


def _changed(now: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``now`` that are new or different from ``before``."""
    return {name: value for name, value in now.items() if before.get(name) != value}


class Journal:
    """Writes a chat's records to its store: each record with the changes made since the one before.

    Context variables are compared key by key with what was last written (unchanged immutable values by
    identity, others by their JSON text), so changes made anywhere, in place or not, are recorded.
    """

    def __init__(self, log: ChatLog, state: ChatState, next_seq: int) -> None:
        from parley.store import StoredRecord

        self._stored = StoredRecord
        self.log = log
        self.state = state
        self.seq = next_seq
        self.usage: list[list[Any]] = []
        self._context_seen: dict[str, tuple[Any, str]] = {}
        self._counters_seen: dict[str, int] = dict(state.auto_replies)
        self._system_seen: dict[str, str] = dict(state.system_messages)
        self._spent_seen: dict[str, Any] | None = None if state.spent is None else state.spent.to_dict()
        self._context_changes()

    def record(self, kind: str, fields: dict[str, Any]) -> StoredRecord:
        """The record of ``kind`` with ``fields`` and the changes since the last record, encoded."""
        record = {"kind": kind, **fields}
        self._add_changes(record)
        try:
            data = encode(record)
        except (TypeError, ValueError) as error:
            raise UnstorableValueError(
                f"chat {self.state.chat_id!r} cannot store its {kind} record: {error}"
            ) from None
        stored = self._stored(self.seq, kind, data)
        self.seq += 1
        return stored

    def write(self, kind: str, fields: dict[str, Any]) -> None:
        """Record and store, durably, before returning."""
        self.log.append([self.record(kind, fields)])

    async def a_write(self, kind: str, fields: dict[str, Any]) -> None:
        """Async twin of :meth:`write`."""
        await self.log.a_append([self.record(kind, fields)])

    def _add_changes(self, record: dict[str, Any]) -> None:
        """Add to ``record`` what changed in the state since the record before it."""
        state = self.state
        if state.context_variables or self._context_seen:
            context_set, context_removed = self._context_changes()
            if context_set:
                record["context_set"] = context_set
            if context_removed:
                record["context_removed"] = context_removed
        if state.auto_replies != self._counters_seen:
            record["auto_replies"] = _changed(state.auto_replies, self._counters_seen)
            self._counters_seen = state.auto_replies.copy()
        if state.system_messages != self._system_seen:
            record["system_messages"] = _changed(state.system_messages, self._system_seen)
            self._system_seen = state.system_messages.copy()
        if self.usage:
            record["usage"] = self.usage
            self.usage = []
        if state.spent is not None:
            spent = state.spent.to_dict()
            if spent != self._spent_seen:
                record["spent"] = self._spent_seen = spent

    def _context_changes(self) -> tuple[dict[str, Any], list[str]]:
        context = self.state.context_variables
        seen = self._context_seen
        changed: dict[str, Any] = {}
        for key, value in context.items():
            old = seen.get(key)
            if old is not None and old[0] is value and type(value) in _IMMUTABLE:
                continue
            if not isinstance(key, str):
                raise UnstorableValueError(
                    f"context variable keys must be strings; chat {self.state.chat_id!r} has the key {key!r}"
                )
            text = _context_text(key, value, self.state.chat_id)
            if old is None or old[1] != text:
                changed[key] = value
            seen[key] = (value, text)
        removed = [key for key in seen if key not in context] if len(seen) != len(context) else []
        for key in removed:
            del seen[key]
        return changed, removed


def _context_text(key: str, value: Any, chat_id: str) -> str:
    """``value`` as JSON text, if it comes back from it as it is."""
    problem: str | None
    try:
        text = _STRICT_ENCODER.encode(value)
    except (TypeError, ValueError) as error:
        text, problem = "", str(error)
    else:
        same = type(value) in _IMMUTABLE or json.loads(text) == value
        problem = None if same else _changed_part(value, "it") or "it would come back changed"
    if problem is not None:
        raise UnstorableValueError(
            f"context variable {key!r} of chat {chat_id!r} cannot be stored: {problem}. A durable chat "
            "keeps JSON data in its context (strings, finite numbers, booleans, None, lists, and dicts "
            "with string keys), so that a resumed chat gets back what it had"
        )
    return text


def _changed_part(value: Any, path: str) -> str | None:
    """What of ``value`` JSON would not give back as it is, and where (``None``: nothing)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{path} has the key {key!r} ({type(key).__name__}), which would come back as a string"
            found = _changed_part(item, f"{path}[{key!r}]")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        if isinstance(value, tuple):
            return f"{path} is a tuple, which would come back as a list"
        for index, item in enumerate(value):
            found = _changed_part(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


# ----------------------------------------------------------------------------------------------------
# replay


@dataclass(slots=True, init=False, repr=False, eq=False)
class Replayed(Record):
    """What a chat's records say: its state, and what the state does not hold.

    The log starts with ``seeded`` messages the chat was started from; ``speakers`` names who said each
    of the others. ``seeds`` are the messages the participants' views held before the chat's own (by
    agent name); ``pending_answers`` are human answers given in the step that was under way when the
    records end. ``tool_messages`` are the places in the log of the messages that may hold tool calls or
    tool results (the others do not).
    """

    state: ChatState
    started: dict[str, Any]
    seeded: int = 0
    speakers: list[str] = field(default_factory=list)
    seeds: dict[str, list[Message]] = field(default_factory=dict)
    pending_answers: list[tuple[str, str]] = field(default_factory=list)
    finished: bool = False
    records: int = 0
    tool_messages: list[int] = field(default_factory=list)

    def __init__(
        self,
        state: ChatState,
        started: dict[str, Any],
        seeded: int = 0,
        speakers: list[str] | None = None,
        seeds: dict[str, list[Message]] | None = None,
        pending_answers: list[tuple[str, str]] | None = None,
        finished: bool = False,
        records: int = 0,
        tool_messages: list[int] | None = None,
    ) -> None:
        self.state = state
        self.started = started
        self.seeded = seeded
        self.speakers = [] if speakers is None else speakers
        self.seeds = {} if seeds is None else seeds
        self.pending_answers = [] if pending_answers is None else pending_answers
        self.finished = finished
        self.records = records
        self.tool_messages = [] if tool_messages is None else tool_messages


def replay(texts: Iterable[str], chat_id: str) -> Replayed:
    """Rebuild a chat's state from its records (their JSON text), in order; each record is decoded as it
    is applied.

    Raises:
        ValueError: a record is not JSON, or the records do not start with ``chat_started``.
        KeyError, TypeError: a record lacks what its kind needs, or holds data of another type.
    """
    remaining = map(json_text.loads, texts)
    first = next(remaining, None)
    if type(first) is not dict or first.get("kind") != "chat_started":
        raise ValueError(f"the records of chat {chat_id!r} do not start with chat_started")
    replayed = _started(first, chat_id)
    state = replayed.state
    messages, speakers, tool_messages = state.messages, replayed.speakers, replayed.tool_messages
    calls: list[Call] = []
    count = 1
    for record in remaining:
        count += 1
        kind = record.get("kind")
        _apply_changes(record, state, calls)
        if kind != "message":
            _apply_event(kind, record, replayed)
            continue
        # nearly every record: applied here
        message = record["message"]
        speaker = record["speaker"]
        messages.append(message)
        speakers.append(speaker)
        state.rounds += 1
        if message.get("role") == "tool":
            state.tool_result_rounds += 1
            state.tool_results = {}
        if "tool_calls" in message or "tool_responses" in message:
            tool_messages.append(len(messages) - 1)
        state.last_speaker = speaker
        handoff = record.get("handoff")
        state.handoff = None if handoff is None else handoff_from_data(handoff)
        state.turn = None
        if replayed.pending_answers:
            replayed.pending_answers = []
    state.usage.add_calls(calls)
    replayed.records = count
    return replayed


def _started(record: dict[str, Any], chat_id: str) -> Replayed:
    """The state a chat's first record, ``chat_started``, gives."""
    state = ChatState(chat_id, record.get("shape", "chat"))
    state.context_variables = dict(record.get("context") or {})
    replayed = Replayed(state, record)
    seed_log = record.get("seed_log") or []
    state.messages.extend(seed_log)
    replayed.seeded = len(seed_log)
    if seed_log:
        state.last_speaker = seed_log[-1].get("name")
    replayed.tool_messages = [
        index
        for index, message in enumerate(seed_log)
        if type(message) is not dict or "tool_calls" in message or "tool_responses" in message
    ]
    replayed.seeds = dict(record.get("seed_views") or {})
    return replayed


def _apply_event(kind: Any, record: dict[str, Any], replayed: Replayed) -> None:
    """Apply a record of ``kind``, other than a message."""
    state = replayed.state
    if kind == "tool_result":
        state.tool_results[record["call"]] = record["outcome"]
    elif kind == "human_input":
        state.human_input.append(record["answer"])
        replayed.pending_answers.append((record["agent"], record["answer"]))
    elif kind == "turn":
        state.turn = record["speaker"]
        state.handoff = None
    elif kind == "stopped":
        state.stop_reason = StopReason.from_dict(record["stop_reason"])
    elif kind == "result":
        state.summary = record.get("summary")
        replayed.finished = True


def _apply_changes(record: dict[str, Any], state: ChatState, calls: list[Call]) -> None:
    """Apply what else a record says changed: counters, context, system messages, spending; the model
    calls it counts are added to ``calls``."""
    if counters := record.get("auto_replies"):
        state.auto_replies.update(counters)
    for model, prompt, completion, cost, cached in record.get("usage") or ():
        calls.append((model, prompt, completion, cost, cached))
    # few records carry more than auto-reply counters and usage
    if (
        "context_set" in record
        or "context_removed" in record
        or "system_messages" in record
        or "spent" in record
    ):
        _apply_rare_changes(record, state)


def _apply_rare_changes(record: dict[str, Any], state: ChatState) -> None:
    if context_set := record.get("context_set"):
        state.context_variables.update(context_set)
    for key in record.get("context_removed") or ():
        state.context_variables.pop(key, None)
    if system_messages := record.get("system_messages"):
        state.system_messages.update(system_messages)
    if spent := record.get("spent"):
        state.spent = Spent(**spent)
