"""Swarms and group patterns: handoffs, transition targets, context variables, tool results."""

from parley.group.context_variables import ContextVariables
from parley.group.handoffs import Handoffs, OnCondition, StringLLMCondition
from parley.group.patterns import DefaultPattern, a_initiate_group_chat, initiate_group_chat
from parley.group.results import ReplyResult, SwarmResult
from parley.group.targets import (
    AfterWorkOption,
    AgentNameTarget,
    AgentTarget,
    RevertToUserTarget,
    StayTarget,
    TerminateTarget,
    TransitionTarget,
)

__all__ = [
    "AfterWorkOption",
    "AgentNameTarget",
    "AgentTarget",
    "ContextVariables",
    "DefaultPattern",
    "Handoffs",
    "OnCondition",
    "ReplyResult",
    "RevertToUserTarget",
    "StayTarget",
    "StringLLMCondition",
    "SwarmResult",
    "TerminateTarget",
    "TransitionTarget",
    "a_initiate_group_chat",
    "initiate_group_chat",
]
