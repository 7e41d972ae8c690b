"""Durable chats: a chat entry point given ``store=`` (and ``chat_id=``) keeps every record in the store.

Re-running the same call with the same store and ``chat_id`` after a crash continues the chat from its
last record (the agents, built again by the caller's code, are matched by name); a finished chat returns
its recorded result without calling any model or tool.

Chats started while a durable chat takes a step (nested chats), or inside a :class:`ChatScope` (a batch
of runs), are durable too, with ids derived from the scope's: ``<scope>``, ``<scope>.2``, ``<scope>.3``...
in the order they start, which a re-run repeats.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from parley.journal import FORMAT, Journal, Replayed, replay

if TYPE_CHECKING:
    from parley.agent import ConversableAgent
    from parley.engine import Chat
    from parley.store import ChatLog, ChatStore


class ChatScope:
    """Where chats started in a context without their own ``store``/``chat_id`` are kept, and their ids.

    ``chats`` lists every chat created in the scope (nested ones included), in order: a runner reads
    their ids, stop reasons and usage from them.
    """

    __slots__ = ("chat_ids", "chats", "prefix", "started", "store")

    def __init__(self, store: ChatStore | None, prefix: str, chats: list[Chat] | None = None) -> None:
        self.store = store
        self.prefix = prefix
        self.started = 0
        self.chat_ids: list[str] = []
        self.chats: list[Chat] = [] if chats is None else chats

    def within(self, prefix: str) -> ChatScope:
        """A scope in the same store, listing its chats with this one's, whose chats get ids from
        ``prefix``."""
        return ChatScope(self.store, prefix, self.chats)

    def next_id(self) -> str:
        """The id of the next chat started in this scope."""
        self.started += 1
        chat_id = self.prefix if self.started == 1 else f"{self.prefix}.{self.started}"
        self.chat_ids.append(chat_id)
        return chat_id


chat_scope: ContextVar[ChatScope | None] = ContextVar("parley_chat_scope", default=None)


@contextmanager
def scoped(scope: ChatScope) -> Iterator[ChatScope]:
    """Within the block, chats started without ``store``/``chat_id`` take them from ``scope``."""
    token = chat_scope.set(scope)
    try:
        yield scope
    finally:
        chat_scope.reset(token)


def open_store(store: Any) -> ChatStore:
    """A store object, or the store a URL names."""
    if isinstance(store, str):
        from parley.store import open_store as open_url

        return open_url(store)
    if not (hasattr(store, "open") and hasattr(store, "load")):
        hint = f": for a SQLite file, store='sqlite:///{store}'" if isinstance(store, os.PathLike) else ""
        raise TypeError(
            f"store must be a URL ('sqlite:///path/chats.db', 'postgresql://...') or a store object, "
            f"not {store!r}{hint}"
        )
    return store


class Durability:
    """One durable chat's lease and records, from the entry point's start to its end."""

    def __init__(self, store: ChatStore, chat_id: str) -> None:
        from parley.store.base import record_texts

        self.store = store
        self.chat_id = chat_id
        self.log: ChatLog = store.open(chat_id)
        try:
            self.replayed: Replayed | None = None
            records = record_texts(self.log)
            try:
                if records:
                    self.replayed = replay(records, chat_id)
            except (ValueError, KeyError, TypeError, IndexError) as error:  # JSON's errors are ValueErrors
                from parley.store import StoreError

                raise StoreError(
                    f"chat {chat_id!r} in {store.url} cannot be read back: its {len(records)} records "
                    f"do not replay ({type(error).__name__}: {error}); they were changed outside parley or "
                    "written by another program. Nothing was changed"
                ) from error
        except BaseException:
            self.log.close()
            raise

    @property
    def finished(self) -> bool:
        """Whether the chat finished before: its result is recorded."""
        return self.replayed is not None and self.replayed.finished

    @property
    def resuming(self) -> bool:
        return self.replayed is not None

    def attach(
        self,
        chat: Chat,
        shape: str,
        agents: Sequence[ConversableAgent],
        opening: Any = None,
        opening_kind: str = "given",
        initiator: str | None = None,
    ) -> None:
        """Make ``chat`` durable: continue it from the records, or record its start. ``opening`` is what
        the call starts the chat with, when it is data (the message text, a list of messages), and
        ``opening_kind`` where it comes from (``"given"``, ``"function"``: a callable's, ``"human"``: asked
        of a human): a call with another opening is another call, not the one that started the chat. So
        is a call by another ``initiator`` (the agent whose ``initiate_chat`` starts it).

        Raises:
            ValueError: the records are of another kind of chat, or started with another opening or by
                another initiator, or name agents this run does not have.
        """
        opened = None if opening is None else _as_text(opening)
        chat.store = self.store
        if self.replayed is None:
            chat.state.chat_id = self.chat_id
            journal = Journal(self.log, chat.state, 0)
            started: dict[str, Any] = {
                "format": FORMAT,
                "shape": shape,
                "agents": [agent.name for agent in agents],
                "context": dict(chat.state.context_variables),
            }
            if opened is not None:
                started["opening"] = opened
            started["opening_kind"] = opening_kind
            if initiator is not None:
                started["initiator"] = initiator
            if chat.state.messages:
                started["seed_log"] = list(chat.state.messages)
            if chat.describe is not None:
                started["graph"] = chat.describe()
            seeds = {agent.name: list(view.messages) for agent, view in chat.views.items() if view.messages}
            if seeds:
                started["seed_views"] = seeds
            chat.journal = journal
            journal.log.append([journal.record("chat_started", started)])
            return
        replayed = self.replayed
        recorded_shape = replayed.started.get("shape")
        if recorded_shape != shape:
            raise ValueError(
                f"chat {self.chat_id!r} in {self.store.url} is a {_kind(recorded_shape)}; it cannot be "
                f"continued as a {_kind(shape)}"
            )
        recorded_opening = replayed.started.get("opening")
        recorded_kind = replayed.started.get("opening_kind", opening_kind)  # older records: not kept
        if recorded_kind != opening_kind or (
            opened is not None and recorded_opening is not None and recorded_opening != opened
        ):
            raise ValueError(
                f"chat {self.chat_id!r} in {self.store.url} was started with "
                f"{_opening_shown(recorded_kind, recorded_opening)}; this call starts it with "
                f"{_opening_shown(opening_kind, opened)}. The same call continues the chat (or returns "
                "its result, once finished): give a new chat_id for a new chat"
            )
        names = [agent.name for agent in agents]
        recorded = list(replayed.started.get("agents", ()))
        missing = [name for name in recorded if name not in names]
        if missing:
            raise ValueError(
                f"chat {self.chat_id!r} was recorded with the agents {recorded}; this "
                f"run has no agent named {', '.join(repr(name) for name in missing)}"
            )
        if names != recorded:  # more agents, or the same in other places: another call
            raise ValueError(
                f"chat {self.chat_id!r} was recorded with the agents {recorded}, in that order (for a "
                f"two-agent chat: the initiator first); this run has {names}. The same call continues the "
                "chat: give a new chat_id for a new chat"
            )
        recorded_initiator = replayed.started.get("initiator")
        if initiator is not None and recorded_initiator is not None and recorded_initiator != initiator:
            raise ValueError(
                f"chat {self.chat_id!r} in {self.store.url} was started by {recorded_initiator!r}; this call "
                f"starts it from {initiator!r}. The same call continues the chat (or returns its result, "
                "once finished): give a new chat_id for a new chat"
            )
        _check_tools(self.chat_id, replayed, agents)
        if shape == "swarm":
            _check_context(self, replayed, chat.state.context_variables)
        chat.restore(replayed)
        chat.journal = Journal(self.log, chat.state, replayed.records)

    def close(self) -> None:
        self.log.close()


def durability(store: Any, chat_id: str | None) -> AbstractContextManager[Durability | None]:
    """The durable side of one chat entry point call, as a context manager: ``None`` when the chat is
    not durable."""
    if chat_id is not None:
        from parley.store.base import check_chat_id

        check_chat_id(chat_id)
    if store is None:
        scope = chat_scope.get()
        if scope is None or scope.store is None:
            return _NOT_DURABLE
        store = scope.store
        if chat_id is None:
            chat_id = scope.next_id()
    return _durable(store, chat_id)


_NOT_DURABLE: AbstractContextManager[None] = nullcontext()


@contextmanager
def _durable(store: Any, chat_id: str | None) -> Iterator[Durability]:
    opened = open_store(store)
    if chat_id is None:
        from parley.engine import new_chat_id

        chat_id = new_chat_id()
    durable = Durability(opened, chat_id)
    try:
        yield durable
    finally:
        durable.close()


def chat_id_of(durable: Durability | None, chat_id: str | None) -> str | None:
    """The id a chat gets: the durable one, else the one given (else a new one is made)."""
    return durable.chat_id if durable is not None else chat_id


def _as_text(value: Any) -> str:
    """What a call started a chat with, as text to compare (an opening, a starting context)."""
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except TypeError:  # keys of several types cannot be sorted
        return json.dumps(value, default=repr)


def _check_context(durable: Durability, replayed: Replayed, given: Any) -> None:
    """A swarm is the same call only with the same starting context (or, for a context object the run
    before changed in place, the one it was left with).

    Raises:
        ValueError: ``given`` is another starting context.
    """
    recorded = replayed.started.get("context")
    if recorded is None:
        return
    text = _as_text(dict(given))
    if text in (_as_text(recorded), _as_text(dict(replayed.state.context_variables))):
        return
    raise ValueError(
        f"chat {durable.chat_id!r} in {durable.store.url} was started with the context variables "
        f"{_shown(_as_text(recorded))}; this call starts it with {_shown(text)}. The same call continues the "
        "chat (or returns its result, once finished): give a new chat_id for a new chat"
    )


def _kind(shape: Any) -> str:
    """A chat's shape as a sentence names it: ``"two-agent chat"``, ``"swarm chat"``..."""
    return {"chat": "two-agent chat", "swarm": "swarm chat", "group": "group chat"}.get(
        str(shape), f"{shape} chat"
    )


