"""Typed events from the one door, and JSONL traces of them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    ScriptedModel,
    SwarmAgent,
    SwarmResult,
    initiate_swarm_chat,
    tool_call,
)
from parley.events import ChatEvent, MessageSent, ModelResponded, listening
from parley.models import Usage


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def support_swarm() -> tuple[list[SwarmAgent], SwarmAgent]:
    def record_issue(issue: str, context_variables: dict[str, Any]) -> SwarmResult:
        return SwarmResult(values=f"noted: {issue}", context_variables={"issue": issue})

    triage = SwarmAgent(
        "triage",
        llm_config=ScriptedModel(
            [
                [
                    tool_call("record_issue", {"issue": "double charge"}, id="r1"),
                    tool_call("transfer_to_billing", id="t1"),
                ]
            ],
            usage=Usage(30, 5),
            cost=0.001,
        ),
        functions=[record_issue],
        human_input_mode="NEVER",
    )
    billing = SwarmAgent(
        "billing",
        llm_config=ScriptedModel(["Refunded."], usage=Usage(40, 3), cost=0.002),
        human_input_mode="NEVER",
    )
    triage.register_hand_off(ON_CONDITION(billing, "Questions about charges and refunds."))
    billing.register_hand_off(AFTER_WORK("TERMINATE"))
    return [triage, billing], triage


def test_a_swarm_trace_holds_every_event_of_the_chat_in_order(tmp_path: Path):
    agents, triage = support_swarm()
    trace = tmp_path / "trace.jsonl"

    result, _, _ = initiate_swarm_chat(triage, "I was charged twice", agents, trace=trace, silent=True)

    events = read(trace)
    assert {event["chat_id"] for event in events} == {result.chat_id}
    assert [event["seq"] for event in events] == list(range(len(events)))
    assert all(event["v"] == 1 and event["ts"] > 0 for event in events)
    kinds = [event["kind"] for event in events]
    assert kinds[0] == "chat_started"
    assert kinds[-1] == "chat_stopped"
    assert kinds == [
        "chat_started",
        "message",
        "model_request",
        "model_response",
        "message",
        "tool_call",
        "tool_call",
        "tool_result",
        "context_updated",
        "tool_result",
        "message",
        "handoff",
        "model_request",
        "model_response",
        "message",
        "chat_stopped",
    ]
    started = events[0]
    assert started["shape"] == "swarm"
    assert started["agents"] == ["triage", "billing"]
    assert {"source": "triage", "target": "billing", "kind": "condition"}.items() <= started["graph"][
        "edges"
    ][0].items()
    messages = [event for event in events if event["kind"] == "message"]
    assert [m["index"] for m in messages] == [0, 1, 2, 3]
    assert [m["message"]["name"] for m in messages] == ["_User", "triage", "triage", "billing"]
    response = events[3]
    assert response["agent"] == "triage"
    assert (response["prompt_tokens"], response["completion_tokens"], response["cost"]) == (30, 5, 0.001)
    assert response["latency_s"] >= 0
    results = [event for event in events if event["kind"] == "tool_result"]
    assert [(r["tool"], r["call_id"], r["error"]) for r in results] == [
        ("record_issue", "r1", None),
        ("transfer_to_billing", "t1", None),
    ]
    assert events[8]["changes"] == {"issue": "double charge"}
    handoff = events[11]
    assert (handoff["source"], handoff["target"], handoff["via"]) == ("triage", "billing", "handoff")
    assert handoff["reason"] == "triage called transfer_to_billing: Questions about charges and refunds."
    stopped = events[-1]
    assert stopped["stop_reason"]["kind"] == "terminate_target"
    assert stopped["usage"] == {"prompt_tokens": 70, "completion_tokens": 8, "cost": 0.003, "calls": 2}


def one_call_per_message_swarm() -> tuple[list[SwarmAgent], SwarmAgent]:
    def record_issue(issue: str, context_variables: dict[str, Any]) -> SwarmResult:
        return SwarmResult(values=f"noted: {issue}", context_variables={"issue": issue})

    def broken() -> str:
        raise RuntimeError("no line")

    triage = SwarmAgent(
        "triage",
        llm_config=ScriptedModel(
            [
                tool_call("record_issue", {"issue": "double charge"}, id="r1"),
                tool_call("broken", id="b1"),
                tool_call("transfer_to_billing", id="t1"),
            ]
        ),
        functions=[record_issue, broken],
        human_input_mode="NEVER",
    )
    billing = SwarmAgent("billing", llm_config=ScriptedModel(["Refunded."]), human_input_mode="NEVER")
    triage.register_hand_off(ON_CONDITION(billing, "Questions about charges and refunds."))
    billing.register_hand_off(AFTER_WORK("TERMINATE"))
    return [triage, billing], triage


SHOWN_FIELDS = ("tool", "call_id", "arguments", "content", "error", "changes", "target")


def tool_events(trace: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        (event["kind"], {key: event[key] for key in SHOWN_FIELDS if event.get(key) is not None})
        for event in read(trace)
        if event["kind"] in {"tool_call", "tool_result", "context_updated", "handoff", "message"}
    ]


def test_a_message_with_one_tool_call_is_traced_as_one_with_several_calls_is(tmp_path: Path):
    agents, triage = one_call_per_message_swarm()
    initiate_swarm_chat(triage, "I was charged twice", agents, trace=tmp_path / "alone.jsonl", silent=True)
    agents, triage = one_call_per_message_swarm()
    initiate_swarm_chat(
        triage,
        "I was charged twice",
        agents,
        trace=tmp_path / "durable.jsonl",
        store=f"sqlite:///{tmp_path / 'chats.db'}",
        silent=True,
    )

    error = "Error: broken raised RuntimeError: no line"
    expected = [
        ("message", {}),
        ("message", {}),
        ("tool_call", {"tool": "record_issue", "call_id": "r1", "arguments": '{"issue": "double charge"}'}),
        ("tool_result", {"tool": "record_issue", "call_id": "r1", "content": "noted: double charge"}),
        ("context_updated", {"changes": {"issue": "double charge"}}),
        ("message", {}),
        ("message", {}),
        ("tool_call", {"tool": "broken", "call_id": "b1", "arguments": "{}"}),
        ("tool_result", {"tool": "broken", "call_id": "b1", "content": error, "error": error}),
        ("message", {}),
        ("message", {}),
        ("tool_call", {"tool": "transfer_to_billing", "call_id": "t1", "arguments": "{}"}),
        (
            "tool_result",
            {"tool": "transfer_to_billing", "call_id": "t1", "content": "Transferred to billing."},
        ),
        ("message", {}),
        ("handoff", {"target": "billing"}),
        ("message", {}),
    ]
    assert tool_events(tmp_path / "alone.jsonl") == expected
    assert tool_events(tmp_path / "durable.jsonl") == expected


def test_a_trace_is_readable_while_its_chat_runs(tmp_path: Path):
    trace = tmp_path / "live.jsonl"
    seen: list[list[str]] = []

    def peek() -> str:
        seen.append([event["kind"] for event in read(trace)])
        return "peeked"

    model = ScriptedModel([tool_call("peek", id="p"), "done"])
    agent = SwarmAgent("worker", llm_config=model, functions=[peek], human_input_mode="NEVER")
    initiate_swarm_chat(agent, "go", [agent], trace=trace, silent=True)

    assert seen == [["chat_started", "message", "model_request", "model_response", "message", "tool_call"]]


def test_parley_trace_set_or_unset_while_the_program_runs_applies_to_the_next_chat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    trace = tmp_path / "later.jsonl"
    monkeypatch.delenv("PARLEY_TRACE", raising=False)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    helper = ConversableAgent("helper", llm_config=ScriptedModel(["a", "b", "c"]), human_input_mode="NEVER")

    user.initiate_chat(helper, "before", max_turns=1, silent=True)
    monkeypatch.setenv("PARLEY_TRACE", str(trace))
    traced = user.initiate_chat(helper, "while set", max_turns=1, silent=True)
    monkeypatch.delenv("PARLEY_TRACE")
    user.initiate_chat(helper, "after", max_turns=1, silent=True)

    assert {event["chat_id"] for event in read(trace)} == {traced.chat_id}


def test_parley_trace_traces_every_chat_and_nested_chats_are_traced_with_their_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    trace = tmp_path / "program.jsonl"
    monkeypatch.setenv("PARLEY_TRACE", str(trace))
    writer = ConversableAgent("writer", llm_config=ScriptedModel(["draft"]), human_input_mode="NEVER")
    critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
    lead = ConversableAgent("lead", llm_config=False, human_input_mode="NEVER")
    lead.register_nested_chats(
        [{"sender": critic, "recipient": writer, "max_turns": 1}], trigger=lambda s: True
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    outer = user.initiate_chat(lead, "review", max_turns=1, silent=True)

    events = read(trace)
    chats = list(dict.fromkeys(event["chat_id"] for event in events))
    assert chats[0] == outer.chat_id
    assert len(chats) == 2
    nested = [event for event in events if event["chat_id"] == chats[1]]
    assert next(event["kind"] for event in nested) == "chat_started"
    assert sum(1 for event in events if event["kind"] == "chat_started") == 2, "each chat once, no duplicates"


def test_group_chats_say_why_each_speaker_was_chosen(tmp_path: Path):
    agents = [
        ConversableAgent(name, llm_config=ScriptedModel([f"{name}!"]), human_input_mode="NEVER")
        for name in ("a", "b")
    ]
    manager = GroupChatManager(
        GroupChat(agents, messages=[], max_round=2, speaker_selection_method="round_robin")
    )
    trace = tmp_path / "group.jsonl"

    agents[0].initiate_chat(manager, "start", trace=trace, silent=True)

    selected = [event for event in read(trace) if event["kind"] == "speaker_selected"]
    assert [(event["speaker"], event["reason"]) for event in selected] == [("b", "round robin: next in turn")]


def test_human_input_is_an_event(tmp_path: Path):
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["hello"]), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="ALWAYS")
    user.get_human_input = lambda prompt, **kwargs: "exit"  # type: ignore[method-assign]
    trace = tmp_path / "human.jsonl"

    user.initiate_chat(assistant, "hi", trace=trace, silent=True)

    events = read(trace)
    asked = next(event for event in events if event["kind"] == "human_input_requested")
    answered = next(event for event in events if event["kind"] == "human_input")
    assert asked["agent"] == answered["agent"] == "user"
    assert asked["prompt"].startswith("Replying as user.")
    assert answered["answer"] == "exit"


def test_listeners_of_one_chat_get_typed_events():
    got: list[ChatEvent] = []
    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel(["hi", "again"]), human_input_mode="NEVER"
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(assistant, "hello", max_turns=1, listeners=[got.append], silent=True)
    other = user.initiate_chat(assistant, "again", max_turns=1, silent=True)

    assert {event.chat_id for event in got} == {result.chat_id} != {other.chat_id}
    assert isinstance(got[1], MessageSent) and got[1].sender == "user"
    assert any(isinstance(event, ModelResponded) and event.agent == "assistant" for event in got)


def test_subscribers_get_every_chat():
    got: list[ChatEvent] = []
    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel(["hi", "again"]), human_input_mode="NEVER"
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    with listening(got.append):
        first = user.initiate_chat(assistant, "hello", max_turns=1, silent=True)
        second = user.initiate_chat(assistant, "hello", max_turns=1, silent=True)
    assert {event.chat_id for event in got} == {first.chat_id, second.chat_id}


def test_text_that_is_no_utf_8_is_traced_escaped_and_the_chat_goes_on(tmp_path: Path):
    name = os.fsdecode(b"caf\xe9.txt")  # a file name whose bytes are not UTF-8
    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel([f"Saved {name}."]), human_input_mode="NEVER"
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    trace = tmp_path / "trace.jsonl"

    result = user.initiate_chat(assistant, "save it", max_turns=1, silent=True, trace=str(trace))

    assert result.summary == f"Saved {name}."
    sent = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [e["message"]["content"] for e in sent if e["kind"] == "message"][-1] == f"Saved {name}."


def test_a_trace_file_moved_away_between_chats_is_started_afresh(tmp_path: Path):
    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel(["one", "two"]), human_input_mode="NEVER"
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    trace = tmp_path / "trace.jsonl"

    first = user.initiate_chat(assistant, "first", max_turns=1, silent=True, trace=str(trace))
    trace.rename(tmp_path / "trace.1.jsonl")  # log rotation
    second = user.initiate_chat(assistant, "second", max_turns=1, silent=True, trace=str(trace))

    assert {event["chat_id"] for event in read(tmp_path / "trace.1.jsonl")} == {first.chat_id}
    assert {event["chat_id"] for event in read(trace)} == {second.chat_id}
    assert read(trace)[-1]["kind"] == "chat_stopped"


def test_a_trace_given_a_directory_is_refused_before_the_chat_starts(tmp_path: Path):
    model = ScriptedModel(["Paris."])
    assistant = ConversableAgent("assistant", llm_config=model)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(ValueError, match="trace must be the path of a JSONL file, not a directory"):
        user.initiate_chat(assistant, "The capital of France?", max_turns=1, trace=tmp_path, silent=True)

    assert model.remaining == 1


def test_an_empty_trace_path_is_refused():
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["Paris."]))

    with pytest.raises(ValueError, match="trace must be the path of a JSONL file, not an empty string"):
        user.initiate_chat(assistant, "The capital of France?", max_turns=1, trace="", silent=True)


def test_parley_trace_naming_a_directory_is_an_error_naming_the_variable(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("PARLEY_TRACE", str(tmp_path))
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["Paris."]))

    with pytest.raises(ValueError, match="is a directory: trace= and PARLEY_TRACE name a JSONL file"):
        user.initiate_chat(assistant, "The capital of France?", max_turns=1, silent=True)


def test_initiate_chats_traces_every_chat_of_its_queue(tmp_path: Path):
    trace = tmp_path / "queue.jsonl"
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    first = ConversableAgent("first", llm_config=ScriptedModel(["One."]))
    second = ConversableAgent("second", llm_config=ScriptedModel(["Two."]))

    results = user.initiate_chats(
        [
            {"recipient": first, "message": "1?", "max_turns": 1, "silent": True},
            {"recipient": second, "message": "2?", "max_turns": 1, "silent": True},
        ],
        trace=trace,
    )

    events = [json.loads(line) for line in trace.read_text().splitlines()]
    started = [event["chat_id"] for event in events if event["kind"] == "chat_started"]
    assert started == [result.chat_id for result in results]
