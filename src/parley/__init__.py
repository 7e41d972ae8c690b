"""parley: conversations between LLM-backed agents, with AG2's classic API on one small engine."""

from parley.agent import Agent, ConversableAgent
from parley.assistants import AssistantAgent, UserProxyAgent
from parley.chat_result import ChatResult
from parley.engine import Chat
from parley.group import (
    AgentNameTarget,
    AgentTarget,
    ContextVariables,
    DefaultPattern,
    OnCondition,
    ReplyResult,
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
from parley.runners import Outcome, RayRunner, a_run_many, run_many
from parley.swarm import (
    AFTER_WORK,
    ON_CONDITION,
    UPDATE_SYSTEM_MESSAGE,
    AfterWork,
    AfterWorkOption,
    SwarmAgent,
    SwarmResult,
    UpdateSystemMessage,
    a_initiate_swarm_chat,
    initiate_swarm_chat,
    register_hand_off,
)
from parley.termination import StopKind, StopReason
from parley.tool_use import register_function
from parley.tools import Tool

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
    "ContextVariables",
    "ConversableAgent",
    "DefaultPattern",
    "FunctionModel",
    "GroupChat",
    "GroupChatManager",
    "ModelRequest",
    "OnCondition",
    "Outcome",
    "RayRunner",
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
    "a_run_many",
    "initiate_chats",
    "initiate_group_chat",
    "initiate_swarm_chat",
    "register_function",
    "register_hand_off",
    "run_many",
    "tool_call",
]
