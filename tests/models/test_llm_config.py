"""AG2's llm_config: config lists tried in order, settings beside them, validation, clear failures."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from fake_servers import FakeServer, Reply, completion, server_error

from parley import ConversableAgent
from parley.models import AllConfigsFailedError, ConfigListClient, ModelError, model_client_from_llm_config
from parley.models.config import split_llm_config


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


@pytest.fixture
def backup():
    with FakeServer() as running:
        yield running


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


HELLO = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]


# fallback -------------------------------------------------------------------------------------------


def test_the_next_config_answers_when_one_fails(server, backup, caplog):
    server.script(server_error(500))
    backup.script(completion("from the backup", model="backup-model"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "primary", "base_url": server.url, "api_key": "x", "max_retries": 0},
                {"model": "backup-model", "base_url": backup.url, "api_key": "y"},
            ]
        }
    )

    response = client.create(HELLO)

    assert response.message["content"] == "from the backup"
    assert response.model == "backup-model"
    assert [r.body["model"] for r in server.requests] == ["primary"]
    assert backup.requests[0].headers["authorization"] == "Bearer y"
    [warning] = [record for record in caplog.records if record.name == "parley.models"]
    assert warning.levelname == "WARNING"
    assert warning.getMessage().startswith(f"the model primary at {server.url} failed (")
    assert warning.getMessage().endswith("trying the next config")


def test_an_unreachable_server_falls_through_to_the_next_config(backup):
    backup.script(completion("reachable"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "down", "base_url": closed_port_url(), "api_key": "x", "max_retries": 0},
                {"model": "up", "base_url": backup.url, "api_key": "x"},
            ]
        }
    )

    assert client.create(HELLO).message["content"] == "reachable"


def test_when_every_config_fails_the_error_names_each_model_and_endpoint(server):
    server.script(server_error(503), server_error(503))
    dead = closed_port_url()
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "first-model", "base_url": server.url, "api_key": "x"},
                {"model": "second-model", "base_url": dead, "api_key": "x"},
            ],
            "max_retries": 0,
        }
    )

    with pytest.raises(AllConfigsFailedError) as failure:
        client.create(HELLO)

    message = str(failure.value)
    assert "all 2 model configs failed" in message
    assert f"model 'first-model' at {server.url}: InternalServerError" in message
    assert f"model 'second-model' at {dead}: APIConnectionError" in message
    assert [model for model, _, _ in failure.value.failures] == ["first-model", "second-model"]
    assert isinstance(failure.value, ModelError)


def test_a_config_whose_client_cannot_be_made_is_a_failure_of_that_config_and_the_next_answers(
    server, monkeypatch
):
    import parley.models.config as config_module

    build = config_module.build_provider_client

    def failing_first(config, settings):
        if config["model"] == "first-model":
            raise RuntimeError("the provider's SDK cannot be loaded")
        return build(config, settings)

    monkeypatch.setattr(config_module, "build_provider_client", failing_first)
    server.script(completion("from the second"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "first-model", "base_url": server.url, "api_key": "x"},
                {"model": "second-model", "base_url": server.url, "api_key": "x"},
            ],
            "max_retries": 0,
        }
    )

    assert client.create(HELLO).message["content"] == "from the second"


def test_a_single_failing_config_says_which_model_and_endpoint(server):
    server.script(server_error(500))
    client = ConfigListClient(
        {"config_list": [{"model": "solo", "base_url": server.url, "api_key": "x"}], "max_retries": 0}
    )

    with pytest.raises(
        ModelError, match=rf"the model call failed: model 'solo' at {server.url}: InternalServerError"
    ):
        client.create(HELLO)


def test_the_error_of_every_config_failing_is_also_the_last_configs_sdk_error_as_in_ag2(server, backup):
    """AG2 code that catches the SDK's exception (and reads its status) keeps working."""
    import openai

    server.script(server_error(500))
    backup.script(Reply({"error": {"message": "slow down", "type": "rate_limit"}}, 429, {}))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "first", "base_url": server.url, "api_key": "sk-first-secret-000"},
                {"model": "second", "base_url": backup.url, "api_key": "sk-second-secret-111"},
            ],
            "max_retries": 0,
        }
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=client, human_input_mode="NEVER")

    with pytest.raises(openai.RateLimitError) as failure:
        user.initiate_chat(assistant, "hi", max_turns=1, silent=True)

    error = failure.value
    assert isinstance(error, AllConfigsFailedError)
    assert error.status_code == 429
    assert str(error).startswith("all 2 model configs failed, tried in order:")
    assert "sk-second-secret-111" not in str(error) and "sk-second-secret-111" not in str(error.body)
    assert [type(exception).__name__ for _, _, exception in error.failures] == [
        "InternalServerError",
        "RateLimitError",
    ]
    assert error.chat_result.stop_reason.agent == "assistant"


