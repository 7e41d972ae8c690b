"""OpenTelemetry spans for chats, following the GenAI semantic conventions (``parley-llm[otel]``).

:func:`instrument` makes every chat report spans to the global tracer provider (or the one given):

- ``invoke_workflow {shape}``: the whole chat (``gen_ai.conversation.id`` is the chat's id);
- ``invoke_agent {agent}``: an agent's turn, from its first action to its message;
- ``chat {model}``: a model call, with ``gen_ai.provider.name`` (``openai``, ``anthropic``...),
  ``gen_ai.request.model``, ``gen_ai.response.model`` and the token usage
  (``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``);
- ``execute_tool {tool}``: a tool call, with ``gen_ai.tool.name`` and ``gen_ai.tool.call.id``, and
  ``error.type`` when it failed.

A chat that stops on an exception marks its span, and the model call, tool call and turn it interrupted,
as errors with ``error.type`` (the exception's class).

Spans of one chat form one trace, under the span that was current when the chat started (a span of the
application's own, if it opened one); a chat started during an agent's turn (a nested chat) is a child of
that turn. While a turn runs, its span is the current span, so spans an application opens in its tools
nest under it.

Nothing is exported unless the application configures an exporter: without an OpenTelemetry SDK the
API's tracer records nothing. Message contents (prompts, replies, tool arguments and results) are
recorded only if ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``; API keys never are
(no event carries them).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from parley import events
from parley.events import (
    ChatEvent,
    ChatStarted,
    ChatStopped,
    MessageSent,
    ModelRequested,
    ModelResponded,
    ToolExecuting,
    ToolFinished,
)
from parley.messages import as_own

CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def _import_otel() -> Any:
    try:
        from opentelemetry import context, trace
    except ImportError:
        raise ImportError(
            "OpenTelemetry is not installed: pip install 'parley-llm[otel]' (or opentelemetry-api)"
        ) from None
    return trace, context


@dataclass
class _ChatSpans:
    """The open spans of one chat: the chat's, the current turn's, and the model and tool calls'."""

    chat: Any
    token: Any = None
    turn: Any = None
    turn_agent: str | None = None
    turn_token: Any = None
    model: Any = None
    tools: dict[str | None, Any] = field(default_factory=dict)


