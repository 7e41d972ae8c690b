"""Models: the client protocol, AG2's llm_config, provider clients and test doubles."""

from parley.models.base import ModelClient, ModelError, ModelResponse, Usage
from parley.models.scripted import FunctionModel, ModelRequest, ScriptedModel, ScriptExhaustedError, tool_call

__all__ = [
    "FunctionModel",
    "ModelClient",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ScriptExhaustedError",
    "ScriptedModel",
    "Usage",
    "tool_call",
]
