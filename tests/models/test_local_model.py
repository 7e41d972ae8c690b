"""The embedded model: llama.cpp in this process, tools through the JSON-schema tool-call mode.

The tests marked by the ``smollm2`` fixture run the real thing on SmolLM2-135M-Instruct (see
``smollm2.py``); they assert structure, never wording. The others use a stand-in for llama.cpp.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from routing_swarm import NAMES, ROUTE, TOOLS, triage_swarm
from smollm2 import smollm2_path

from parley import (
    ConversableAgent,
    initiate_swarm_chat,
)
from parley.models import LocalModel, ModelError, json_tools, local_runner
from parley.models import local as local_module
from parley.models.config import ConfigListClient
from parley.models.local import LocalStats
from parley.models.local_runner import Choice, Generation, Loaded, PrefixStates, choose, is_clear
from parley.models.streaming import StreamedText, token_sink
from parley.models.weights import DEFAULT_WEIGHTS, ChecksumMismatchError
from parley.tools import Tool


def transfer_to_account() -> str:
    """Account changes: email, name, team members."""
    return "account"


def set_priority(level: Literal["low", "high"]) -> str:
    """Set the ticket's priority."""
    return level


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


def test_a_local_config_without_a_model_means_the_default_weights():
    in_list = ConfigListClient({"config_list": [{"api_type": "local"}], "temperature": 0})._client(0)
    alone = ConfigListClient({"api_type": "local", "n_ctx": 2048})._client(0)

    for model in (in_list, alone):
        assert isinstance(model, LocalModel)
        assert model.model_path is None and model.model == DEFAULT_WEIGHTS.file_name
    assert isinstance(alone, LocalModel) and alone.n_ctx == 2048
    with pytest.raises(ValueError, match="must be a dict with a 'model'"):
        ConfigListClient({"config_list": [{"api_type": "openai"}]})


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

    with pytest.raises(ImportError, match=r"parley-llm\[local\]"):
        LocalModel(tmp_path / "m.gguf").load()


# ----------------------------------------------------------------------------------------------------
# requests and replies, with a stand-in for llama.cpp


