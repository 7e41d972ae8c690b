"""Reading a durable chat back: its records' text is replayed into the state and views it had, and text
that parley did not write reads, and fails, as ``json.loads`` reads it."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from durable_helpers import cut
from parley import ConversableAgent, FunctionModel, ModelRequest, register_function
from parley.journal import Replayed, replay
from parley.models import ModelResponse, Usage
from parley.models.usage import UsageSummary
from parley.store import MemoryStore, open_store
from parley.store.base import record_texts


def tool_chat(store: Any, seen: list[list[Any]]) -> tuple[Any, dict[str, list[Any]]]:
    """A two-agent chat whose assistant calls a tool twice, then answers; ``seen`` gets the messages of
    every model request. Returns the result and each agent's view of the other."""

    def reply(request: ModelRequest) -> ModelResponse:
        seen.append(list(request.messages))
        calls = sum(1 for message in request.messages if message.get("tool_calls"))
        if calls < 2:
            call = {
                "id": f"c{calls}",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1}'},
            }
            return ModelResponse(
                {"role": "assistant", "content": None, "tool_calls": [call]}, Usage(3, 2), 0.25
            )
        return ModelResponse({"role": "assistant", "content": "done"}, Usage(5, 1), 0.125, "m2")

    def add(a: int) -> int:
        return a + 1

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
    assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
    register_function(add, caller=assistant, executor=user, description="Add one.")
    result = user.initiate_chat(assistant, "go", max_turns=4, store=store, chat_id="t", silent=True)
    views = {"user": user.chat_messages[assistant], "assistant": assistant.chat_messages[user]}
    return result, views


def test_a_chat_resumed_at_any_record_has_the_views_and_model_requests_of_the_uninterrupted_one():
    store, seen = MemoryStore(), []
    result, views = tool_chat(store, seen)
    records = store.load("t")

    for length in range(1, len(records)):
        resumed_seen: list[list[Any]] = []
        resumed, resumed_views = tool_chat(cut(records, length, "t"), resumed_seen)

        assert resumed.chat_history == result.chat_history, f"resumed at record {length}"
        assert resumed.cost == result.cost, f"resumed at record {length}"
        assert resumed_views == views, f"resumed at record {length}"
        assert resumed_seen == seen[len(seen) - len(resumed_seen) :], f"resumed at record {length}"


def recorded_texts() -> list[str]:
    store = MemoryStore()
    tool_chat(store, [])
    return [record.data for record in store.load("t")]


def state_of(replayed: Replayed) -> dict[str, Any]:
    state = replayed.state
    return {
        "messages": state.messages,
        "speakers": replayed.speakers,
        "rounds": (state.rounds, state.tool_result_rounds),
        "auto_replies": state.auto_replies,
        "usage": state.usage.to_dict(),
        "stop_reason": state.stop_reason,
        "summary": state.summary,
        "records": replayed.records,
        "tool_messages": replayed.tool_messages,
    }


@pytest.mark.parametrize(
    "change", [lambda text: f" {text}", lambda text: f"{text}\n", lambda text: f"\t{text} "]
)
def test_records_with_space_around_their_json_replay_as_those_parley_writes(change: Any):
    texts = recorded_texts()
    expected = state_of(replay(texts, "t"))

    for index in range(len(texts)):
        changed = [*texts[:index], change(texts[index]), *texts[index + 1 :]]
        assert state_of(replay(changed, "t")) == expected, f"record {index}"


@pytest.mark.parametrize(
    ("change", "error"),
    [
        (lambda text: text + "x", "Extra data"),
        (lambda text: "\ufeff" + text, "Unexpected UTF-8 BOM"),
        (lambda text: text[:-1], "Expecting ',' delimiter"),
        (lambda text: "", "Expecting value"),
    ],
)
def test_text_that_is_not_one_json_value_fails_as_json_loads_fails(change: Any, error: str):
    texts = recorded_texts()
    texts[2] = change(texts[2])

    with pytest.raises(json.JSONDecodeError, match=error):
        replay(texts, "t")


def test_a_damaged_log_fails_at_its_first_damaged_record():
    texts = recorded_texts()
    texts[1] = '{"kind": "message"}'
    texts[-1] = "not json"

    with pytest.raises(KeyError, match="message"):
        replay(texts, "t")
    with pytest.raises(json.JSONDecodeError):
        replay([texts[0], *texts[2:]], "t")


def test_a_log_that_does_not_start_with_chat_started_is_refused():
    texts = recorded_texts()

    with pytest.raises(ValueError, match="do not start with chat_started"):
        replay(texts[1:], "t")
    with pytest.raises(ValueError, match="do not start with chat_started"):
        replay([], "t")


def test_usage_counted_from_calls_sums_as_usage_counted_from_responses():
    rng = random.Random(7)
    for size in (0, 1, 63, 64, 65, 200):
        for already in (0, 5, 63):
            calls = [
                (
                    rng.choice(["", "a", "b"]),
                    rng.randrange(99),
                    rng.randrange(99),
                    rng.random(),
                    rng.random() < 0.3,
                )
                for _ in range(size)
            ]
            before = [ModelResponse({}, Usage(1, 2), 0.1 * n, "a") for n in range(already)]
            one_by_one, at_once = UsageSummary(), UsageSummary()
            for response in before:
                one_by_one.add(response)
                at_once.add(response)
            for model, prompt, completion, cost, cached in calls:
                one_by_one.add(ModelResponse({}, Usage(prompt, completion), cost, model, cached))
            at_once.add_calls(calls)

            assert len(at_once._pending) == len(one_by_one._pending), (size, already)
            assert at_once._totals == one_by_one._totals, (size, already)
            assert at_once.to_dict() == one_by_one.to_dict(), (size, already)


def test_the_record_texts_of_a_log_are_the_data_of_its_records(tmp_path: Path):
    sqlite = open_store(f"sqlite:///{tmp_path / 'chats.db'}")
    tool_chat(sqlite, [])
    memory = MemoryStore()
    tool_chat(memory, [])

    for store in (sqlite, memory):
        log = store.open("t")
        try:
            assert record_texts(log) == [record.data for record in log.records()]
        finally:
            log.close()
    sqlite.close()
