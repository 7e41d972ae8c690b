"""parley: conversations between LLM-backed agents, with AG2's classic API on one small engine."""

from typing import TYPE_CHECKING, Any

from parley.agent import Agent, ConversableAgent
from parley.assistants import AssistantAgent, UserProxyAgent
from parley.chat_result import ChatResult
from parley.engine import Chat
from parley.group import (
    AgentNameTarget,
    AgentTarget,
    ContextExpression,
    ContextStr,
    ContextVariables,
    DefaultPattern,
    GroupManagerTarget,
    OnCondition,
    OnContextCondition,
    RevertToUserTarget,
    StayTarget,
    StringLLMCondition,
    TerminateTarget,
    a_initiate_group_chat,
    initiate_group_chat,
)
from parley.groupchat import GroupChat, GroupChatManager
from parley.models.scripted import FunctionModel, ModelRequest, ScriptedModel, tool_call
from parley.nested import initiate_chats
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
from parley.termination import StopKind, StopReason
from parley.tool_use import register_function
from parley.tools import Tool

if TYPE_CHECKING:
    from parley.group.results import ReplyResult, SwarmResult

__version__ = "0.1.0"

__all__ = [
    "AFTER_WORK",
    "ON_CONDITION",
    "UPDATE_SYSTEM_MESSAGE",
    "AfterWork",
    "AfterWorkOption",
    "Agent",
    "AgentNameTarget",
    "AgentTarget",
    "AssistantAgent",
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
    "ModelRequest",
    "OnCondition",
    "OnContextCondition",
    "ReplyResult",
    "RevertToUserTarget",
    "ScriptedModel",
    "StayTarget",
    "StopKind",
    "StopReason",
    "StringLLMCondition",
    "SwarmAgent",
    "SwarmResult",
    "TerminateTarget",
    "Tool",
    "UpdateSystemMessage",
    "UserProxyAgent",
    "a_initiate_group_chat",
    "a_initiate_swarm_chat",
    "a_run_swarm",
    "initiate_chats",
    "initiate_group_chat",
    "initiate_swarm_chat",
    "register_function",
    "register_hand_off",
    "run_swarm",
    "tool_call",
]


def __getattr__(name: str) -> Any:
    """``SwarmResult`` and ``ReplyResult`` are pydantic models, loaded on first use."""
    if name in ("ReplyResult", "SwarmResult"):
        from parley.group import results

        return getattr(results, name)
    raise AttributeError(f"module 'parley' has no attribute {name!r}")