def test_an_error_whose_class_cannot_be_combined_is_still_all_configs_failed():
    from parley.models.config import _all_failed

    class Odd(Exception):
        def __init_subclass__(cls, **options: Any) -> None:
            raise TypeError("Odd cannot be subclassed")

    error = _all_failed([("m", "http://127.0.0.1:1/v1", Odd("broken"))])

    assert type(error) is AllConfigsFailedError
    assert str(error) == "the model call failed: model 'm' at http://127.0.0.1:1/v1: Odd: broken"


async def test_async_fallback(server, backup):
    server.script(server_error(500))
    backup.script(completion("async backup"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "a", "base_url": server.url, "api_key": "x"},
                {"model": "b", "base_url": backup.url, "api_key": "x"},
            ],
            "max_retries": 0,
        }
    )

    assert (await client.a_create(HELLO)).message["content"] == "async backup"


def test_round_robin_starts_each_request_at_the_next_config(server, backup):
    server.script(completion("one"), completion("three"))
    backup.script(completion("two"))
    client = ConfigListClient(
        {
            "config_list": [
                {"model": "a", "base_url": server.url, "api_key": "x"},
                {"model": "b", "base_url": backup.url, "api_key": "x"},
            ],
            "routing_method": "round_robin",
        }
    )

    answers, models = [], []
    for _ in range(3):
        models.append(client.next_model)  # what the request events name
        answers.append(client.create(HELLO).message["content"])
    assert answers == ["one", "two", "three"]
    assert models == ["a", "b", "a"]


# settings and parameters ----------------------------------------------------------------------------


def test_request_parameters_beside_the_config_list_apply_to_every_config_and_a_config_wins(server):
    server.script(completion("ok"), completion("ok"))
    client = ConfigListClient(
        {
            "config_list": [
                {
                    "model": "m",
                    "base_url": server.url,
                    "api_key": "x",
                    "temperature": 0.0,
                    "reasoning_effort": "low",
                }
            ],
            "temperature": 0.7,
            "max_tokens": 64,
            "cache_seed": None,
            "timeout": 30,
        }
    )

    client.create(HELLO)
    client.create(HELLO, temperature=1.0)

    for request in server.requests:
        assert request.body["temperature"] == 0.0
        assert request.body["max_tokens"] == 64
        assert request.body["reasoning_effort"] == "low"
        assert not {"cache_seed", "timeout", "api_key", "base_url"} & set(request.body)


def test_client_keys_beside_the_config_list_are_defaults_for_every_config():
    configs, settings = split_llm_config(
        {
            "config_list": [{"model": "a"}, {"model": "b", "api_key": "own"}],
            "api_key": "shared",
            "temperature": 0,
        }
    )

    assert [config["api_key"] for config in configs] == ["shared", "own"]
    assert settings == {"api_key": "shared", "temperature": 0}


def test_the_tool_call_mode_beside_the_config_list_applies_to_every_config():
    configs, _ = split_llm_config(
        {
            "config_list": [{"model": "a"}, {"model": "b", "tool_call_mode": "native"}],
            "tool_call_mode": "json_schema",
        }
    )

    assert [config["tool_call_mode"] for config in configs] == ["json_schema", "native"]