class StandIn:
    """Stands in for llama.cpp: answers from a list of (text, finish_reason). The name a reply calls is
    "chosen" from the text; the rest of the text goes to the consumer a few characters at a time, as
    tokens come. Records each request."""

    def __init__(self, *replies: tuple[str, str]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.choices: list[list[str]] = []

    def choose(self, loaded: Loaded, variants: list[Any], names: list[str], params: dict[str, Any]) -> Choice:
        self.choices.append(list(names))
        called = re.match(r'\{"name": "([^"]+)"', self.replies[0][0])
        name = called.group(1) if called and called.group(1) in names else names[0]
        return Choice(name, {name: 1.0}, len(variants), 5, 0.5)

    def generate(
        self,
        loaded: Loaded,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        *,
        grammar: Any = None,
        consume: Callable[[str], None] | None = None,
        forced: Callable[[], str | None] | None = None,
        prefill: str = "",
    ) -> Generation:
        self.requests.append({"messages": messages, "params": params, "prefill": prefill, "grammar": grammar})
        text, finish_reason = self.replies.pop(0)
        assert text.startswith(prefill), (text, prefill)
        pieces = [prefill] if prefill else []
        pieces += [text[start : start + 4] for start in range(len(prefill), len(text), 4)]
        for piece in pieces:
            if consume is not None:
                consume(piece)
            whole = forced() if forced is not None else None
            if whole is not None:
                text, finish_reason = whole, "stop"
                break
        return Generation(text, finish_reason, 40, 7, 12, 0.25)


def stand_in(
    monkeypatch: pytest.MonkeyPatch, *replies: tuple[str, str], **options: Any
) -> tuple[LocalModel, StandIn]:
    llama = StandIn(*replies)
    model = LocalModel("/models/stand-in.gguf", **options)
    model._loaded = Loaded(llama=None)
    monkeypatch.setattr(local_module, "generate", llama.generate)
    monkeypatch.setattr(local_module, "choose", llama.choose)
    monkeypatch.setattr(LocalModel, "_grammar", lambda self, engine, schema, closing=False: (schema, closing))
    return model, llama


def names_in(schema: dict[str, Any]) -> list[str]:
    return [option["properties"]["name"]["const"] for option in schema["anyOf"]]


def test_tools_become_a_json_schema_and_the_prompt_names_them(monkeypatch: pytest.MonkeyPatch):
    model, llama = stand_in(monkeypatch, ('{"name": "transfer_to_billing", "arguments": {}}', "stop"))

    response = model.create(ROUTE, TOOLS, temperature=0)

    assert llama.choices == [[*sorted(NAMES), "reply_to_user"]]
    request = llama.requests[0]
    assert request["prefill"] == '{"name": "transfer_to_billing", "arguments": '
    assert request["grammar"] == ({"type": "object", "properties": {}, "additionalProperties": False}, True)
    system = request["messages"][0]["content"]
    assert system.startswith("You route customers to the right team.\n\nYou can call these tools:")
    assert "- transfer_to_technical_support(): Technical problems: errors, crashes, logins." in system
    assert "- reply_to_user(text: string)" in system
    assert request["params"] == {"temperature": 0, "max_tokens": local_module.DEFAULT_MAX_TOKENS}
    assert response.message["tool_calls"][0]["function"] == {"name": "transfer_to_billing", "arguments": "{}"}
    assert (response.usage.prompt_tokens, response.usage.completion_tokens, response.cost) == (40, 7, 0.0)
    assert response.model == "stand-in.gguf"
    assert model.last_stats == LocalStats(40, 12 + 5, 7, 0.25 + 0.5, orders=2)


def test_the_model_chooses_among_the_tools_listed_in_several_orders(monkeypatch: pytest.MonkeyPatch):
    variants: list[list[str]] = []

    def choose(loaded: Any, given: list[Any], names: list[str], params: Any) -> Choice:
        variants.extend(
            next(message["content"] for message in variant if message["role"] == "system")
            for variant in given
        )
        return Choice("transfer_to_account", {}, len(given), 0, 0.0)

    tools = [*TOOLS, Tool(transfer_to_account).schema]
    model, llama = stand_in(monkeypatch, ('{"name": "transfer_to_account", "arguments": {}}', "stop"))
    monkeypatch.setattr(local_module, "choose", choose)

    model.create(ROUTE, tools)

    listed = [
        [line.split("(")[0][2:] for line in variant.splitlines() if line.startswith("- ")]
        for variant in variants
    ]
    assert listed == [
        ["transfer_to_billing", "transfer_to_technical_support", "transfer_to_account", "reply_to_user"],
        ["transfer_to_technical_support", "transfer_to_account", "transfer_to_billing", "reply_to_user"],
        ["transfer_to_account", "transfer_to_billing", "transfer_to_technical_support", "reply_to_user"],
    ]
    assert llama.requests[0]["messages"][0]["content"] == variants[0]


def test_a_single_name_is_not_chosen_but_written_at_once(monkeypatch: pytest.MonkeyPatch):
    model, llama = stand_in(
        monkeypatch,
        ('{"name": "transfer_to_technical_support", "arguments": {}}', "stop"),
        ('{"name": "reply_to_user", "arguments": {"text": "Hello."}}', "stop"),
    )
    named = {"type": "function", "function": {"name": "transfer_to_technical_support"}}

    routed = model.create(ROUTE, TOOLS, tool_choice=named)
    said = model.create(ROUTE, TOOLS, tool_choice="none")

    assert llama.choices == []
    assert routed.message["tool_calls"][0]["function"]["name"] == "transfer_to_technical_support"
    assert said.message == {"role": "assistant", "content": "Hello."}
    assert [request["prefill"] for request in llama.requests] == [
        '{"name": "transfer_to_technical_support", "arguments": ',
        '{"name": "reply_to_user", "arguments": ',
    ]


def test_the_plain_reply_choice_comes_back_as_an_ordinary_reply(monkeypatch: pytest.MonkeyPatch):
    model, _ = stand_in(
        monkeypatch, ('{"name": "reply_to_user", "arguments": {"text": "Which charge do you mean?"}}', "stop")
    )

    response = model.create(ROUTE, TOOLS)

    assert response.message == {"role": "assistant", "content": "Which charge do you mean?"}


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
        response = model.create(history, None, frequency_boost=2, stream=True, tool_choice="auto")

    request = llama.requests[0]
    assert request["messages"][2:] == [
        {"role": "assistant", "content": "Called transfer_to_billing()."},
        {"role": "user", "content": "Result of transfer_to_billing: Transferred."},
    ]
    assert request["params"] == {"max_tokens": 64}
    assert (request["grammar"], request["prefill"]) == (None, ""), "without tools: plain text generation"
    assert response.message == {"role": "assistant", "content": "Sure."}


def test_a_plain_reply_cut_off_is_kept_as_far_as_it_got(monkeypatch: pytest.MonkeyPatch):
    model, _ = stand_in(
        monkeypatch,
        (
            '{"name": "reply_to_user", "arguments": {"text": "Your refund is on its way, it reaches the ca',
            "length",
        ),
    )

    response = model.create(ROUTE, TOOLS)

    assert response.message == {
        "role": "assistant",
        "content": "Your refund is on its way, it reaches the ca",
    }


def test_a_tool_call_cut_off_or_an_empty_plain_text_reply_is_an_error(monkeypatch: pytest.MonkeyPatch):
    model, _ = stand_in(
        monkeypatch,
        ('{"name": "set_priority", "arguments": {"level": "hi', "length"),
        ("", "stop"),
    )
    tools = [*TOOLS, Tool(set_priority).schema]

    with pytest.raises(ModelError, match="max_tokens=512: the model was cut off"):
        model.create(ROUTE, tools)
    with pytest.raises(ModelError, match="empty reply"):
        model.create(ROUTE)


def test_once_a_tool_without_arguments_is_named_the_rest_is_not_generated(monkeypatch: pytest.MonkeyPatch):
    model, _ = stand_in(
        monkeypatch, ('{"name": "transfer_to_billing", "arguments": {"never": "generated"}}', "stop")
    )

    response = model.create(ROUTE, TOOLS)

    assert response.message["tool_calls"][0]["function"] == {"name": "transfer_to_billing", "arguments": "{}"}


@pytest.mark.parametrize(
    ("tools", "text", "shown"),
    [
        (None, "Hello there, friend.", [("Hello there, friend.", None)]),
        (TOOLS, '{"name": "reply_to_user", "arguments": {"text": "Hi \\"you\\""}}', [('Hi "you"', None)]),
        (
            [Tool(set_priority).schema],
            '{"name": "set_priority", "arguments": {"level": "high"}}',
            [('{"level": "high"}', "set_priority")],
        ),
    ],
)
def test_streaming_sends_the_text_to_the_sink_and_returns_the_same_response(
    monkeypatch: pytest.MonkeyPatch, tools: Any, text: str, shown: list[tuple[str, str | None]]
):
    model, _ = stand_in(monkeypatch, (text, "stop"), (text, "stop"))
    pieces: list[StreamedText] = []

    plain = model.create(ROUTE, tools)
    token = token_sink.set(pieces.append)
    try:
        streamed = model.create(ROUTE, tools, stream=True)
    finally:
        token_sink.reset(token)

    assert len(pieces) > 1, "the text arrives in pieces"
    joined: dict[str | None, str] = {}
    for piece in pieces:
        joined[piece.tool_call] = joined.get(piece.tool_call, "") + piece.text
    assert [(text, tool) for tool, text in joined.items()] == shown
    assert without_ids(streamed.message) == without_ids(plain.message)
    assert (streamed.usage, streamed.model, streamed.cost) == (plain.usage, plain.model, plain.cost)


def test_without_stream_the_sink_gets_nothing(monkeypatch: pytest.MonkeyPatch):
    model, _ = stand_in(monkeypatch, ("Hello there.", "stop"))
    pieces: list[StreamedText] = []

    token = token_sink.set(pieces.append)
    try:
        model.create(ROUTE)
    finally:
        token_sink.reset(token)

    assert pieces == []


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    calls = [{**call, "id": None} for call in message.get("tool_calls") or ()]
    return {**message, **({"tool_calls": calls} if calls else {})}


def test_a_choice_is_clear_once_the_leading_name_is_far_enough_ahead_of_the_runner_up():
    assert is_clear({"a": -0.01, "b": -5.0, "c": -6.0})
    assert not is_clear({"a": -0.5, "b": -1.2, "c": -6.0})
    assert is_clear({"a": -1.0, "b": -4.0}, margin=3.0)
    assert not is_clear({"a": -1.0, "b": -3.9}, margin=3.0)
    assert not is_clear({"a": -0.01, "b": -9.0}, margin=math.inf)
    assert is_clear({"a": 0.0})


@pytest.mark.parametrize(
    ("per_order", "asked", "probability"),
    [
        ([(0.99, 0.01)], 1, 0.99),
        ([(0.9, 0.1), (0.9, 0.1)], 2, 0.9),
        ([(0.4, 0.6), (0.7, 0.3), (0.6, 0.4)], 3, 0.168 ** (1 / 3) / (0.168 ** (1 / 3) + 0.072 ** (1 / 3))),
    ],
)
def test_further_orders_are_asked_only_while_the_choice_is_not_clear(
    monkeypatch: pytest.MonkeyPatch, per_order: list[tuple[float, float]], asked: int, probability: float
):
    answers = iter(per_order)

    def name_log_probabilities(loaded: Loaded, prompt: Any, names: list[str]) -> tuple[dict[str, float], int]:
        first, second = next(answers)
        return {"a": math.log(first), "b": math.log(second)}, 10

    monkeypatch.setattr(local_runner, "_rendered", lambda llama, messages, params: {"prompt": messages})
    monkeypatch.setattr(local_runner, "_name_log_probabilities", name_log_probabilities)
    variants = [[{"role": "system", "content": f"order {number}"}] for number in range(3)]

    choice = choose(Loaded(llama=None), variants, ["a", "b"], {})

    assert (choice.name, choice.orders, choice.evaluated_prompt_tokens) == ("a", asked, 10 * asked)
    assert choice.probabilities["a"] == pytest.approx(probability)
    assert sum(choice.probabilities.values()) == pytest.approx(1.0)


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


def test_smollm2_an_agent_without_tools_writes_plain_text_and_one_with_tools_a_call_or_a_reply(
    smollm2: Path, monkeypatch: pytest.MonkeyPatch
):
    config = {
        "config_list": [{"api_type": "local", "model_path": str(smollm2), "n_ctx": 2048}],
        "temperature": 0,
        "max_tokens": 40,
    }
    triage, billing, technical = triage_swarm(config, "You answer billing questions.")
    constrained: list[bool] = []
    real_generate = local_module.generate

    def generate(*args: Any, **kwargs: Any) -> Generation:
        constrained.append(kwargs.get("grammar") is not None)
        return real_generate(*args, **kwargs)

    monkeypatch.setattr(local_module, "generate", generate)

    result, _, last = initiate_swarm_chat(
        initial_agent=triage,
        messages="I was charged twice for my subscription.",
        agents=[triage, billing, technical],
    )

    said = [message for message in result.chat_history[1:] if message.get("role") != "tool"]
    first, *rest = said
    if first.get("tool_calls"):
        assert first["tool_calls"][0]["function"]["name"] in NAMES
        assert last.name in ("billing", "technical_support")
        (answer,) = rest
        assert isinstance(answer["content"], str) and answer["content"].strip()
        assert constrained == [True, False], "the specialist has no tools: plain text generation"
    else:
        assert isinstance(first["content"], str) and not first["content"].lstrip().startswith("{")
    for message in said:
        assert message.get("tool_calls") or not json_tools.text_tool_calls(message["content"], TOOLS)


@pytest.mark.parametrize("kind", ["plain", "reply", "call"])
def test_smollm2_streams_its_text_and_returns_what_it_returns_without_streaming(smollm2: Path, kind: str):
    model = LocalModel(smollm2, n_ctx=2048, params={"temperature": 0, "max_tokens": 24})
    tools = {"plain": None, "reply": TOOLS, "call": [Tool(set_priority).schema]}[kind]
    tool_choice = {"plain": None, "reply": "none", "call": "required"}[kind]
    pieces: list[StreamedText] = []

    plain = model.create(ROUTE, tools, tool_choice=tool_choice)
    token = token_sink.set(pieces.append)
    try:
        streamed = model.create(ROUTE, tools, tool_choice=tool_choice, stream=True)
    finally:
        token_sink.reset(token)

    assert without_ids(streamed.message) == without_ids(plain.message)
    assert (streamed.usage, streamed.model) == (plain.usage, plain.model)
    assert len(pieces) > 1
    joined = "".join(piece.text for piece in pieces)
    if kind == "call":
        assert {piece.tool_call for piece in pieces} == {"set_priority"}
        assert json.loads(joined) == json.loads(streamed.message["tool_calls"][0]["function"]["arguments"])
    else:
        assert {piece.tool_call for piece in pieces} == {None}
        assert joined == streamed.message["content"]


def test_smollm2_an_agents_next_turn_evaluates_only_what_is_new_even_after_another_agent(smollm2: Path):
    first_agent = [
        {"role": "system", "content": "You are a librarian. " * 30},
        {"role": "user", "content": "Hi!"},
    ]
    other_agent = [{"role": "system", "content": "You are a chef. " * 30}, {"role": "user", "content": "Hi!"}]
    model = LocalModel(smollm2, n_ctx=2048, params={"temperature": 0, "max_tokens": 12})

    answer = model.create(first_agent).message["content"]
    first = model.last_stats
    model.create(other_agent)
    later_turn = [
        *first_agent,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "A novel?"},
    ]
    reused = model.create(later_turn)
    second = model.last_stats
    assert first is not None and second is not None
    engine = model._loaded
    assert engine is not None
    engine.prefixes = PrefixStates(0)
    engine.llama.reset()
    fresh = model.create(later_turn)
    from_scratch = model.last_stats
    assert from_scratch is not None

    assert first.evaluated_prompt_tokens > first.prompt_tokens - 10, "a new system prompt is evaluated"
    assert second.evaluated_prompt_tokens <= second.prompt_tokens - first.prompt_tokens
    assert from_scratch.evaluated_prompt_tokens == from_scratch.prompt_tokens
    assert reused.message == fresh.message, "a restored KV state answers as a fresh evaluation does"


