"""OpenTelemetry spans of chats, checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    ConversableAgent,
    ScriptedModel,
    SwarmAgent,
    initiate_swarm_chat,
    tool_call,
)
from parley.models import Usage
from parley.telemetry import instrument, uninstrument


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    instrument(provider)
    yield exported
    uninstrument()


def by_name(spans: Any) -> dict[str, Any]:
    return {span.name: span for span in spans}


def swarm() -> tuple[list[SwarmAgent], SwarmAgent]:
    def lookup(order: str) -> str:
        return f"{order} shipped"

    triage = SwarmAgent(
        "triage",
        llm_config=ScriptedModel(
            [[tool_call("lookup", {"order": "A-1"}, id="l1")], [tool_call("transfer_to_support", id="t1")]],
            usage=Usage(50, 10),
            model="small-model",
        ),
        functions=[lookup],
        human_input_mode="NEVER",
    )
    support = SwarmAgent(
        "support", llm_config=ScriptedModel(["It shipped."], usage=Usage(70, 5)), human_input_mode="NEVER"
    )
    triage.register_hand_off(ON_CONDITION(support, "Shipping questions."))
    support.register_hand_off(AFTER_WORK("TERMINATE"))
    return [triage, support], triage


def test_a_swarm_is_one_trace_of_workflow_agent_model_and_tool_spans(exporter: InMemorySpanExporter):
    agents, triage = swarm()

    result, _, _ = initiate_swarm_chat(triage, "Where is A-1?", agents, silent=True)

    spans = exporter.get_finished_spans()
    assert len({span.context.trace_id for span in spans}) == 1, "one trace"
    names = sorted(span.name for span in spans)
    assert names == sorted(
        [
            "invoke_workflow swarm",
            "invoke_agent triage",
            "invoke_agent triage",
            "chat small-model",
            "execute_tool lookup",
            "chat small-model",
            "execute_tool transfer_to_support",
            "invoke_agent support",
            "chat scripted",
        ]
    )
    workflow = by_name(spans)["invoke_workflow swarm"]
    assert workflow.parent is None
    assert workflow.attributes["gen_ai.conversation.id"] == result.chat_id
    assert workflow.attributes["parley.stop_reason.kind"] == "terminate_target"
    turns = [span for span in spans if span.name.startswith("invoke_agent")]
    assert all(turn.parent.span_id == workflow.context.span_id for turn in turns)
    triage_turns = {span.context.span_id for span in spans if span.name == "invoke_agent triage"}
    for span in spans:
        if span.name in ("chat small-model", "execute_tool lookup", "execute_tool transfer_to_support"):
            assert span.parent.span_id in triage_turns, span.name
    model = next(span for span in spans if span.name == "chat small-model")
    assert model.attributes["gen_ai.operation.name"] == "chat"
    assert model.attributes["gen_ai.request.model"] == "small-model"
    assert (
        model.attributes["gen_ai.usage.input_tokens"],
        model.attributes["gen_ai.usage.output_tokens"],
    ) == (
        50,
        10,
    )
    tool = by_name(spans)["execute_tool lookup"]
    assert tool.attributes["gen_ai.tool.name"] == "lookup"
    assert tool.attributes["gen_ai.tool.call.id"] == "l1"


def test_no_message_contents_unless_asked(exporter: InMemorySpanExporter):
    agents, triage = swarm()
    initiate_swarm_chat(triage, "Where is A-1?", agents, silent=True)

    recorded = " ".join(
        str(value) for span in exporter.get_finished_spans() for value in span.attributes.values()
    )
    assert "A-1" not in recorded
    assert "shipped" not in recorded


def test_contents_when_the_application_opts_in(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    instrument(provider)
    try:
        agents, triage = swarm()
        initiate_swarm_chat(triage, "Where is A-1?", agents, silent=True)
    finally:
        uninstrument()

    spans = exported.get_finished_spans()
    tool = by_name(spans)["execute_tool lookup"]
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"order": "A-1"}'
    assert tool.attributes["gen_ai.tool.call.result"] == "A-1 shipped"
    support_turn = next(
        span
        for span in spans
        if span.name == "invoke_agent support" and "gen_ai.output.messages" in span.attributes
    )
    output = json.loads(str(support_turn.attributes["gen_ai.output.messages"]))
    assert [(message["role"], message["content"]) for message in output] == [("assistant", "It shipped.")]


def test_a_failed_tool_and_a_failed_chat_are_errors(exporter: InMemorySpanExporter):
    def broken() -> str:
        raise RuntimeError("down")

    agent = SwarmAgent(
        "worker",
        llm_config=ScriptedModel([tool_call("broken", id="b1"), RuntimeError("model down")]),
        functions=[broken],
        human_input_mode="NEVER",
    )
    with pytest.raises(RuntimeError, match="model down"):
        initiate_swarm_chat(agent, "go", [agent], silent=True)

    spans = by_name(exporter.get_finished_spans())
    assert spans["execute_tool broken"].status.status_code.name == "ERROR"
    assert spans["execute_tool broken"].attributes["error.type"] == "tool_error"
    assert spans["invoke_workflow swarm"].status.status_code.name == "ERROR"
    assert all(span.end_time is not None for span in spans.values())
    failed_call = [span for span in exporter.get_finished_spans() if span.name == "chat scripted"][-1]
    last_turn = [span for span in exporter.get_finished_spans() if span.name == "invoke_agent worker"][-1]
    for span in (failed_call, last_turn, spans["invoke_workflow swarm"]):
        assert span.status.status_code.name == "ERROR", span.name
        assert span.attributes["error.type"] == "RuntimeError", span.name


def test_model_spans_name_the_provider(exporter: InMemorySpanExporter):
    """``gen_ai.provider.name``: the client's ``provider`` (parley's own clients have one), else
    ``_OTHER``."""

    class Hosted(ScriptedModel):
        provider = "mistral_ai"

    agents, triage = swarm()
    agents[1].client = Hosted(["It shipped."], usage=Usage(70, 5))
    initiate_swarm_chat(triage, "Where is A-1?", agents, silent=True)

    spans = exporter.get_finished_spans()
    providers = {span.name: span.attributes.get("gen_ai.provider.name") for span in spans}
    assert providers["chat small-model"] == "_OTHER"
    assert providers["chat scripted"] == "mistral_ai"
    assert providers["invoke_agent support"] == "mistral_ai"
    assert "gen_ai.provider.name" not in by_name(spans)["invoke_workflow swarm"].attributes
    assert not any("gen_ai.system" in span.attributes for span in spans)


def test_parleys_clients_name_their_providers():
    from parley.llm_reply import model_provider
    from parley.models import ConfigListClient
    from parley.models.anthropic_client import AnthropicClient
    from parley.models.openai_client import OpenAIClient

    assert model_provider(OpenAIClient("gpt-4o", api_key="x")) == "openai"
    assert model_provider(OpenAIClient("gpt-4o", api_key="x", api_type="azure")) == "azure.ai.openai"
    assert model_provider(AnthropicClient("claude-sonnet-4-5", api_key="x")) == "anthropic"
    assert model_provider(ConfigListClient({"config_list": [{"model": "m", "api_type": "anthropic"}]})) == (
        "anthropic"
    )
    assert model_provider(ScriptedModel(["hi"])) == "_OTHER"


def test_a_nested_chat_is_a_child_of_the_turn_that_started_it(exporter: InMemorySpanExporter):
    writer = ConversableAgent("writer", llm_config=ScriptedModel(["draft"]), human_input_mode="NEVER")
    critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
    lead = ConversableAgent("lead", llm_config=ScriptedModel([]), human_input_mode="NEVER")
    lead.register_nested_chats(
        [{"sender": critic, "recipient": writer, "max_turns": 1}], trigger=lambda s: True
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    user.initiate_chat(lead, "review", max_turns=1, silent=True)

    spans = exporter.get_finished_spans()
    workflows = [span for span in spans if span.name == "invoke_workflow chat"]
    assert len(workflows) == 2
    outer, inner = sorted(workflows, key=lambda span: span.start_time)
    assert inner.context.trace_id == outer.context.trace_id
    assert inner.parent is not None


def test_no_api_key_ever_reaches_a_span(monkeypatch: pytest.MonkeyPatch):
    from models.fake_servers import FakeServer, completion

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exported = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exported))
    instrument(provider)
    secret = "sk-test-do-not-leak-0123456789"
    try:
        with FakeServer() as server:
            server.script(completion("Hello there."))
            config = {"config_list": [{"model": "gpt-4o-mini", "api_key": secret, "base_url": server.url}]}
            assistant = ConversableAgent("assistant", llm_config=config, human_input_mode="NEVER")
            user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
            user.initiate_chat(assistant, "hi", max_turns=1, silent=True)
    finally:
        uninstrument()

    spans = exported.get_finished_spans()
    assert any(span.name == "chat gpt-4o-mini" for span in spans)
    for span in spans:
        for value in span.attributes.values():
            assert secret not in str(value)
        for event in span.events:
            assert secret not in str(event.attributes)
