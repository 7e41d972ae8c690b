"""Local OpenAI-compatible servers: llama-cpp-python's real server on SmolLM2, and the replies small
models give when served without constrained decoding (on a fake server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from fake_servers import FakeServer, completion
from llama_cpp_server import llama_cpp_server
from routing_swarm import NAMES, ROUTE, TOOLS, triage_swarm
from smollm2 import smollm2_path

from parley import StopKind, initiate_swarm_chat
from parley.models import OpenAIClient, json_tools


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with llama_cpp_server(smollm2_path()) as url:
        yield url


def smollm2_client(url: str, **options: Any) -> OpenAIClient:
    params = {"temperature": 0, "max_tokens": 48}
    return OpenAIClient("smollm2", base_url=url, tool_call_mode="json_schema", params=params, **options)


def a_call_or_a_reply(message: dict[str, Any]) -> bool:
    """A valid call of an offered tool, or a plain reply that is not JSON left unparsed."""
    if message.get("tool_calls"):
        (call,) = message["tool_calls"]
        return call["function"]["name"] in NAMES and isinstance(
            json.loads(call["function"]["arguments"]), dict
        )
    return isinstance(message.get("content"), str) and not message["content"].lstrip().startswith('{"name"')


def test_the_json_mode_finds_the_dialect_llama_cpp_pythons_server_takes(server_url: str):
    client = smollm2_client(server_url)

    first = client.create(ROUTE, TOOLS)
    routed = client.create(ROUTE, TOOLS, tool_choice="required")

    assert json_tools.dialect_for(server_url) == "json_object"
    assert a_call_or_a_reply(first.message)
    assert routed.message["tool_calls"][0]["function"]["name"] in NAMES


async def test_a_configured_dialect_is_sent_as_it_is(server_url: str):
    refused = smollm2_client(server_url, response_format_type="json_schema")
    taken = smollm2_client(server_url, response_format_type="json_object")

    with pytest.raises(openai.APIStatusError, match="response_format"):
        await refused.a_create(ROUTE, TOOLS, tool_choice="required")
    routed = await taken.a_create(ROUTE, TOOLS, tool_choice="required")

    assert routed.message["tool_calls"][0]["function"]["name"] in NAMES


def test_a_swarm_runs_through_the_server_in_the_json_mode(server_url: str):
    config = {
        "config_list": [{"model": "smollm2", "base_url": server_url, "tool_call_mode": "json_schema"}],
        "temperature": 0,
        "max_tokens": 48,
        "cache_seed": None,
    }
    triage, billing, technical = triage_swarm(config, "You handle billing.")

    result, _, _ = initiate_swarm_chat(
        initial_agent=triage,
        messages="I was charged twice for my subscription.",
        agents=[triage, billing, technical],
        max_rounds=6,
    )

    assert result.stop_reason is not None and result.stop_reason.kind is not StopKind.ERROR
    for message in result.chat_history[1:]:
        if message.get("role") != "tool":
            assert a_call_or_a_reply(message), message


def test_the_demo_runs_against_llama_cpp_pythons_server_with_json_tools(server_url: str):
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    command = [sys.executable, "-m", "parley", "demo", "--base-url", server_url, "--model", "smollm2"]
    command += ["--json-tools", "--message", "I was charged twice for my subscription."]

    completed = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    reason = next(line for line in completed.stdout.splitlines() if line.startswith("stop reason"))
    assert "error" not in reason


# ----------------------------------------------------------------------------------------------------
# a tool call written as text, as small models served without constrained decoding write them


def test_a_text_reply_that_is_exactly_a_tool_call_becomes_that_call():
    fenced = '```json\n{"name": "transfer_to_billing", "arguments": {}}\n```'
    with FakeServer() as server:
        server.script(completion(fenced), completion("I'd transfer you to billing."), completion(fenced))
        client = OpenAIClient("small", base_url=server.url)

        called = client.create(ROUTE, TOOLS)
        said = client.create(ROUTE, TOOLS)
        not_offered = client.create(ROUTE, None)

    assert called.message["tool_calls"][0]["function"] == {"name": "transfer_to_billing", "arguments": "{}"}
    assert called.message["content"] is None
    assert said.message == {"role": "assistant", "content": "I'd transfer you to billing."}
    assert not_offered.message == {"role": "assistant", "content": fenced}
