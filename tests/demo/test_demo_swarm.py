"""The demo's swarm, run as ``parley demo`` runs it, on scripted models."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from parley import ScriptedModel, StopKind, tool_call
from parley.demo.models import on_track
from parley.demo.run import run_demo
from parley.models import ModelError

BILLING_ANSWER = "I refunded the duplicate charge CH-302; it reaches your card in 3-5 days."


class Models:
    """A scripted model per agent, behind the demo's tool policy, as ``parley demo`` wires them."""

    def __init__(self, **scripts: list[Any]) -> None:
        self.scripted = {
            name: ScriptedModel(script, model=f"scripted-{name}") for name, script in scripts.items()
        }

    def __call__(self, name: str) -> Any:
        return on_track(self.scripted.setdefault(name, ScriptedModel([])), name)

    def params(self, name: str) -> list[Any]:
        return [request.params.get("tool_choice") for request in self.scripted[name].requests]


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=110, highlight=False), out


def test_a_technical_request_is_routed_handled_with_one_tool_and_answered():
    models = Models(
        triage=[
            [tool_call("transfer_to_technical_support", {"customer_name": "Ana", "issue": "app crashes"})]
        ],
        technical_support=[
            [tool_call("service_status", {"service": "desktop app"})],
            "Version 4.2.1 fixes that crash: please update.",
        ],
    )
    screen, out = console()

    result = run_demo("Hi, I'm Ana. The app crashes when I export.", models, console=screen)

    assert result.stop_reason is not None and result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert models.params("triage") == [None], "triage chooses on its own"
    assert models.params("technical_support") == ["required", "none"]
    first = models.scripted["technical_support"].requests[0]
    assert "Their name is Ana." in (first.system_message or "")
    assert not any(message.get("tool_calls") for message in first.messages), "triage's handoff is hidden"
    shown = out.getvalue()
    for text in ("customer", "triage → technical_support", "service_status", "4.2.1 fixes", "stop reason"):
        assert text in shown
    assert "terminate_target" in shown and "tokens" in shown and "rounds" in shown


def test_interactively_triage_asks_billing_refunds_and_the_customer_leaves():
    models = Models(
        triage=[
            [tool_call("ask_customer", {"question": "What can I help you with?"})],
            [tool_call("transfer_to_billing", {"customer_name": "unknown", "issue": "charged twice"})],
        ],
        billing=[[tool_call("refund_charge", {"charge_id": "CH-302"})], BILLING_ANSWER],
    )
    answers = iter(["I was charged twice for March", ""])
    screen, out = console()

    result = run_demo("hello", models, console=screen, ask=lambda prompt: next(answers))

    assert result.stop_reason is not None and result.stop_reason.kind is StopKind.HUMAN_EXIT
    said = [(m.get("name"), m.get("content")) for m in result.chat_history if m.get("role") != "tool"]
    assert said[0] == ("customer", "hello")
    assert ("customer", "I was charged twice for March") in said
    assert said[-1] == ("billing", BILLING_ANSWER)
    assert models.params("triage") == [None, None]
    assert "refunds = ['CH-302']" in out.getvalue()
    assert "billing → the customer" in out.getvalue()


def test_a_model_error_shows_the_chat_so_far_and_is_raised():
    models = Models(triage=[ModelError("the model fell over")])
    screen, out = console()

    with pytest.raises(ModelError, match="fell over"):
        run_demo("I was charged twice", models, console=screen)

    assert "error: ModelError: the model fell over" in out.getvalue()


def test_three_requests_are_each_handled_by_the_right_specialist_who_hand_the_customer_over():
    models = Models(
        triage=[[tool_call("transfer_to_billing", {"customer_name": "Ada", "issue": "charged twice"})]],
        billing=[
            [tool_call("refund_charge", {"charge_id": "CH-302"})],
            BILLING_ANSWER,
            [tool_call("transfer_to_technical_support", {"customer_name": "Ada", "issue": "export crashes"})],
            [tool_call("email_invoice", {"charge_id": "CH-288"})],
            "I emailed you the invoice for CH-288.",
        ],
        technical_support=[
            [tool_call("service_status", {"service": "desktop app"})],
            "Version 4.2.1 fixes that crash: please update.",
            [tool_call("transfer_to_billing", {"customer_name": "Ada", "issue": "February invoice"})],
        ],
    )
    answers = iter(
        ["The desktop app crashes when I export, too.", "Can you email me February's invoice?", ""]
    )
    screen, out = console()

    result = run_demo(
        "Hi, I'm Ada. I was charged twice.", models, console=screen, ask=lambda prompt: next(answers)
    )

    assert result.stop_reason is not None and result.stop_reason.kind is StopKind.HUMAN_EXIT
    answers_given = [
        (message["name"], message["content"])
        for message in result.chat_history
        if message.get("role") != "tool" and not message.get("tool_calls") and message["name"] != "customer"
    ]
    assert answers_given == [
        ("billing", BILLING_ANSWER),
        ("technical_support", "Version 4.2.1 fixes that crash: please update."),
        ("billing", "I emailed you the invoice for CH-288."),
    ]
    shown = out.getvalue()
    for handoff in ("triage → billing", "billing → technical_support", "technical_support → billing"):
        assert handoff in shown
    assert models.params("billing") == ["required", "none", None, None, "none"]
    assert models.params("technical_support") == ["required", "none", None]
    technical_prompt = models.scripted["technical_support"].requests[0].system_message or ""
    assert "Their name is Ada." in technical_prompt
