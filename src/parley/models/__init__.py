"""Models: the client protocol, AG2's llm_config, provider clients and test doubles.

The provider clients (:class:`OpenAIClient`, :class:`AnthropicClient`) and the embedded
:class:`LocalModel` are loaded on first use, and their SDKs (llama.cpp) only when they are first needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.models.base import ModelClient, ModelError, ModelResponse, Usage
from parley.models.cache import Cache
from parley.models.config import AllConfigsFailedError, ConfigListClient, model_client_from_llm_config
from parley.models.faults import ModelResponseError

if TYPE_CHECKING:
    from parley.models.anthropic_client import AnthropicClient
    from parley.models.llm_config import LLMConfig, OpenAILLMConfigEntry
    from parley.models.local import LocalModel
    from parley.models.openai_client import OpenAIClient
    from parley.models.scripted import (
        FunctionModel,
        ModelRequest,
        RecordedMessages,
        ScriptedModel,
        ScriptExhaustedError,
        tool_call,
    )

_LAZY = {
    "OpenAIClient": "parley.models.openai_client",
    "AnthropicClient": "parley.models.anthropic_client",
    "LocalModel": "parley.models.local",
    "LLMConfig": "parley.models.llm_config",
    "OpenAILLMConfigEntry": "parley.models.llm_config",
    **dict.fromkeys(
        (
            "FunctionModel",
            "ModelRequest",
            "RecordedMessages",
            "ScriptedModel",
            "ScriptExhaustedError",
            "tool_call",
        ),
        "parley.models.scripted",
    ),
}

__all__ = [
    "AllConfigsFailedError",
    "AnthropicClient",
    "Cache",
    "ConfigListClient",
    "FunctionModel",
    "LLMConfig",
    "LocalModel",
    "ModelClient",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "ModelResponseError",
    "OpenAIClient",
    "OpenAILLMConfigEntry",
    "RecordedMessages",
    "ScriptExhaustedError",
    "ScriptedModel",
    "Usage",
    "model_client_from_llm_config",
    "tool_call",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'parley.models' has no attribute {name!r}")
