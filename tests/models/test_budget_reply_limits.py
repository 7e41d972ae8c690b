"""A token budget bounds each reply with ``max_tokens`` only where that binds: model APIs refuse a
``max_tokens`` above what the model can write, so a budget larger than that must not send one."""

from __future__ import annotations

from typing import Any

import pytest
from fake_servers import FakeServer, anthropic_message, completion

from parley import ConversableAgent, StopKind
from parley.limits import MaxCost, MaxTokens
from parley.models.reply_limits import UNKNOWN_MODEL_CAP, known_reply_limit


@pytest.fixture
def server():
    with FakeServer() as running:
        yield running


def chat(llm_config: dict[str, Any], budget: int, turns: int = 1, stop_when: Any = None) -> Any:
    assistant = ConversableAgent("assistant", llm_config=llm_config, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
    condition = stop_when if stop_when is not None else MaxTokens(budget)
    return user.initiate_chat(
        assistant, "Where is order 7?", max_turns=turns, stop_when=condition, silent=True
    )


def openai_config(server: FakeServer, model: str, **entry: Any) -> dict[str, Any]:
    return {"config_list": [{"model": model, "base_url": server.url, "api_key": "sk-test", **entry}]}


def test_a_budget_larger_than_the_models_reply_limit_sends_no_max_tokens(server):
    server.script(completion("It shipped."), completion("Anything else?"))

    result = chat(openai_config(server, "gpt-4o-mini"), 50_000, turns=2)

    assert [m["content"] for m in result.chat_history if m["name"] == "assistant"] == [
        "It shipped.",
        "Anything else?",
    ]
    assert [request.body.get("max_tokens") for request in server.requests] == [None, None]


def test_a_budget_below_the_models_reply_limit_sends_what_it_leaves(server):
    server.script(completion("It shipped.", prompt_tokens=40, completion_tokens=5))

    chat(openai_config(server, "gpt-4o-mini-2024-07-18"), 10_000)

    (request,) = server.requests
    assert known_reply_limit("gpt-4o-mini-2024-07-18") == 16_384
    assert known_reply_limit("ft:gpt-4o-mini-2024-07-18:acme::A1b2") == 16_384
    assert known_reply_limit("my-azure-deployment") is None
    assert 9_800 < request.body["max_tokens"] < 10_000


def test_a_model_parley_does_not_know_is_asked_for_at_most_the_common_cap(server):
    server.script(completion("It shipped."))

    chat(openai_config(server, "my-fine-tune"), 1_000_000)

    (request,) = server.requests
    assert request.body["max_tokens"] == UNKNOWN_MODEL_CAP == 4_096


def test_a_config_that_sets_max_tokens_keeps_it_and_the_budget_allows_for_it(server):
    server.script(completion("It shipped."))

    chat(openai_config(server, "my-fine-tune", max_tokens=300), 50_000)
    refused = chat(openai_config(server, "my-fine-tune", max_tokens=300), 320)

    (request,) = server.requests
    assert request.body["max_tokens"] == 300
    assert refused.stop_reason.kind is StopKind.CONDITION
    assert "could use" in str(refused.stop_reason) and "+ 300 completion tokens" in str(refused.stop_reason)
    assert [m["name"] for m in refused.chat_history] == ["user"]


def test_a_config_whose_max_tokens_is_none_leaves_the_bound_to_the_budget(server):
    server.script(completion("It shipped.", prompt_tokens=40, completion_tokens=5))

    chat(openai_config(server, "gpt-4o-mini", max_tokens=None), 1_000)

    (request,) = server.requests
    assert 900 < request.body["max_tokens"] < 1_000


def test_anthropic_gets_its_default_max_tokens_not_the_whole_budget(server):
    server.script(anthropic_message("It shipped."))
    config = {
        "config_list": [
            {"model": "claude-fake", "api_type": "anthropic", "base_url": server.root, "api_key": "k"}
        ]
    }

    chat(config, 100_000)

    (request,) = server.requests
    assert request.body["max_tokens"] == 4_096


def test_a_reasoning_model_gets_the_bound_as_max_completion_tokens(server):
    server.script(completion("It shipped."), completion("It shipped."))

    chat(openai_config(server, "o3-mini"), 20_000)
    chat(openai_config(server, "o4-mini", max_tokens=500), 20_000)

    first, second = server.requests
    assert "max_tokens" not in first.body and 19_800 < first.body["max_completion_tokens"] < 20_000
    assert "max_tokens" not in second.body and second.body["max_completion_tokens"] == 500


def test_a_cost_budget_on_a_priced_model_is_checked_before_each_call(server):
    """gpt-4o-mini costs $0.15 / $0.60 per million prompt / completion tokens: each call is sent with the
    completion tokens the budget can still pay for, and once nothing is left, no call is sent."""
    server.script(
        completion("A long answer.", prompt_tokens=20, completion_tokens=700),
        completion("More.", prompt_tokens=30, completion_tokens=110),
        completion("Never sent.", prompt_tokens=40, completion_tokens=5),
    )

    result = chat(openai_config(server, "gpt-4o-mini"), 0, turns=3, stop_when=MaxCost(0.0005))

    first, second = server.requests
    assert 700 < first.body["max_tokens"] < 0.0005 / 0.0000006
    assert 110 <= second.body["max_tokens"] < 130
    assert result.stop_reason.kind is StopKind.CONDITION
    assert "cost budget of $0.0005 would be exceeded" in str(result.stop_reason)
    assert result.cost["usage_including_cached_inference"]["total_cost"] <= 0.0005
