"""AG2's ``llm_config`` turned into a model client."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from parley.messages import Message
from parley.models.base import ModelClient, ModelError, ModelResponse

#: Where the client for each ``api_type`` lives; imported only when a config uses it.
PROVIDERS: dict[str, str] = {
    "openai": "parley.models.openai_client:OpenAIClient",
    "azure": "parley.models.openai_client:OpenAIClient",
    "anthropic": "parley.models.anthropic_client:AnthropicClient",
    "local": "parley.models.local:LocalModel",
}


def model_client_from_llm_config(llm_config: Any) -> ModelClient | None:
    """The model an agent's ``llm_config`` describes.

    ``False`` or ``None`` means no model; a :class:`ModelClient` (such as a ``ScriptedModel``) is used as
    it is; a dict in AG2's format (``{"config_list": [...], "temperature": ..., "cache_seed": ...}``, or
    a single config with ``"model"``) becomes a client that tries each config in order.
    """
    if llm_config is None or llm_config is False:
        return None
    if isinstance(llm_config, ModelClient):
        return llm_config
    if isinstance(llm_config, dict):
        return ConfigListClient(llm_config)
    raise TypeError(
        "llm_config must be False, None, a dict with a 'config_list', or a model client "
        f"(such as ScriptedModel), not {type(llm_config).__name__}"
    )


def split_llm_config(llm_config: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Validate AG2's llm_config and split it into its config list and the chat-wide settings."""
    settings = {key: value for key, value in llm_config.items() if key != "config_list"}
    if "config_list" in llm_config:
        config_list = llm_config["config_list"]
        if not isinstance(config_list, list) or not config_list:
            raise ValueError("llm_config['config_list'] must be a non-empty list of model configs")
    elif "model" in llm_config:
        config_list = [{key: settings.pop(key) for key in list(settings) if key in _PER_MODEL_KEYS}]
    else:
        raise ValueError(
            "llm_config needs a 'config_list' (or a 'model'); got keys " + str(sorted(llm_config))
        )
    for index, config in enumerate(config_list):
        if not isinstance(config, dict) or not config.get("model"):
            raise ValueError(f"llm_config['config_list'][{index}] must be a dict with a 'model'")
    return config_list, settings


_PER_MODEL_KEYS = frozenset(
    {
        "model",
        "api_key",
        "base_url",
        "api_type",
        "api_version",
        "price",
        "tags",
        "tool_call_mode",
        "model_path",
        "azure_endpoint",
        "organization",
        "default_headers",
    }
)


class ConfigListClient:
    """Tries each config of an AG2 ``config_list`` in order and answers with the first that works."""

    def __init__(self, llm_config: dict[str, Any]) -> None:
        self.config_list, self.settings = split_llm_config(llm_config)
        self._clients: list[ModelClient | None] = [None] * len(self.config_list)

    def _client(self, index: int) -> ModelClient:
        client = self._clients[index]
        if client is None:
            client = self._clients[index] = build_provider_client(self.config_list[index], self.settings)
        return client

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        failures: list[str] = []
        for index, config in enumerate(self.config_list):
            try:
                return self._client(index).create(messages, tools, **params)
            except Exception as error:
                failures.append(_describe_failure(config, error))
                if index == len(self.config_list) - 1:
                    raise ModelError(_all_failed(failures)) from error
        raise AssertionError("unreachable")

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        failures: list[str] = []
        for index, config in enumerate(self.config_list):
            try:
                return await self._client(index).a_create(messages, tools, **params)
            except Exception as error:
                failures.append(_describe_failure(config, error))
                if index == len(self.config_list) - 1:
                    raise ModelError(_all_failed(failures)) from error
        raise AssertionError("unreachable")


def build_provider_client(config: dict[str, Any], settings: dict[str, Any]) -> ModelClient:
    """The client for one config, by its ``api_type`` (``openai`` by default)."""
    api_type = config.get("api_type", "openai")
    target = PROVIDERS.get(api_type)
    if target is None:
        raise ValueError(
            f"unknown api_type {api_type!r} for model {config.get('model')!r}; known: {sorted(PROVIDERS)}"
        )
    module_name, class_name = target.split(":")
    provider = getattr(importlib.import_module(module_name), class_name)
    client: ModelClient = provider.from_config(config, settings)
    return client


def _describe_failure(config: dict[str, Any], error: Exception) -> str:
    where = config.get("base_url") or config.get("api_type", "openai")
    return f"model {config.get('model')!r} at {where}: {type(error).__name__}: {error}"


def _all_failed(failures: list[str]) -> str:
    return f"all {len(failures)} model config(s) failed:\n  " + "\n  ".join(failures)
