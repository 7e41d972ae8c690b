"""Streamed replies put back together: the pieces go to the token sink as they arrive, and what is left
at the end is the very body a request without streaming would have been answered with.

Each assembler takes the stream's events as plain dicts (the SDKs' ``model_dump()``), so a streamed and a
plain request end in the same response parsing, usage and cost included.
"""

from __future__ import annotations

import json
from typing import Any

from parley.messages import Message, content_str
from parley.models.streaming import StreamedText, TokenSink


def emit_whole(message: Message, sink: TokenSink | None) -> None:
    """Give ``sink`` a reply that arrived in one piece (a server that does not stream): its text, then
    each tool call's arguments."""
    if sink is None:
        return
    text = content_str(message.get("content"))
    if text:
        sink(StreamedText(text))
    for index, call in enumerate(message.get("tool_calls") or ()):
        sink(StreamedText(call["function"]["arguments"], call["function"]["name"], index))


class ChatCompletionAssembler:
    """Collects the chunks of an OpenAI chat completion stream into the chat completion they stand for."""

    def __init__(self, sink: TokenSink | None = None) -> None:
        self._sink = sink
        self._id: str | None = None
        self._model: str | None = None
        self._choice_seen = False
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._arguments: dict[int, list[str]] = {}
        self._last_call = -1
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        """Take one chunk (``chat.completion.chunk``)."""
        self._id = self._id or chunk.get("id")
        self._model = self._model or chunk.get("model")
        if chunk.get("usage"):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self._choice_seen = True
            if choice.get("finish_reason"):
                self._finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                self._content.append(text)
                self._emit(text, None)
            if isinstance(delta.get("refusal"), str):
                self._refusal.append(delta["refusal"])
            for call in delta.get("tool_calls") or ():
                self._add_call(call)

    def _add_call(self, call: dict[str, Any]) -> None:
        index = call.get("index")
        if not isinstance(index, int):
            index = self._last_call + 1 if call.get("id") or self._last_call < 0 else self._last_call
        self._last_call = index
        entry = self._calls.setdefault(index, {"id": None, "type": "function", "function": {"name": ""}})
        pieces = self._arguments.setdefault(index, [])
        entry["id"] = entry["id"] or call.get("id")
        function = call.get("function") or {}
        if function.get("name") and not entry["function"]["name"]:
            entry["function"]["name"] = function["name"]
        piece = function.get("arguments")
        if isinstance(piece, str) and piece:
            pieces.append(piece)
            self._emit(piece, entry["function"]["name"], index)

    def _emit(self, text: str, tool_call: str | None, call_index: int = 0) -> None:
        if self._sink is not None:
            self._sink(StreamedText(text, tool_call, call_index))

    def completion(self) -> dict[str, Any]:
        """The chat completion the stream added up to (no choices if it had none)."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        if self._calls:
            message["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": "".join(self._arguments[index])}}
                for index, call in sorted(self._calls.items())
            ]
        choices = []
        if self._choice_seen:
            choices.append({"index": 0, "message": message, "finish_reason": self._finish_reason})
        return {
            "id": self._id,
            "object": "chat.completion",
            "model": self._model,
            "choices": choices,
            "usage": self._usage,
        }


class AnthropicMessageAssembler:
    """Collects the events of an Anthropic messages stream into the message they stand for.

    A ``tool_use`` block whose streamed input does not add up to a JSON object (the stream stopped at
    ``max_tokens`` in the middle of it) keeps the text it got as its ``input``, for the client to report.
    """

    def __init__(self, sink: TokenSink | None = None) -> None:
        self._sink = sink
        self._message: dict[str, Any] = {"type": "message", "role": "assistant", "content": []}
        self._usage: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._call_of_block: dict[int, int] = {}
        """Which tool call of the reply (0, 1...) each tool-use block is."""

    def add(self, event: dict[str, Any]) -> None:
        """Take one event (``message_start``, ``content_block_delta``...)."""
        kind = event.get("type")
        if kind == "message_start":
            started = dict(event.get("message") or {})
            self._usage.update(started.pop("usage", None) or {})
            self._message.update({key: value for key, value in started.items() if key != "content"})
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            self._blocks[event.get("index", len(self._blocks))] = block
        elif kind == "content_block_delta":
            self._delta(event.get("index", len(self._blocks) - 1), event.get("delta") or {})
        elif kind == "message_delta":
            self._message.update((event.get("delta") or {}).items())
            self._usage.update(
                {key: value for key, value in (event.get("usage") or {}).items() if value is not None}
            )

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        if delta.get("type") == "text_delta":
            text = delta.get("text") or ""
            block["text"] = (block.get("text") or "") + text
            if text and self._sink is not None:
                self._sink(StreamedText(text))
        elif delta.get("type") == "input_json_delta":
            piece = delta.get("partial_json") or ""
            self._json.setdefault(index, []).append(piece)
            if piece and self._sink is not None:
                call = self._call_of_block.setdefault(index, len(self._call_of_block))
                self._sink(StreamedText(piece, block.get("name") or "", call))

    def message(self) -> dict[str, Any]:
        """The message the stream added up to."""
        content = []
        for index, block in sorted(self._blocks.items()):
            if block.get("type") == "tool_use" and index in self._json:
                text = "".join(self._json[index])
                try:
                    block = {**block, "input": json.loads(text) if text.strip() else {}}
                except (ValueError, RecursionError):
                    block = {**block, "input": text}
            content.append(block)
        return {**self._message, "content": content, "usage": self._usage}
