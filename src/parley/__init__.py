"""parley: conversations between LLM-backed agents, with AG2's classic API on one small engine."""

from parley.agent import Agent, ConversableAgent
from parley.assistants import AssistantAgent, UserProxyAgent
from parley.chat_result import ChatResult
from parley.engine import Chat
from parley.models.scripted import FunctionModel, ModelRequest, ScriptedModel, tool_call
from parley.termination import StopKind, StopReason
from parley.tool_use import register_function
from parley.tools import Tool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AssistantAgent",
    "Chat",
    "ChatResult",
    "ConversableAgent",
    "FunctionModel",
    "ModelRequest",
    "ScriptedModel",
    "StopKind",
    "StopReason",
    "Tool",
    "UserProxyAgent",
    "register_function",
    "tool_call",
]