def test_smollm2_kept_states_are_bounded_and_their_buffers_reused(smollm2: Path):
    model = LocalModel(smollm2, n_ctx=2048, params={"temperature": 0, "max_tokens": 4})
    prompt = [{"role": "system", "content": "You are a librarian. " * 30}, {"role": "user", "content": "Hi!"}]
    model.create(prompt)
    engine = model._loaded
    assert engine is not None
    engine.prefixes = PrefixStates(1 << 30, capacity_states=3)

    for number in range(8):  # eight conversations, none holding another: older states are dropped
        model.create([prompt[0], {"role": "user", "content": f"Question {number}?"}])
    kept = engine.prefixes
    buffers = [id(buffer) for buffer, _ in kept._states.values()] + [id(b) for b in kept._spare]
    model.create([prompt[0], {"role": "user", "content": "Question 1?"}])
    later = model.last_stats
    fresh = model.create(prompt)

    assert len(kept) == 3
    assert all(id(buffer) in buffers for buffer, _ in kept._states.values()), "no new buffer once full"
    assert later is not None
    assert later.evaluated_prompt_tokens < 10, "the system prompt came from a kept state"
    assert fresh.message["content"], "a state restored from a reused buffer answers"


def test_smollm2_chooses_the_name_with_the_highest_probability_summed_over_orders(smollm2: Path):
    model = LocalModel(smollm2, n_ctx=2048).load()
    engine = model._loaded
    assert engine is not None
    tools = [*TOOLS, Tool(transfer_to_account).schema]
    names = [tool["function"]["name"] for tool in tools]
    variants = [
        [{"role": "system", "content": json_tools.tools_prompt(order, "required")}, ROUTE[1]]
        for order in (tools, tools[1:] + tools[:1], tools[2:] + tools[:2])
    ]

    with engine.lock:
        alone = [choose(engine, [variant], names, {}) for variant in variants]
        together = choose(engine, variants, names, {}, margin=math.inf)

    assert [choice.orders for choice in (*alone, together)] == [1, 1, 1, 3]
    for choice in (*alone, together):
        assert set(choice.probabilities) == set(names)
        assert sum(choice.probabilities.values()) == pytest.approx(1.0)
        assert choice.name == max(names, key=lambda name: choice.probabilities[name])
    for name in names:
        geometric_mean = math.prod(choice.probabilities[name] for choice in alone) ** (1 / 3)
        others = sum(math.prod(c.probabilities[n] for c in alone) ** (1 / 3) for n in names)
        assert together.probabilities[name] == pytest.approx(geometric_mean / others, rel=1e-3)
