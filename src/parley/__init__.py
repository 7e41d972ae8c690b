"""parley: conversations between LLM-backed agents, with AG2's classic API on one small engine."""

from typing import TYPE_CHECKING, Any

from parley.agent import Agent, ConversableAgent
from parley.assistants import AssistantAgent, UserProxyAgent
from parley.chat_result import ChatResult
from parley.context_variables import ContextVariables
from parley.engine import Chat
from parley.exceptions import (
    AgentNameConflictError,
    InvalidCarryOverTypeError,
    NoEligibleSpeakerError,
    SenderRequiredError,
    UndefinedNextAgentError,
)
from parley.groupchat import GroupChat, GroupChatManager
from parley.models.cache import Cache
from parley.nested import a_initiate_chats, initiate_chats
from parley.termination import StopKind, StopReason
from parley.tool_use import register_function
from parley.tools import Tool

if TYPE_CHECKING:
    from parley.group import (
        AgentNameTarget,
        AgentTarget,
        AskUserTarget,
        AutoPattern,
        ContextExpression,
        ContextStr,
        DefaultPattern,
        GroupManagerTarget,
        Handoffs,
        ManualPattern,
        OnCondition,
        OnContextCondition,
        RandomPattern,
        RevertToUserTarget,
        RoundRobinPattern,
        StayTarget,
        StringLLMCondition,
        TerminateTarget,
        a_initiate_group_chat,
        a_run_group_chat,
        initiate_group_chat,
        run_group_chat,
    )
    from parley.group.results import ReplyResult, SwarmResult
    from parley.models.llm_config import LLMConfig, OpenAILLMConfigEntry
    from parley.models.scripted import FunctionModel, ModelRequest, ScriptedModel, tool_call
    from parley.models.usage import gather_usage_summary
    from parley.runners import Outcome, RayRunner, a_run_many, run_many
    from parley.swarm import (
        AFTER_WORK,
        ON_CONDITION,
        UPDATE_SYSTEM_MESSAGE,
        AfterWork,
        AfterWorkOption,
        SwarmAgent,
        UpdateSystemMessage,
        a_initiate_swarm_chat,
        a_run_swarm,
        initiate_swarm_chat,
        register_hand_off,
        run_swarm,
    )

__version__ = "0.1.0"

#: Names loaded on first use: pydantic models (``import parley`` does not load pydantic), the batch
#: runners, the scripted models, which a chat with a real model does not need, and the swarm and group
#: pattern APIs, which two-agent and group chats do not.
_LAZY = {
    name: module
    for module, names in {
        "parley.group": (
            "AgentNameTarget",
            "AgentTarget",
            "AskUserTarget",
            "AutoPattern",
            "ContextExpression",
            "ContextStr",
            "DefaultPattern",
            "GroupManagerTarget",
            "Handoffs",
            "ManualPattern",
            "OnCondition",
            "OnContextCondition",
            "RandomPattern",
            "RevertToUserTarget",
            "RoundRobinPattern",
            "StayTarget",
            "StringLLMCondition",
            "TerminateTarget",
            "a_initiate_group_chat",
            "a_run_group_chat",
            "initiate_group_chat",
            "run_group_chat",
        ),
        "parley.swarm": (
            "AFTER_WORK",
            "ON_CONDITION",
            "UPDATE_SYSTEM_MESSAGE",
            "AfterWork",
            "AfterWorkOption",
            "SwarmAgent",
            "UpdateSystemMessage",
            "a_initiate_swarm_chat",
            "a_run_swarm",
            "initiate_swarm_chat",
            "register_hand_off",
            "run_swarm",
        ),
        "parley.models.llm_config": ("LLMConfig", "OpenAILLMConfigEntry"),
        "parley.group.results": ("ReplyResult", "SwarmResult"),
        "parley.runners": ("Outcome", "RayRunner", "a_run_many", "run_many"),
        "parley.models.scripted": ("FunctionModel", "ModelRequest", "ScriptedModel", "tool_call"),
        "parley.models.usage": ("gather_usage_summary",),
    }.items()
    for name in names
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'parley' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "AFTER_WORK",
    "ON_CONDITION",
    "UPDATE_SYSTEM_MESSAGE",
    "AfterWork",
    "AfterWorkOption",
    "Agent",
    "AgentNameConflictError",
    "AgentNameTarget",
    "AgentTarget",
    "AskUserTarget",
    "AssistantAgent",
    "AutoPattern",
    "Cache",
    "Chat",
    "ChatResult",
    "ContextExpression",
    "ContextStr",
    "ContextVariables",
    "ConversableAgent",
    "DefaultPattern",
    "FunctionModel",
    "GroupChat",
    "GroupChatManager",
    "GroupManagerTarget",
    "Handoffs",
    "InvalidCarryOverTypeError",
    "LLMConfig",
    "ManualPattern",
    "ModelRequest",
    "NoEligibleSpeakerError",
    "OnCondition",
    "OnContextCondition",
    "OpenAILLMConfigEntry",
    "Outcome",
    "RandomPattern",
    "RayRunner",
    "ReplyResult",
    "RevertToUserTarget",
    "RoundRobinPattern",
    "ScriptedModel",
    "SenderRequiredError",
    "StayTarget",
    "StopKind",
    "StopReason",
    "StringLLMCondition",
    "SwarmAgent",
    "SwarmResult",
    "TerminateTarget",
    "Tool",
    "UndefinedNextAgentError",
    "UpdateSystemMessage",
    "UserProxyAgent",
    "a_initiate_chats",
    "a_initiate_group_chat",
    "a_initiate_swarm_chat",
    "a_run_group_chat",
    "a_run_many",
    "a_run_swarm",
    "gather_usage_summary",
    "initiate_chats",
    "initiate_group_chat",
    "initiate_swarm_chat",
    "register_function",
    "register_hand_off",
    "run_group_chat",
    "run_many",
    "run_swarm",
    "tool_call",
]
