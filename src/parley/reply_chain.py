"""Registered reply functions: their entries and the triggers that select them."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any

from parley.agent_base import Agent

ReplyFunction = Callable[..., Any]
"""``(recipient, messages, sender, config) -> (final, reply)``, sync or async."""

Trigger = Any
"""A class, an agent, an agent name, a callable ``(sender) -> bool``, a list of these, or ``None``."""


def reply_entry(
    trigger: Trigger,
    reply_func: ReplyFunction,
    config: Any,
    reset_config: Callable[[Any], None] | None,
    ignore_async_in_sync_chat: bool,
    async_twin: ReplyFunction | None = None,
) -> dict[str, Any]:
    """One entry of an agent's ``_reply_func_list``, in AG2's shape."""
    if not callable(reply_func):
        raise TypeError(f"reply_func must be callable, not {reply_func!r}")
    check_trigger(trigger)
    return {
        "matches_every_sender": _matches_every_sender(trigger),
        "trigger": trigger,
        "reply_func": reply_func,
        "config": copy.copy(config),  # as AG2: the function gets a copy, which reset() makes again
        "init_config": config,
        "reset_config": reset_config,
        "ignore_async_in_sync_chat": ignore_async_in_sync_chat and inspect.iscoroutinefunction(reply_func),
        "is_async": inspect.iscoroutinefunction(reply_func),
        "async_twin": async_twin,
    }


def _matches_every_sender(trigger: Trigger) -> bool:
    """Whether the trigger answers any agent and no sender alike (the common ``[Agent, None]``)."""
    return isinstance(trigger, list) and None in trigger and Agent in trigger


def check_trigger(trigger: Trigger) -> None:
    """Fail early, naming the trigger, if it is of a kind that can never match."""
    if trigger is None or isinstance(trigger, str | type | Agent) or callable(trigger):
        return
    if isinstance(trigger, list):
        for item in trigger:
            check_trigger(item)
        return
    raise ValueError(
        f"unsupported reply trigger {trigger!r}: use a class, an agent, a name, a callable, a list or None"
    )


def matches(trigger: Trigger, sender: Agent | None) -> bool:
    """Whether a reply function registered with ``trigger`` answers ``sender``."""
    if trigger is None:
        return sender is None
    if isinstance(trigger, type):
        return isinstance(sender, trigger)
    if isinstance(trigger, list):
        return any(matches(item, sender) for item in trigger)
    if sender is None:
        return False
    if isinstance(trigger, str):
        return trigger == sender.name
    if isinstance(trigger, Agent):
        return trigger is sender
    result = trigger(sender)
    if not isinstance(result, bool):
        raise TypeError(f"reply trigger {trigger!r} must return a bool, returned {result!r}")
    return result


def function_name(func: ReplyFunction) -> str:
    """A reply function's name for stop reasons."""
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


class ReplyChain(list[dict[str, Any]]):
    """An agent's ``_reply_func_list``: a list in AG2's shape that keeps the chain compiled for plain last
    messages (:func:`plain_chain`) and forgets it on any change."""

    __slots__ = ("own_only", "plain_async", "plain_sync", "sync_unusable")

    def __init__(self, entries: Any = ()) -> None:
        super().__init__(entries)
        self.plain_sync: PlainChain | None = None
        self.plain_async: PlainChain | None = None
        self.own_only: bool | None = None
        """Whether every reply function is parley's own (``None``: not known yet; see
        :func:`parley.engine.runs_user_code`)."""
        self.sync_unusable: list[str] | None = None
        """The names of the async reply functions a sync chat cannot run (``None``: not known yet)."""

    def _forget(self) -> None:
        self.plain_sync = self.plain_async = self.own_only = self.sync_unusable = None

    def append(self, entry: dict[str, Any]) -> None:
        super().append(entry)
        self._forget()

    def insert(self, index: Any, entry: dict[str, Any]) -> None:
        super().insert(index, entry)
        self._forget()

    def extend(self, entries: Any) -> None:
        super().extend(entries)
        self._forget()

    def remove(self, entry: dict[str, Any]) -> None:
        super().remove(entry)
        self._forget()

    def pop(self, index: Any = -1) -> dict[str, Any]:
        entry = super().pop(index)
        self._forget()
        return entry

    def clear(self) -> None:
        super().clear()
        self._forget()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        super().sort(*args, **kwargs)
        self._forget()

    def reverse(self) -> None:
        super().reverse()
        self._forget()

    def __setitem__(self, index: Any, value: Any) -> None:
        super().__setitem__(index, value)
        self._forget()

    def __delitem__(self, index: Any) -> None:
        super().__delitem__(index)
        self._forget()

    def __iadd__(self, entries: Any) -> ReplyChain:  # type: ignore[override,misc]
        super().__iadd__(entries)
        self._forget()
        return self

    def __imul__(self, times: Any) -> ReplyChain:  # type: ignore[misc]
        super().__imul__(times)
        self._forget()
        return self


PlainChain = tuple[tuple[dict[str, Any], bool], ...]
"""The entries a reply to a plain last message (no tool calls, no function call) consults, in order, each
with whether it answers every sender (otherwise its trigger is matched at the time)."""


def plain_chain(entries: list[dict[str, Any]], skipped: frozenset[Any], *, sync: bool) -> PlainChain:
    """The entries of ``entries`` a reply consults: not those in ``skipped`` (the reply functions with
    nothing to answer, such as those that answer only tool calls), and, in a sync chat, not async ones."""
    return tuple(
        (entry, entry["matches_every_sender"])
        for entry in entries
        if entry["reply_func"] not in skipped and not (sync and entry["is_async"])
    )


def compiled_plain_chain(entries: list[dict[str, Any]], skipped: frozenset[Any], *, sync: bool) -> PlainChain:
    """:func:`plain_chain`, kept by ``entries`` when it is a :class:`ReplyChain`."""
    chain = plain_chain(entries, skipped, sync=sync)
    if type(entries) is ReplyChain:
        if sync:
            entries.plain_sync = chain
        else:
            entries.plain_async = chain
    return chain
