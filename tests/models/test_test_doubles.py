"""ScriptedModel and FunctionModel cost O(1) per call however long the chat, and record what was sent.

No timing here: the tests count the memory the doubles allocate (tracemalloc), which a copy of the
conversation would make grow with its length.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import pytest

from parley import ConversableAgent, FunctionModel, ScriptedModel
from parley.messages import MessageSequence
from parley.models import ModelResponse, Usage, scripted
from parley.models.scripted import ModelRequest, RecordedMessages

SYSTEM = [{"role": "system", "content": "Be brief."}]


def conversation(length: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"message {index}", "name": "user"} for index in range(length)]


def bytes_per_call(model, length: int, calls: int = 20) -> tuple[float, int]:
    """Memory the model's own code keeps per call, and the most it allocates at once during a call."""
    history = conversation(length)
    request = MessageSequence(SYSTEM, history)
    model.create(request)  # the first call may set up what every call shares
    # Objects other tests left for the collector (an embedded model's finalizer allocates) stay out.
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        before = _allocated_in_scripted()
        peak = 0
        for _ in range(calls):
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            model.create(request)
            peak = max(peak, tracemalloc.get_traced_memory()[1] - start)
        kept = _allocated_in_scripted() - before
    finally:
        tracemalloc.stop()
        gc.enable()
    return kept / calls, peak


def _allocated_in_scripted() -> int:
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, scripted.__file__)])
    return sum(statistic.size for statistic in snapshot.statistics("filename"))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ScriptedModel(["ok"] * 21),
        lambda: FunctionModel(lambda request: f"{len(request.messages)}: {request.messages[-1]['content']}"),
    ],
    ids=["ScriptedModel", "FunctionModel"],
)
def test_a_call_costs_the_same_memory_for_a_short_and_a_long_chat(make):
    short_kept, short_peak = bytes_per_call(make(), 10)
    long_kept, long_peak = bytes_per_call(make(), 20_000)

    # A copy of 20,000 message references alone is 160 kB; what a call keeps and allocates is a few
    # small objects, about the same for both lengths.
    assert long_kept < 1_000
    assert long_kept <= short_kept + 64
    assert long_peak < 4_000
    assert long_peak <= short_peak + 1_000


def test_a_recorded_request_shows_what_was_sent_not_what_came_later():
    model = ScriptedModel(["first answer", "second answer"])
    assistant = ConversableAgent(
        "assistant", system_message="Be brief.", llm_config=model, human_input_mode="NEVER"
    )
    user = ConversableAgent("user", llm_config=False, default_auto_reply="go on", human_input_mode="NEVER")

    user.initiate_chat(assistant, "hello", max_turns=1, silent=True)
    assistant.update_system_message("Be verbose.")
    user.initiate_chat(assistant, "again", max_turns=1, clear_history=False, silent=True)

    first, second = model.requests
    assert first.messages == [
        {"content": "Be brief.", "role": "system"},
        {"content": "hello", "role": "user", "name": "user"},
    ]
    assert first.system_message == "Be brief."
    assert len(first.messages) == 2
    assert [m["content"] for m in second.messages] == ["Be verbose.", "hello", "first answer", "again"]


def test_a_function_model_sees_the_request_and_records_it():
    seen = []
    model = FunctionModel(lambda request: seen.append(request.messages[-1]["content"]) or "noted")
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, default_auto_reply="more", human_input_mode="NEVER")

    user.initiate_chat(assistant, "one", max_turns=2, silent=True)

    assert seen == ["one", "more"]
    assert [len(request.messages) for request in model.requests] == [2, 4]


def test_recording_can_be_switched_off():
    scripted_model = ScriptedModel(["a", "b"], record=False)
    function_model = FunctionModel(lambda request: "c", record=False)

    for model in (scripted_model, function_model):
        model.create(SYSTEM + conversation(3))
        model.create(SYSTEM + conversation(4))

    assert scripted_model.requests == []
    assert function_model.requests == []


def test_recorded_messages_behave_like_the_list_that_was_sent():
    history = conversation(3)
    recorded = RecordedMessages(MessageSequence(SYSTEM, history))
    sent = SYSTEM + conversation(3)
    history.append({"role": "user", "content": "later"})

    assert recorded == sent
    assert sent == recorded
    assert len(recorded) == 4
    assert recorded[-1] == sent[-1]
    assert recorded[1:3] == sent[1:3]
    assert list(recorded) == sent
    assert recorded + sent[:1] == [*sent, *sent[:1]]
    assert recorded != sent[:-1]
    with pytest.raises(IndexError):
        recorded[4]
    assert ModelRequest.of(recorded, None, {}).messages == sent


def test_a_response_a_function_model_returns_is_counted_under_its_model_unless_it_names_one():
    def reply(request: Any) -> ModelResponse:
        named = len(request.messages) > 2
        return ModelResponse(
            {"role": "assistant", "content": "hi"}, Usage(5, 1), cost=0.5, model="gpt-x" if named else ""
        )

    assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")

    result = user.initiate_chat(assistant, "hello", max_turns=2, silent=True)

    assert set(result.cost["usage_including_cached_inference"]) == {"total_cost", "function", "gpt-x"}


@pytest.mark.parametrize("message", ["Paris.", None, ["Paris."]])
def test_a_model_response_without_a_message_dict_is_an_error_naming_the_model(message: Any):
    assistant = ConversableAgent(
        "assistant",
        llm_config=FunctionModel(lambda request: ModelResponse(message)),
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(
        TypeError, match=r"assistant's model \(function\) returned a ModelResponse whose message"
    ):
        user.initiate_chat(assistant, "hello", max_turns=1, silent=True)
