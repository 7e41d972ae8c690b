"""The embedded model: llama.cpp in this process, tools through the JSON-schema tool-call mode.

The tests marked by the ``smollm2`` fixture run the real thing on SmolLM2-135M-Instruct (see
``smollm2.py``); they assert structure, never wording. The others use a stand-in for llama.cpp.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
from smollm2 import smollm2_path

from parley import ConversableAgent
from parley.models import LocalModel, ModelError
from parley.models import local as local_module
from parley.models.config import ConfigListClient
from parley.models.weights import DEFAULT_WEIGHTS, ChecksumMismatchError
from parley.tools import Tool


def transfer_to_billing() -> str:
    """Billing questions: charges, invoices, refunds."""
    return "billing"


def transfer_to_technical_support() -> str:
    """Technical problems: errors, crashes, logins."""
    return "technical"


def set_priority(level: Literal["low", "high"]) -> str:
    """Set the ticket's priority."""
    return level


TOOLS = [Tool(transfer_to_billing).schema, Tool(transfer_to_technical_support).schema]
NAMES = {"transfer_to_billing", "transfer_to_technical_support"}
ROUTE = [
    {"role": "system", "content": "You route customers to the right team."},
    {"role": "user", "content": "I was charged twice for my subscription."},
]


@pytest.fixture(scope="module")
def smollm2() -> Path:
    return smollm2_path()


# ----------------------------------------------------------------------------------------------------
# configuration, without llama.cpp


def test_importing_parley_models_does_not_import_llama_cpp():
    code = (
        "import sys, parley, parley.models\n"
        "from parley.models import LocalModel\n"
        "LocalModel('model.gguf'); parley.ConversableAgent('a', llm_config={'config_list': "
        "[{'api_type': 'local', 'model': 'qwen2.5-coder-1.5b-instruct'}]})\n"
        "print('llama_cpp' in sys.modules)"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert completed.stdout.strip() == "False"


def test_a_config_names_the_gguf_file_or_the_default_weights():
    by_path = LocalModel.from_config(
        {"model": "smol", "api_type": "local", "model_path": "/m/smol.gguf", "n_ctx": 1024, "temperature": 0}
    )
    by_model = LocalModel.from_config({"model": "/m/other.gguf", "api_type": "local", "n_threads": 3})
    default = LocalModel.from_config({"model": DEFAULT_WEIGHTS.name, "api_type": "local"})

    assert (by_path.model_path, by_path.model, by_path.n_ctx, by_path.params) == (
        Path("/m/smol.gguf"),
        "smol",
        1024,
        {"temperature": 0},
    )
    assert (by_model.model_path, by_model.model, by_model.n_threads) == (
        Path("/m/other.gguf"),
        "other.gguf",
        3,
    )
    assert default.model_path is None
    assert default.model == DEFAULT_WEIGHTS.file_name


def test_load_settings_beside_the_config_list_apply_to_each_local_config():
    client = ConfigListClient(
        {"config_list": [{"api_type": "local", "model": "/m/a.gguf"}], "n_ctx": 8192, "temperature": 0}
    )

    model = client._client(0)

    assert isinstance(model, LocalModel)
    assert (model.n_ctx, model.params, client.params) == (8192, {}, {"temperature": 0})


def test_a_config_that_names_no_file_is_refused():
    with pytest.raises(ValueError, match="needs a GGUF file"):
        LocalModel.from_config({"model": "gpt-4o", "api_type": "local"})
    with pytest.raises(ValueError, match="json_schema"):
        LocalModel.from_config({"model": "/m/a.gguf", "api_type": "local", "tool_call_mode": "native"})


def test_without_llama_cpp_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)

    with pytest.raises(ImportError, match=r"parley\[local\]"):
        LocalModel(tmp_path / "m.gguf").load()


# ----------------------------------------------------------------------------------------------------
# requests and replies, with a stand-in for llama.cpp