def test_a_single_config_without_a_config_list(server):
    server.script(completion("single"))
    client = model_client_from_llm_config(
        {"model": "m", "base_url": server.url, "api_key": "x", "temperature": 0}
    )

    assert client.create(HELLO).message["content"] == "single"
    assert server.requests[0].body["temperature"] == 0


def test_a_base_url_without_a_scheme_gets_http():
    configs, _ = split_llm_config({"config_list": [{"model": "m", "base_url": "localhost:11434/v1"}]})
    assert configs[0]["base_url"] == "http://localhost:11434/v1"


def test_azure_api_types_are_azure():
    configs, _ = split_llm_config({"config_list": [{"model": "m", "api_type": "azure_openai"}]})
    assert configs[0]["api_type"] == "azure"


@pytest.mark.parametrize(
    ("llm_config", "match"),
    [
        ({"config_list": []}, "non-empty list"),
        ({"config_list": [{"api_key": "x"}]}, "must be a dict with a 'model'"),
        ({"config_list": [{"model": "m", "api_type": "google"}]}, "unknown api_type 'google'"),
        ({"config_list": [{"model": "m", "tool_call_mode": "xml"}]}, "tool_call_mode must be one of"),
        (
            {"config_list": [{"model": "c", "api_type": "anthropic"}], "tool_call_mode": "json_schema"},
            r"\[0\] \(model 'c'\): tool_call_mode 'json_schema' is for OpenAI-compatible servers",
        ),
        (
            {"config_list": [{"model": "m", "response_format_type": "yaml"}]},
            r"response_format_type must be one of \('json_schema', 'json_object'\), not 'yaml'",
        ),
        ({"config_list": [{"model": "m", "price": [1, 2, 3]}]}, "price must be"),
        ({"config_list": [{"model": "m"}], "routing_method": "fastest"}, "routing_method"),
        ({"temperature": 0}, "needs a 'config_list'"),
        ({"config_list": [{"model": "m"}], "temperature": "hot"}, "llm_config: temperature must be a number"),
        ({"config_list": [{"model": "m", "max_tokens": 1.5}]}, r"\(model 'm'\): max_tokens must be a whole"),
        ({"config_list": [{"model": "m", "seed": True}]}, "seed must be a whole number, not True"),
        ({"config_list": [{"model": "m", "timeout": "60"}]}, "timeout must be a number of seconds"),
    ],
)
def test_a_bad_llm_config_fails_when_the_agent_is_built(llm_config, match):
    with pytest.raises(ValueError, match=match):
        ConversableAgent("assistant", llm_config=llm_config)


def test_building_an_agent_makes_no_request_and_loads_no_sdk(server):
    agent = ConversableAgent(
        "assistant", llm_config={"config_list": [{"model": "m", "base_url": server.url, "api_key": "x"}]}
    )

    assert isinstance(agent.client, ConfigListClient)
    assert server.requests == []


class _CreateOnly:
    def create(self, messages: Any, tools: Any = None, **params: Any) -> None:
        return None


class _NoModel:
    pass


@pytest.mark.parametrize(
    ("llm_config", "match"),
    [
        (_CreateOnly(), r"_CreateOnly, which has no a_create\(\) method: a model client needs both"),
        (_NoModel(), "llm_config must be False, None, .* or a model client .*, not _NoModel"),
    ],
)
def test_an_object_that_is_not_a_whole_model_client_is_refused_saying_what_it_lacks(llm_config, match):
    with pytest.raises(TypeError, match=match):
        ConversableAgent("assistant", llm_config=llm_config)


class _Both(_CreateOnly):
    async def a_create(self, messages: Any, tools: Any = None, **params: Any) -> None:
        return None


class _SwitchedOff(_Both):
    a_create = None


@pytest.mark.parametrize("value", [_Both(), _Both, _CreateOnly(), _NoModel(), _SwitchedOff(), None, 3, "m"])
def test_the_quick_model_client_check_agrees_with_the_protocol_check(value):
    from parley.models.base import ModelClient, is_model_client

    assert is_model_client(value) == isinstance(value, ModelClient)
