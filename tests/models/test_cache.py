"""``cache_seed``: a rerun with the same seed is answered from the disk cache and makes no request."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_servers import FakeServer, completion, server_error

from parley import ConversableAgent
from parley.models import ConfigListClient, ModelResponse, Usage
from parley.models.cache import ResponseCache, request_key


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def run_chat(url: str, cache_root: Path | None, seed: int | None = 41, **config):
    llm_config = {
        "config_list": [{"model": "gpt-4o-mini", "base_url": url, "api_key": "x", **config}],
        "cache_seed": seed,
    }
    if cache_root is not None:
        llm_config["cache_path_root"] = str(cache_root)
    assistant = ConversableAgent("assistant", llm_config=llm_config, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="go on")
    return user.initiate_chat(assistant, "Tell me a joke.", max_turns=2, silent=True)


def test_a_rerun_with_the_same_seed_makes_no_request(server, tmp_path):
    server.script(completion("joke one"), completion("joke two"))

    first = run_chat(server.url, tmp_path)
    requests_after_first = len(server.requests)
    second = run_chat(server.url, tmp_path)

    assert requests_after_first == 2
    assert len(server.requests) == 2
    assert second.chat_history == first.chat_history
    assert [m["content"] for m in second.chat_history] == ["Tell me a joke.", "joke one", "go on", "joke two"]


def test_cached_answers_count_only_in_usage_including_cached_inference(server, tmp_path):
    server.script(completion("joke one"), completion("joke two"))

    first = run_chat(server.url, tmp_path)
    second = run_chat(server.url, tmp_path)

    one_call = (10 * 0.00015 + 5 * 0.0006) / 1000
    assert first.cost["usage_excluding_cached_inference"]["total_cost"] == pytest.approx(2 * one_call)
    assert second.cost["usage_including_cached_inference"]["total_cost"] == pytest.approx(2 * one_call)
    assert second.cost["usage_including_cached_inference"]["fake-model"]["prompt_tokens"] == 20
    assert second.cost["usage_excluding_cached_inference"] == {"total_cost": 0}


def test_cache_seed_none_disables_the_cache(server, tmp_path):
    server.script(completion("a"), completion("b"), completion("a"), completion("b"))

    run_chat(server.url, tmp_path, seed=None)
    run_chat(server.url, tmp_path, seed=None)

    assert len(server.requests) == 4
    assert not any(tmp_path.iterdir())


def test_seeds_have_separate_caches(server, tmp_path):
    server.script(completion("a"), completion("b"), completion("c"), completion("d"))

    run_chat(server.url, tmp_path, seed=1)
    run_chat(server.url, tmp_path, seed=2)

    assert len(server.requests) == 4
    assert (tmp_path / "1" / "parley.sqlite").exists() and (tmp_path / "2" / "parley.sqlite").exists()


def test_the_cache_lives_in_dot_cache_by_default(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server.script(completion("a"), completion("b"))

    run_chat(server.url, None, seed=7)

    assert ResponseCache(7, tmp_path / ".cache").count() == 2


def test_the_api_key_is_not_part_of_the_key_but_the_model_and_parameters_are(server, tmp_path):
    server.script(completion("a"), completion("b"), completion("c"), completion("d"))

    run_chat(server.url, tmp_path, api_key="key-one")
    run_chat(server.url, tmp_path, api_key="key-two")
    assert len(server.requests) == 2
    run_chat(server.url, tmp_path, temperature=0.5)
    assert len(server.requests) == 4


def test_a_rerun_skips_a_failing_config_whose_backup_answered(server, tmp_path):
    with FakeServer() as backup:
        server.script(server_error(500), server_error(500))
        backup.script(completion("from backup"))
        llm_config = {
            "config_list": [
                {"model": "primary", "base_url": server.url, "api_key": "x", "max_retries": 0},
                {"model": "backup", "base_url": backup.url, "api_key": "x"},
            ],
            "cache_seed": 3,
            "cache_path_root": str(tmp_path),
        }
        messages = [{"role": "user", "content": "hi"}]

        first = ConfigListClient(llm_config).create(messages)
        second = ConfigListClient(llm_config).create(messages)

        assert (first.cached, second.cached) == (False, True)
        assert second.message == first.message
        assert len(server.requests) == 1 and len(backup.requests) == 1


async def test_async_requests_are_cached(server, tmp_path):
    server.script(completion("once"))
    client = ConfigListClient(
        {
            "config_list": [{"model": "m", "base_url": server.url, "api_key": "x"}],
            "cache_seed": 5,
            "cache_path_root": str(tmp_path),
        }
    )
    messages = [{"role": "user", "content": "hi"}]

    first = await client.a_create(messages)
    second = await client.a_create(messages)

    assert second.cached and second.message == first.message
    assert len(server.requests) == 1


def test_a_cached_response_round_trips(tmp_path):
    cache = ResponseCache("seed", tmp_path)
    response = ModelResponse(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        Usage(3, 4),
        cost=0.5,
        model="m",
    )
    key = request_key({"model": "m"}, [{"role": "user", "content": "hi"}], None, {})

    assert cache.get(key) is None
    cache.set(key, response)

    cached = cache.get(key)
    assert cached == ModelResponse(response.message, Usage(3, 4), cost=0.5, model="m", cached=True)
    assert request_key({"model": "m"}, [{"role": "user", "content": "hi!"}], None, {}) != key
