"""JSONL traces as the engine writes them (version 1), for the trace page's tests and its screenshot.

:func:`support_swarm` is the customer-support swarm of ``examples/customer_support_swarm.py`` on its
scripted double-charge conversation; :func:`two_agent_chat` is a short chat with a human in it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from parley.graph import handoff_graph

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
START = 1767261600.0  # 2026-01-01 10:00 UTC

Event = dict[str, Any]


class TraceWriter:
    """Builds one chat's events: ``seq`` counts from 0, ``ts`` moves on by ``step`` seconds or as told."""

    def __init__(self, chat_id: str, start: float = START) -> None:
        self.chat_id = chat_id
        self.ts = start
        self.events: list[Event] = []
        self.messages = 0

    def add(self, kind: str, agent: str | None, *, after: float = 0.05, **fields: Any) -> Event:
        self.ts = round(self.ts + after, 4)
        event = {"v": 1, "chat_id": self.chat_id, "seq": len(self.events), "ts": self.ts, "kind": kind}
        event["agent"] = agent
        event.update(fields)
        self.events.append(event)
        return event

    def message(self, sender: str, recipient: str, **message: Any) -> Event:
        message = {"role": "assistant", "name": sender, "content": None, **message}
        message.setdefault("tool_calls", None)
        message.setdefault("tool_responses", None)
        message.setdefault("tool_call_id", None)
        event = self.add(
            "message", sender, sender=sender, recipient=recipient, index=self.messages, message=message
        )
        self.messages += 1
        return event

    def model_call(
        self,
        agent: str,
        *,
        sent: int,
        latency: float,
        tokens: tuple[int, int],
        cost: float,
        cached: bool = False,
    ) -> None:
        model = "gpt-4o-mini"
        self.add("model_request", agent, model=model, messages=sent)
        self.add(
            "model_response",
            agent,
            after=latency,
            model=model,
            latency_s=latency,
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
            cost=cost,
            cached=cached,
        )

    def tool(
        self, agent: str, name: str, call_id: str, arguments: dict[str, Any], result: str, *, duration: float
    ) -> None:
        """An agent's tool call, its execution and the tool message with the result."""
        text = json.dumps(arguments)
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
        self.message(agent, "chat_manager", tool_calls=[call])
        self.add("tool_call", agent, tool=name, call_id=call_id, arguments=text)
        self.add(
            "tool_result",
            agent,
            after=duration,
            tool=name,
            call_id=call_id,
            duration_s=duration,
            error=None,
            content=result,
        )

    def tool_message(self, agent: str, call_id: str, result: str) -> None:
        response = {"tool_call_id": call_id, "role": "tool", "content": result}
        self.message(agent, "chat_manager", role="tool", content=result, tool_responses=[response])


