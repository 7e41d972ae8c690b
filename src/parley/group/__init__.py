"""Swarms and group patterns: handoffs, transition targets, context variables, tool results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.group.context_expression import ContextExpression, ContextStr
from parley.group.context_variables import ContextVariables
from parley.group.handoffs import Handoffs, OnCondition, OnContextCondition, StringLLMCondition
from parley.group.patterns import (
    AutoPattern,
    DefaultPattern,
    ManualPattern,
    RandomPattern,
    RoundRobinPattern,
    a_initiate_group_chat,
    a_run_group_chat,
    initiate_group_chat,
    run_group_chat,
)
from parley.group.targets import (
    AfterWorkOption,
    AgentNameTarget,
    AgentTarget,
    AskUserTarget,
    GroupManagerTarget,
    RevertToUserTarget,
    StayTarget,
    TerminateTarget,
    TransitionTarget,
)

if TYPE_CHECKING:
    from parley.group.results import ReplyResult, SwarmResult

__all__ = [
    "AfterWorkOption",
    "AgentNameTarget",
    "AgentTarget",
    "AskUserTarget",
    "AutoPattern",
    "ContextExpression",
    "ContextStr",
    "ContextVariables",
    "DefaultPattern",
    "GroupManagerTarget",
    "Handoffs",
    "ManualPattern",
    "OnCondition",
    "OnContextCondition",
    "RandomPattern",
    "ReplyResult",
    "RevertToUserTarget",
    "RoundRobinPattern",
    "StayTarget",
    "StringLLMCondition",
    "SwarmResult",
    "TerminateTarget",
    "TransitionTarget",
    "a_initiate_group_chat",
    "a_run_group_chat",
    "initiate_group_chat",
    "run_group_chat",
]

RESULT_MODELS = ("ReplyResult", "SwarmResult")
"""Pydantic models, imported on first use so that ``import parley`` does not load pydantic."""


def __getattr__(name: str) -> Any:
    if name in RESULT_MODELS:
        from parley.group import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