class StandInLlama:
    """Answers ``create_chat_completion`` from a list of (text, finish_reason), recording each request."""

    def __init__(self, *replies: tuple[str, str]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def create_chat_completion(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        text, finish_reason = self.replies.pop(0)
        return {
            "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 7},
        }


def stand_in(
    monkeypatch: pytest.MonkeyPatch, *replies: tuple[str, str], **options: Any
) -> tuple[LocalModel, StandInLlama]:
    llama = StandInLlama(*replies)
    model = LocalModel("/models/stand-in.gguf", **options)
    model._loaded = local_module._Loaded(llama)
    monkeypatch.setattr(LocalModel, "_check_grammar", lambda self, engine, schema: None)
    monkeypatch.setattr(
        local_module, "_parameters", frozenset({"temperature", "max_tokens", "response_format", "seed"})
    )
    return model, llama


def test_tools_become_a_json_schema_and_the_prompt_names_them(monkeypatch: pytest.MonkeyPatch):
    model, llama = stand_in(monkeypatch, ('{"name": "transfer_to_billing", "arguments": {}}', "stop"))

    response = model.create(ROUTE, TOOLS, temperature=0, tool_choice="required")

    request = llama.requests[0]
    schema = request["response_format"]["schema"]
    assert request["response_format"]["type"] == "json_object"
    assert [option["properties"]["name"]["const"] for option in schema["anyOf"]] == sorted(NAMES)
    assert "transfer_to_technical_support" in request["messages"][0]["content"]
    assert (request["temperature"], request["max_tokens"]) == (0, local_module.DEFAULT_MAX_TOKENS)
    assert response.message["tool_calls"][0]["function"] == {"name": "transfer_to_billing", "arguments": "{}"}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.cost) == (40, 7, 0.0)
    assert response.model == "stand-in.gguf"


def test_history_is_sent_as_plain_messages_and_unknown_parameters_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
):
    model, llama = stand_in(monkeypatch, ("Sure.", "stop"), params={"max_tokens": 64})
    history = [
        *ROUTE,
        {
            "role": "assistant",
            "content": None,
            "name": "triage",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "transfer_to_billing", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Transferred."},
    ]

    with pytest.warns(UserWarning, match="frequency_boost"):
        response = model.create(history, None, frequency_boost=2, stream=True)

    request = llama.requests[0]
    assert request["messages"][2:] == [
        {"role": "assistant", "content": '{"name": "transfer_to_billing", "arguments": {}}'},
        {"role": "user", "content": "Result of transfer_to_billing: Transferred."},
    ]
    assert "frequency_boost" not in request and "stream" not in request and "response_format" not in request
    assert request["max_tokens"] == 64
    assert response.message == {"role": "assistant", "content": "Sure."}


def test_tool_choice_none_still_answers_in_json_and_a_cut_off_answer_is_kept(monkeypatch: pytest.MonkeyPatch):
    model, llama = stand_in(
        monkeypatch, ('{"content": "Your refund is on its way, it reaches the ca', "length")
    )

    response = model.create(ROUTE, TOOLS, tool_choice="none")

    assert llama.requests[0]["response_format"]["schema"]["anyOf"][0]["required"] == ["content"]
    assert response.message == {
        "role": "assistant",
        "content": "Your refund is on its way, it reaches the ca",
    }


def test_a_tool_call_cut_off_or_a_reply_that_is_not_the_schema_is_an_error(monkeypatch: pytest.MonkeyPatch):
    model, _ = stand_in(
        monkeypatch,
        ('{"name": "transfer_to_billing", "arguments": {"reason": "dou', "length"),
        ("I think billing.", "stop"),
        ("", "stop"),
    )

    with pytest.raises(ModelError, match="cut off at max_tokens=512"):
        model.create(ROUTE, TOOLS)
    with pytest.raises(ModelError, match="not valid JSON"):
        model.create(ROUTE, TOOLS)
    with pytest.raises(ModelError, match="empty reply"):
        model.create(ROUTE)


# ----------------------------------------------------------------------------------------------------
# the real thing, on SmolLM2


def test_smollm2_loads_once_for_every_model_of_the_file(smollm2: Path):
    first = LocalModel(smollm2, n_ctx=2048).load()
    second = LocalModel(smollm2, n_ctx=2048).load()

    assert first._loaded is second._loaded
    assert first._loaded is not None
    assert first._loaded.llama.n_ctx() == 2048


def test_smollm2_plain_reply(smollm2: Path):
    model = LocalModel(smollm2, n_ctx=2048, params={"temperature": 0})

    response = model.create([{"role": "user", "content": "What is the capital of France?"}], max_tokens=24)

    assert response.message["role"] == "assistant"
    assert isinstance(response.message["content"], str) and response.message["content"].strip()
    assert "tool_calls" not in response.message
    assert response.usage.prompt_tokens > 0 and 0 < response.usage.completion_tokens <= 24
    assert (response.model, response.cost) == (smollm2.name, 0.0)


def test_smollm2_constrained_tool_call_is_parsed_into_tool_calls(smollm2: Path):
    model = LocalModel(smollm2, n_ctx=2048, params={"temperature": 0, "max_tokens": 48})
    priority = Tool(set_priority).schema

    routed = model.create(ROUTE, TOOLS, tool_choice="required")
    chosen = model.create(
        ROUTE, [*TOOLS, priority], tool_choice={"type": "function", "function": {"name": "set_priority"}}
    )

    (call,) = routed.message["tool_calls"]
    assert call["function"]["name"] in NAMES
    assert json.loads(call["function"]["arguments"]) == {}
    assert call["id"].startswith("call_") and call["type"] == "function"
    (call,) = chosen.message["tool_calls"]
    assert call["function"]["name"] == "set_priority"
    assert json.loads(call["function"]["arguments"])["level"] in ("low", "high")


def test_smollm2_with_tool_choice_none_replies_without_a_tool(smollm2: Path):
    model = LocalModel(smollm2, n_ctx=2048, params={"temperature": 0, "max_tokens": 48})

    response = model.create(ROUTE, TOOLS, tool_choice="none")

    assert "tool_calls" not in response.message
    assert isinstance(response.message["content"], str)


def test_a_file_that_does_not_match_its_checksum_is_refused(smollm2: Path):
    actual = hashlib.sha256(smollm2.read_bytes()).hexdigest()

    with pytest.raises(ChecksumMismatchError) as refused:
        LocalModel(smollm2, sha256="0" * 64).load()

    assert (refused.value.expected, refused.value.actual) == ("0" * 64, actual)
    assert LocalModel(smollm2, sha256=actual).load()._loaded is not None


def test_a_schema_llama_cpp_cannot_express_is_an_error_not_unconstrained_json(smollm2: Path):
    unsupported = {
        "type": "function",
        "function": {
            "name": "odd",
            "parameters": {
                "type": "object",
                "properties": {"x": {"not": {"type": "string"}}},
                "required": ["x"],
            },
        },
    }

    with pytest.raises(ModelError, match="cannot constrain"):
        LocalModel(smollm2, n_ctx=2048).create(ROUTE, [unsupported])


def test_a_file_llama_cpp_cannot_load_is_an_error(smollm2: Path, tmp_path: Path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)

    with pytest.raises(ModelError, match="cannot load"):
        LocalModel(broken).load()
    with pytest.raises(ModelError, match="no model file"):
        LocalModel(tmp_path / "missing.gguf").load()


async def test_smollm2_async_calls_take_turns_on_the_shared_model(smollm2: Path):
    models = [LocalModel(smollm2, n_ctx=2048, params={"temperature": 0, "max_tokens": 32}) for _ in range(3)]

    responses = await asyncio.gather(
        *(model.a_create(ROUTE, TOOLS, tool_choice="required") for model in models)
    )

    assert all(response.message["tool_calls"][0]["function"]["name"] in NAMES for response in responses)


def test_smollm2_as_an_agents_llm_config(smollm2: Path):
    config = {
        "config_list": [{"api_type": "local", "model": "smol", "model_path": str(smollm2), "n_ctx": 2048}],
        "temperature": 0,
        "max_tokens": 16,
    }
    assistant = ConversableAgent("assistant", llm_config=config, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(assistant, "Say hello.", max_turns=1, silent=True)

    assert isinstance(ConfigListClient(config)._client(0), LocalModel)
    assert [message["name"] for message in result.chat_history] == ["user", "assistant"]
    assert result.cost["usage_including_cached_inference"]["smol"]["completion_tokens"] > 0


def test_smollm2_keeps_stderr_clean(smollm2: Path):
    code = (
        "import sys\n"
        "from parley.models import LocalModel\n"
        f"model = LocalModel({str(smollm2)!r}, n_ctx=2048, params={{'max_tokens': 8}})\n"
        "model.create([{'role': 'user', 'content': 'hi'}])\n"
        "print('done')"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "done"
    assert completed.stderr == ""