def _opening_shown(kind: str, opening: str | None) -> str:
    """Where an opening came from, as the error about another opening says it."""
    if kind == "human":
        return "the message a human typed (message=None)"
    if kind == "function" or opening is None:
        return "a message made by a function"
    return _shown(opening)


def _shown(opening: str) -> str:
    """An opening as the error shows it: the message itself, if it is one, and not too long."""
    value = json.loads(opening)
    shown = repr(value) if isinstance(value, str) else opening
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _check_tools(chat_id: str, replayed: Replayed, agents: Sequence[ConversableAgent]) -> None:
    """Every tool the log calls is one some agent of this run can execute (calls answered as unknown
    functions excepted)."""
    available: set[str] = set()
    for agent in agents:
        available.update(agent._executable_tool_names())
    log = replayed.state.messages
    with_tools = [log[index] for index in replayed.tool_messages]
    unknown: set[str] = set()
    for message in with_tools:
        for response in message.get("tool_responses") or ():
            if str(response.get("content", "")).startswith("Error: Function "):
                unknown.add(response.get("tool_call_id", ""))
    for message in with_tools:
        for call in message.get("tool_calls") or ():
            name = (call.get("function") or {}).get("name")
            if name and name not in available and call.get("id", "") not in unknown:
                raise ValueError(
                    f"chat {chat_id!r} was recorded calling the tool {name!r} ({message.get('name')} called "
                    "it), which no agent of this run has: register it as before to continue the chat"
                )
