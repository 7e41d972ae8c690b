"""The demo's tool policy: a turn starts with a tool call, and after a tool the agent answers."""

from __future__ import annotations

from typing import Any

from parley import ScriptedModel, tool_call
from parley.demo.policy import ToolsThenAnswer

TOOLS = [{"type": "function", "function": {"name": "refund_charge", "parameters": {}}}]


def asked(policy: ToolsThenAnswer, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
    model = policy.model
    assert isinstance(model, ScriptedModel)
    policy.create(messages, TOOLS, **params)
    return model.requests[-1].params


def billing(every_turn: bool = False) -> ToolsThenAnswer:
    return ToolsThenAnswer(ScriptedModel(["ok"] * 5), "billing", every_turn=every_turn)


CUSTOMER = {"role": "user", "name": "customer", "content": "I was charged twice"}
OWN_CALL = {
    "role": "assistant",
    "name": "billing",
    "content": None,
    "tool_calls": [tool_call("refund_charge")],
}
RESULT = {"role": "tool", "name": "billing", "tool_call_id": "c", "content": "Refunded."}
ANSWER = {"role": "assistant", "name": "billing", "content": "Done: refunded."}
OTHERS_CALL = {"role": "assistant", "name": "triage", "content": None, "tool_calls": [tool_call("transfer")]}


def test_the_first_turn_starts_with_a_tool_call_even_after_another_agents_tools():
    assert asked(billing(), [CUSTOMER])["tool_choice"] == "required"
    assert (
        asked(billing(), [CUSTOMER, OTHERS_CALL, {**RESULT, "name": "triage"}])["tool_choice"] == "required"
    )


def test_after_its_own_tool_the_agent_answers():
    assert asked(billing(), [CUSTOMER, OWN_CALL, RESULT])["tool_choice"] == "none"


def test_later_turns_may_answer_at_once_unless_every_turn_starts_with_a_tool():
    later = [CUSTOMER, OWN_CALL, RESULT, ANSWER, {**CUSTOMER, "content": "thanks!"}]

    assert "tool_choice" not in asked(billing(), later)
    assert asked(billing(every_turn=True), later)["tool_choice"] == "required"


def test_an_explicit_tool_choice_and_tool_less_requests_are_left_alone():
    assert asked(billing(), [CUSTOMER], tool_choice="auto")["tool_choice"] == "auto"
    policy = billing()
    policy.create([CUSTOMER], None)
    assert policy.model.requests[-1].params == {}  # type: ignore[attr-defined]
