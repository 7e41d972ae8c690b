"""Why a chat stopped, and the chat-level conditions that stop it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from parley.records import FrozenRecord, Record

if TYPE_CHECKING:
    from parley.engine import Chat


class StopKind(StrEnum):
    """The rule that ended a chat."""

    MAX_TURNS = "max_turns"
    """``initiate_chat(max_turns=N)``: both agents spoke N times."""
    MAX_ROUND = "max_round"
    """A group chat or swarm reached its ``max_round``/``max_rounds``."""
    TERMINATION_MSG = "termination_msg"
    """An agent's ``is_termination_msg`` accepted the message it received."""
    MAX_CONSECUTIVE_AUTO_REPLY = "max_consecutive_auto_reply"
    """An agent had auto-replied ``max_consecutive_auto_reply`` times in a row."""
    HUMAN_EXIT = "human_exit"
    """A human answered ``exit`` when asked for input."""
    REPLY_FUNC_FINAL_NONE = "reply_func_final_none"
    """A registered reply function returned ``(True, None)``."""
    NO_NEXT_SPEAKER = "no_next_speaker"
    """The chat's rule for the next speaker found none (a selection callable returned ``None``...)."""
    TERMINATE_TARGET = "terminate_target"
    """A swarm or group pattern transitioned to terminate (after-work or handoff)."""
    NO_USER_TO_REVERT_TO = "no_user_to_revert_to"
    """A swarm or group pattern reverted to the user, but the chat has no user agent."""
    CONDITION = "condition"
    """A chat-level condition (budget, custom condition) held."""
    ERROR = "error"
    """An exception ended the chat; it was re-raised to the caller."""


@dataclass(slots=True, init=False, repr=False, eq=False)
class StopReason(FrozenRecord):
    """Why a chat stopped: the rule (``kind``), the agent that triggered it, and a readable ``detail``."""

    kind: StopKind
    detail: str
    agent: str | None = None

    def __init__(self, kind: StopKind, detail: str, agent: str | None = None) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "detail", detail)
        object.__setattr__(self, "agent", agent)

    def __str__(self) -> str:
        return self.detail

    def to_dict(self) -> dict[str, Any]:
        """Plain data for logs and checkpoints."""
        return {"kind": self.kind.value, "detail": self.detail, "agent": self.agent}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StopReason:
        """Inverse of :meth:`to_dict`."""
        return cls(StopKind(data["kind"]), data["detail"], data.get("agent"))


class StopCondition(Protocol):
    """A chat-level condition, checked after every message appended to the chat."""

    def check(self, chat: Chat) -> StopReason | None:
        """Return why the chat must stop now, or ``None`` to go on."""
        ...


@dataclass(slots=True, init=False, repr=False, eq=False)
class MaxMessages(Record):
    """Stop once ``limit`` messages have been appended since the chat started.

    Tool results produced within a speaker's own turn do not count when ``count_tool_results`` is off:
    a swarm's round is one agent speaking, with the tool calls it made run to the end.
    """

    limit: int
    kind: StopKind
    detail: str
    count_tool_results: bool = True

    def __init__(self, limit: int, kind: StopKind, detail: str, count_tool_results: bool = True) -> None:
        self.limit = limit
        self.kind = kind
        self.detail = detail
        self.count_tool_results = count_tool_results

    def check(self, chat: Chat) -> StopReason | None:
        state = chat.state
        if self.count_tool_results:
            count = state.rounds
        elif state.messages and state.messages[-1].get("tool_calls"):
            return None
        else:
            count = state.rounds - state.tool_result_rounds
        if count >= self.limit:
            return StopReason(self.kind, self.detail, state.last_speaker)
        return None


def max_turns_condition(max_turns: int) -> MaxMessages:
    """Two-agent chats: a turn is both agents speaking once, the initial message included."""
    condition = _max_turns_conditions.get(max_turns)
    if condition is None:
        condition = MaxMessages(2 * max_turns, StopKind.MAX_TURNS, f"Maximum turns ({max_turns}) reached")
        if len(_max_turns_conditions) < _MAX_TURNS_KEPT:
            _max_turns_conditions[max_turns] = condition
    return condition


_MAX_TURNS_KEPT = 64
_max_turns_conditions: dict[int, MaxMessages] = {}
"""The conditions of the commonest limits, shared by the chats that set them (a condition keeps no state)."""


def max_round_condition(max_round: int, *, count_tool_results: bool = True) -> MaxMessages:
    """Group chats and swarms: a round is one message, the initial message included."""
    return MaxMessages(
        max_round, StopKind.MAX_ROUND, f"Maximum rounds ({max_round}) reached", count_tool_results
    )