class OpenTelemetryListener:
    """A chat listener that reports the chat as OpenTelemetry spans (see the module docstring).

    Args:
        tracer_provider: where spans go (default: the global tracer provider).
        capture_content: record message contents; by default as
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says.
    """

    follows_nested_chats = True

    def __init__(self, tracer_provider: Any = None, *, capture_content: bool | None = None) -> None:
        trace, context = _import_otel()
        self._trace = trace
        self._context = context
        self.tracer = trace.get_tracer("parley", tracer_provider=tracer_provider)
        if capture_content is None:
            capture_content = os.environ.get(CAPTURE_CONTENT, "").lower() == "true"
        self.capture_content = capture_content
        self._chats: dict[str, _ChatSpans] = {}

    def __call__(self, event: ChatEvent) -> None:
        if isinstance(event, ChatStarted):
            self._start_chat(event)
            return
        spans = self._chats.get(event.chat_id)
        if spans is None:
            return
        if isinstance(event, ModelRequested):
            self._start_turn(spans, event)
            spans.model = self.tracer.start_span(
                f"chat {event.model}",
                kind=self._trace.SpanKind.CLIENT,
                start_time=_ns(event.ts),
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": event.provider,
                    "gen_ai.request.model": event.model,
                    "gen_ai.agent.name": event.requester,
                    "gen_ai.conversation.id": event.chat_id,
                },
            )
        elif isinstance(event, ModelResponded):
            self._end_model(spans, event)
        elif isinstance(event, ToolExecuting):
            self._start_turn(spans, event)
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": event.tool,
                "gen_ai.tool.type": "function",
                "gen_ai.conversation.id": event.chat_id,
            }
            if event.call_id is not None:
                attributes["gen_ai.tool.call.id"] = event.call_id
            if self.capture_content:
                attributes["gen_ai.tool.call.arguments"] = event.arguments
            spans.tools[event.call_id] = self.tracer.start_span(
                f"execute_tool {event.tool}", start_time=_ns(event.ts), attributes=attributes
            )
        elif isinstance(event, ToolFinished):
            span = spans.tools.pop(event.call_id, None)
            if span is not None:
                if self.capture_content:
                    span.set_attribute("gen_ai.tool.call.result", event.content)
                if event.error is not None:
                    span.set_attribute("error.type", "tool_error")
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, event.error))
                span.end(end_time=_ns(event.ts))
        elif isinstance(event, MessageSent):
            self._message(spans, event)
        elif isinstance(event, ChatStopped):
            self._stop_chat(spans, event)

    # chats and turns ------------------------------------------------------------------------------------

    def _start_chat(self, event: ChatStarted) -> None:
        span = self.tracer.start_span(
            f"invoke_workflow {event.shape}",
            start_time=_ns(event.ts),
            attributes={
                "gen_ai.operation.name": "invoke_workflow",
                "gen_ai.conversation.id": event.chat_id,
                "parley.chat.shape": event.shape,
                "parley.chat.agents": list(event.agents),
            },
        )
        spans = _ChatSpans(span)
        spans.token = self._context.attach(self._trace.set_span_in_context(span))
        self._chats[event.chat_id] = spans

    def _start_turn(self, spans: _ChatSpans, event: ChatEvent) -> None:
        agent = event.agent
        if spans.turn is not None and spans.turn_agent == agent:
            return
        self._end_turn(spans, event.ts)
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent or "",
            "gen_ai.conversation.id": event.chat_id,
        }
        if isinstance(event, ModelRequested):
            attributes["gen_ai.provider.name"] = event.provider
        spans.turn = self.tracer.start_span(
            f"invoke_agent {agent}", start_time=_ns(event.ts), attributes=attributes
        )
        spans.turn_agent = agent
        spans.turn_token = self._context.attach(self._trace.set_span_in_context(spans.turn))

    def _end_turn(self, spans: _ChatSpans, ts: float) -> None:
        if spans.turn is None:
            return
        if spans.turn_token is not None:
            self._context.detach(spans.turn_token)
        spans.turn.end(end_time=_ns(ts))
        spans.turn = spans.turn_token = spans.turn_agent = None

    def _message(self, spans: _ChatSpans, event: MessageSent) -> None:
        if spans.turn is not None and spans.turn_agent == event.sender:
            if self.capture_content:
                output = as_own(event.message)  # the agent's own message, as its model wrote it
                spans.turn.set_attribute("gen_ai.output.messages", _json([output]))
            if not event.message.get("tool_calls"):
                self._end_turn(spans, event.ts)

    def _end_model(self, spans: _ChatSpans, event: ModelResponded) -> None:
        span = spans.model
        if span is None:
            return
        span.set_attribute("gen_ai.response.model", event.model)
        span.set_attribute("gen_ai.usage.input_tokens", event.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", event.completion_tokens)
        span.set_attribute("parley.cost_usd", event.cost)
        span.set_attribute("parley.cached", event.cached)
        span.end(end_time=_ns(event.ts))
        spans.model = None

    def _stop_chat(self, spans: _ChatSpans, event: ChatStopped) -> None:
        if event.reason.kind.value == "error":  # what the error interrupted, and the chat
            for span in (*spans.tools.values(), spans.model, spans.turn, spans.chat):
                if span is not None:
                    span.set_attribute("error.type", _error_type(event.reason.detail))
                    span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, event.reason.detail))
        for span in spans.tools.values():
            span.end(end_time=_ns(event.ts))
        if spans.model is not None:
            spans.model.end(end_time=_ns(event.ts))
        self._end_turn(spans, event.ts)
        chat = spans.chat
        chat.set_attribute("parley.stop_reason.kind", event.reason.kind.value)
        chat.set_attribute("parley.stop_reason.detail", event.reason.detail)
        chat.set_attribute("gen_ai.usage.input_tokens", int(event.usage.get("prompt_tokens", 0)))
        chat.set_attribute("gen_ai.usage.output_tokens", int(event.usage.get("completion_tokens", 0)))
        if spans.token is not None:
            self._context.detach(spans.token)
        chat.end(end_time=_ns(event.ts))
        del self._chats[event.chat_id]


def _error_type(detail: str) -> str:
    """The class of the exception a chat stopped on (its stop reason reads ``"Class: message"``)."""
    name = detail.split(":", 1)[0]
    return name if name.isidentifier() else "_OTHER"


def _ns(ts: float) -> int:
    return int(ts * 1e9)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


_installed: list[OpenTelemetryListener] = []


def instrument(tracer_provider: Any = None, *, capture_content: bool | None = None) -> OpenTelemetryListener:
    """Report every chat started from now on as OpenTelemetry spans; returns the listener.

    Raises:
        ImportError: OpenTelemetry is not installed (``parley-llm[otel]``).
    """
    uninstrument()
    listener = OpenTelemetryListener(tracer_provider, capture_content=capture_content)
    events.subscribers.append(listener)
    _installed.append(listener)
    return listener


def uninstrument() -> None:
    """Stop reporting spans."""
    while _installed:
        listener = _installed.pop()
        if listener in events.subscribers:
            events.subscribers.remove(listener)