def support_graph() -> dict[str, Any]:
    """The handoff graph of the example's swarm, as the engine puts it in ``chat_started``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "customer_support_swarm", EXAMPLES / "customer_support_swarm.py"
    )
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    _, agents, _ = example.build_swarm(example.scripted_models(), with_user=False)
    return handoff_graph(agents).to_dict()


def support_swarm(chat_id: str = "support-1", start: float = START) -> list[Event]:
    """The support swarm: triage records the issue and hands off to billing, which refunds."""
    trace = TraceWriter(chat_id, start)
    agents = ["triage", "billing", "technical_support"]
    trace.add(
        "chat_started",
        None,
        shape="swarm",
        agents=agents,
        context={"customer_name": "unknown", "issue": "unknown"},
        graph=support_graph(),
    )
    trace.message(
        "_User", "chat_manager", role="user", content="Hi, I'm Ada. I was charged twice for invoice INV-1002."
    )
    trace.add("speaker_selected", "triage", speaker="triage", reason="the initial agent")
    trace.model_call("triage", sent=2, latency=0.84, tokens=(412, 38), cost=0.0000846)
    trace.tool(
        "triage",
        "record_issue",
        "call_1",
        {"customer_name": "Ada", "issue": "charged twice for INV-1002"},
        "Recorded: Ada - charged twice for INV-1002",
        duration=0.0004,
    )
    trace.add(
        "context_updated",
        "triage",
        changes={"customer_name": "Ada", "issue": "charged twice for INV-1002"},
        removed=[],
    )
    trace.tool_message("triage", "call_1", "Recorded: Ada - charged twice for INV-1002")
    trace.model_call("triage", sent=4, latency=0.61, tokens=(468, 12), cost=0.0000774)
    trace.tool("triage", "transfer_to_billing", "call_2", {}, "Transferred to billing.", duration=0.0001)
    trace.tool_message("triage", "call_2", "Transferred to billing.")
    trace.add(
        "handoff", "triage", source="triage", target="billing", via="handoff", reason="transfer_to_billing"
    )
    trace.model_call("billing", sent=6, latency=1.12, tokens=(530, 21), cost=0.0000921)
    trace.tool(
        "billing", "lookup_invoice", "call_3", {"invoice_id": "INV-1002"}, "INV-1002: $15.50", duration=0.0021
    )
    trace.tool_message("billing", "call_3", "INV-1002: $15.50")
    trace.model_call("billing", sent=8, latency=0.93, tokens=(561, 19), cost=0.0000956)
    trace.tool(
        "billing",
        "issue_refund",
        "call_4",
        {"invoice_id": "INV-1002"},
        "Refunded $15.50 for INV-1002.",
        duration=0.0135,
    )
    trace.add("context_updated", "billing", changes={"refunds": ["INV-1002"]}, removed=[])
    trace.tool_message("billing", "call_4", "Refunded $15.50 for INV-1002.")
    trace.model_call("billing", sent=10, latency=1.47, tokens=(598, 27), cost=0.0001059)
    trace.message(
        "billing",
        "chat_manager",
        content="Sorry about that, Ada: I refunded the duplicate charge of $15.50 for INV-1002.",
    )
    trace.add(
        "chat_stopped",
        "billing",
        stop_reason={
            "kind": "terminate_target",
            "detail": "billing's after-work ends the chat",
            "agent": "billing",
        },
        usage={"prompt_tokens": 2569, "completion_tokens": 117, "cost": 0.0004556},
    )
    return trace.events


def two_agent_chat(chat_id: str = "chat-2", start: float = START + 60) -> list[Event]:
    """A two-agent chat in which the user is asked for input and the chat ends after two turns."""
    trace = TraceWriter(chat_id, start)
    trace.add("chat_started", None, shape="chat", agents=["user", "assistant"], context={})
    trace.message("user", "assistant", role="user", content="What is the capital of France?")
    trace.model_call("assistant", sent=2, latency=0.42, tokens=(31, 3), cost=0.0000065, cached=True)
    trace.message("assistant", "user", content="Paris.")
    trace.add(
        "human_input_requested",
        "user",
        prompt="Replying as user. Provide feedback to assistant. Press enter to skip and use auto-reply, "
        "or type 'exit' to end the conversation: ",
    )
    trace.add("human_input", "user", after=2.5, answer="And of Italy?")
    trace.message("user", "assistant", role="user", content="And of Italy?")
    trace.model_call("assistant", sent=4, latency=0.38, tokens=(44, 3), cost=0.0000084)
    trace.message("assistant", "user", content="Rome.")
    trace.add("notice", None, text="Maximum turns (2) reached")
    trace.add(
        "chat_stopped",
        None,
        stop_reason={"kind": "max_turns", "detail": "Maximum turns (2) reached", "agent": None},
        usage={"prompt_tokens": 75, "completion_tokens": 6, "cost": 0.0000149},
    )
    return trace.events


def write_trace(path: Path, *chats: Iterable[Event], partial_line: str = "") -> Path:
    """Write the chats' events to ``path``, one JSON object a line (then ``partial_line``, unfinished)."""
    lines = [json.dumps(event) for chat in chats for event in chat]
    path.write_text("\n".join(lines) + "\n" + partial_line)
    return path
