"""What one item of a batch came to: its value or its exception, and what its chats did."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from parley.chat_result import ChatResult
from parley.termination import StopReason

T = TypeVar("T")

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 80


@dataclass(slots=True, eq=False)
class Outcome(Generic[T]):
    """One item's outcome, in the batch's input order.

    Attributes:
        index: the item's position in ``inputs``.
        item: the item itself.
        value: what ``fn(item)`` returned (``None`` when it raised).
        error: the exception ``fn(item)`` raised, or ``None``.
        traceback: the formatted traceback of ``error`` (kept apart: a traceback does not cross
            process boundaries, the text does).
        chat_result: when the item failed after a chat had started, that chat's result so far (the
            conversation up to the failure); ``None`` otherwise.
        chat_ids: the ids of every chat the item ran, in the order they started (nested chats included).
        chat_id: the id of the item's main chat: the last chat ``fn`` started itself (not a nested one).
        stop_reason: why the main chat stopped.
        usage: the usage and cost of all of the item's chats, in AG2's shape (as ``ChatResult.cost``).
        attempts: how many times the item was started: more than 1 when a Ray actor running it died and
            it was retried on another.
    """

    index: int
    item: Any = None
    value: T | None = None
    error: BaseException | None = None
    traceback: str | None = None
    chat_result: ChatResult | None = None
    chat_ids: list[str] = field(default_factory=list)
    chat_id: str | None = None
    stop_reason: StopReason | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1

    @property
    def ok(self) -> bool:
        """Whether ``fn(item)`` returned (rather than raised)."""
        return self.error is None

    def result(self) -> T | None:
        """The value ``fn(item)`` returned; raises the exception it raised instead."""
        if self.error is not None:
            raise self.error
        return self.value

    @property
    def tokens(self) -> int:
        """Tokens the item's chats used (prompt and completion, calls answered from a cache excluded)."""
        spent = self.usage.get("usage_excluding_cached_inference") or {}
        return sum(counts.get("total_tokens", 0) for counts in spent.values() if isinstance(counts, dict))

    @property
    def cost(self) -> float:
        """What the item's chats cost (calls answered from a cache excluded)."""
        spent = self.usage.get("usage_excluding_cached_inference") or {}
        return float(spent.get("total_cost", 0.0))

    def __repr__(self) -> str:
        state = f"value={_short.repr(self.value)}" if self.error is None else f"error={self.error!r}"
        return (
            f"Outcome(index={self.index}, {state}, chat_id={self.chat_id!r}, stop_reason={self.stop_reason})"
        )
