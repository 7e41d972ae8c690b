"""The models the demo's agents talk to: the embedded model, or an OpenAI-compatible endpoint."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from parley.demo.policy import ToolsThenAnswer
from parley.demo.support import TRIAGE
from parley.models import LocalModel, ModelClient, model_client_from_llm_config
from parley.models.weights import Progress

ModelFor = Callable[[str], ModelClient]
"""``model_for(agent_name)``: the model of each agent (a specialist's wrapped in :class:`ToolsThenAnswer`)."""

#: The most tokens a reply may take: answers are a few sentences, triage's replies one tool call.
MAX_TOKENS = 256
TRIAGE_MAX_TOKENS = 160


def request_params(agent_name: str) -> dict[str, Any]:
    """The request parameters of each agent: deterministic and short."""
    return {"temperature": 0, "max_tokens": TRIAGE_MAX_TOKENS if agent_name == TRIAGE else MAX_TOKENS}


def on_track(model: ModelClient, agent_name: str) -> ModelClient:
    """The agent's model with the demo's tool policy: a specialist starts with a tool call and answers
    once it has called one. Triage chooses on its own."""
    return model if agent_name == TRIAGE else ToolsThenAnswer(model, agent_name)


def local_models(
    model_path: str | Path | None = None, *, progress: Progress | None = None, n_threads: int | None = None
) -> ModelFor:
    """The embedded model (the default weights, or a GGUF file) for every agent, loaded now.

    The agents share one loaded model.
    """
    LocalModel(model_path, progress=progress, n_threads=n_threads).load()
    return lambda name: on_track(
        LocalModel(model_path, params=request_params(name), n_threads=n_threads), name
    )


def endpoint_models(
    model: str, base_url: str | None = None, api_key: str | None = None, *, json_tools: bool = False
) -> ModelFor:
    """A model behind an OpenAI-compatible endpoint for every agent (OpenAI itself without ``base_url``).

    ``json_tools`` asks for tool calls through a JSON schema instead of native tool calls.
    """
    config: dict[str, Any] = {"model": model, "api_key": api_key or os.environ.get("OPENAI_API_KEY")}
    if base_url:
        config["base_url"] = base_url
    if json_tools:
        config["tool_call_mode"] = "json_schema"

    def model_for(name: str) -> ModelClient:
        llm_config = {"config_list": [dict(config)], "cache_seed": None, **request_params(name)}
        client = model_client_from_llm_config(llm_config)
        assert client is not None
        return on_track(client, name)

    return model_for
