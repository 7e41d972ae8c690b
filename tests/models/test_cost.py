"""Cost per call from the price table or a config's price, summed on ChatResult.cost in AG2's shape."""

from __future__ import annotations

import logging

import pytest
from fake_servers import FakeServer, completion

from parley import ConversableAgent
from parley.models import Usage
from parley.models.pricing import cost_of, parse_price, price_of


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def test_prices_from_the_table_also_for_dated_snapshots():
    assert price_of("gpt-4o-mini") == (0.00015, 0.0006)
    assert price_of("gpt-4o-mini-2024-07-18") == (0.00015, 0.0006)
    assert price_of("claude-haiku-4-5-20251001") == (0.001, 0.005)
    assert price_of("my-local-model") is None


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("gpt-4-0613", (0.03, 0.06)),
        ("gpt-4-32k", (0.06, 0.12)),
        ("gpt-4-1106-preview", (0.01, 0.03)),
        ("gpt-3.5-turbo-1106", (0.001, 0.002)),
        ("gpt-35-turbo-16k", (0.003, 0.004)),
    ],
)
def test_the_older_models_ag2_prices_have_their_list_prices(model, price):
    assert price_of(model) == price


def test_cost_is_per_1k_tokens():
    assert cost_of(Usage(1000, 500), "gpt-4o") == pytest.approx(0.0025 + 0.005)
    assert cost_of(Usage(1000, 500), "anything", price=(1.0, 2.0)) == pytest.approx(2.0)


def test_an_unknown_model_costs_nothing_and_warns_once(caplog):
    with caplog.at_level(logging.WARNING, logger="parley.models"):
        assert cost_of(Usage(10, 10), "mystery-model-x") == 0.0
        assert cost_of(Usage(10, 10), "mystery-model-x") == 0.0
    assert [record.message for record in caplog.records].count(
        "no price known for model 'mystery-model-x': its cost counts as 0. Add "
        '"price": [prompt_price_per_1k, completion_price_per_1k] to its config.'
    ) == 1


def test_a_price_is_two_numbers_or_one():
    assert parse_price([0.01, 0.03]) == (0.01, 0.03)
    assert parse_price(0.002) == (0.002, 0.002)
    assert parse_price(None) is None
    with pytest.raises(ValueError):
        parse_price("cheap")


def test_chat_result_cost_sums_every_call_by_model(server):
    server.script(
        completion("one", model="gpt-4o-mini", prompt_tokens=100, completion_tokens=10),
        completion("two", model="gpt-4o-mini", prompt_tokens=200, completion_tokens=20),
    )
    assistant = ConversableAgent(
        "assistant",
        llm_config={
            "config_list": [{"model": "gpt-4o-mini", "base_url": server.url, "api_key": "x"}],
            "cache_seed": None,
        },
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")

    result = user.initiate_chat(assistant, "hi", max_turns=2, silent=True)

    cost = (300 * 0.00015 + 30 * 0.0006) / 1000
    expected = {
        "total_cost": pytest.approx(cost),
        "gpt-4o-mini": {
            "cost": pytest.approx(cost),
            "prompt_tokens": 300,
            "completion_tokens": 30,
            "total_tokens": 330,
        },
    }
    assert result.cost == {
        "usage_including_cached_inference": expected,
        "usage_excluding_cached_inference": expected,
    }


def test_a_config_price_wins_over_the_table(server):
    server.script(completion("priced", model="gpt-4o", prompt_tokens=1000, completion_tokens=1000))
    assistant = ConversableAgent(
        "assistant",
        llm_config={
            "config_list": [{"model": "gpt-4o", "base_url": server.url, "api_key": "x", "price": [0.5, 1.5]}]
        },
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(assistant, "hi", max_turns=1, silent=True)

    assert result.cost["usage_including_cached_inference"]["total_cost"] == pytest.approx(2.0)


def test_gather_usage_summary_sums_the_agents_models_as_ag2_does():
    from parley import ConversableAgent, ScriptedModel, gather_usage_summary

    a = ConversableAgent(
        "a", llm_config=ScriptedModel(["a1"], usage=Usage(10, 5), cost=0.5), human_input_mode="NEVER"
    )
    b = ConversableAgent(
        "b", llm_config=ScriptedModel(["b1"], usage=Usage(20, 5), cost=0.25), human_input_mode="NEVER"
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    user.initiate_chat(a, "hi", max_turns=1, silent=True)
    user.initiate_chat(b, "hi", max_turns=1, silent=True)

    summed = gather_usage_summary([a, b, user])

    assert summed["usage_including_cached_inference"]["total_cost"] == pytest.approx(0.75)
    assert summed["usage_excluding_cached_inference"]["scripted"] == {
        "cost": pytest.approx(0.75),
        "prompt_tokens": 30,
        "completion_tokens": 10,
        "total_tokens": 40,
    }
    assert gather_usage_summary([user]) == {
        "usage_including_cached_inference": {"total_cost": 0},
        "usage_excluding_cached_inference": {"total_cost": 0},
    }


def test_one_config_may_be_given_without_a_list(server):
    from parley import ConversableAgent

    agent = ConversableAgent(
        "a", llm_config={"config_list": {"model": "m", "base_url": server.url, "api_key": "x"}}
    )

    assert agent.client is not None
