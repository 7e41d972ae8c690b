"""A fake model server on 127.0.0.1 that answers from a script and records every request.

It speaks whatever the script says: OpenAI chat completions (:func:`completion`, streamed with
:func:`completion_stream`) or Anthropic messages (:func:`anthropic_message`, :func:`anthropic_stream`).
Each request is answered by the next scripted reply: a response body (status 200), a :class:`Reply` (any
status, headers, a delay before answering, or a raw body of any content type such as an HTML page or an
event stream), or a function of the :class:`Recorded` request returning either. With the script used
up, the server answers 500 and says so.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])


@dataclass
class Reply:
    """A scripted answer: status, JSON body, headers, and seconds to wait before answering.

    ``raw`` replaces the JSON body with these exact bytes (or text), sent as ``content_type``.
    """

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | bytes | None = None
    content_type: str = "application/json"


def raw(body: str | bytes, content_type: str = "text/html; charset=utf-8", status: int = 200) -> Reply:
    """A reply whose body is sent exactly as given, such as an HTML error page."""
    return Reply(status=status, raw=body, content_type=content_type)


def sse(*events: Any, done: bool = True, named: bool = False) -> Reply:
    """A ``text/event-stream`` reply: one ``data:`` line per event (JSON unless already text).

    ``named`` also sends each event's ``type`` as its ``event:`` line (Anthropic's format); ``done``
    ends the stream with OpenAI's ``data: [DONE]``.
    """
    lines = []
    for event in events:
        data = event if isinstance(event, str) else json.dumps(event)
        name = f"event: {event['type']}\n" if named and isinstance(event, dict) else ""
        lines.append(f"{name}data: {data}\n\n")
    if done:
        lines.append("data: [DONE]\n\n")
    return Reply(raw="".join(lines), content_type="text/event-stream")


def rate_limited(**headers: str) -> Reply:
    """A 429 that asks to be retried after a millisecond."""
    return Reply({"error": {"message": "rate limited", "type": "rate_limit_error"}}, 429, _soon(headers))


def server_error(status: int = 500, **headers: str) -> Reply:
    """A 5xx that asks to be retried after a millisecond."""
    return Reply({"error": {"message": "internal error", "type": "api_error"}}, status, _soon(headers))


def _soon(headers: dict[str, str]) -> dict[str, str]:
    return {"retry-after-ms": "1", **{key.replace("_", "-"): value for key, value in headers.items()}}


Script = Any  # a body, a Reply, or a function of a Recorded request returning one of them


class FakeServer:
    """A threaded HTTP server on 127.0.0.1 (a free port) answering from a script; use it as a context."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._script: list[Script] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server._answer(self)

            def do_GET(self) -> None:
                server._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.01,), name="fake-model-server", daemon=True
        )

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:<port>/v1``."""
        return f"{self.root}/v1"

    def script(self, *replies: Script) -> FakeServer:
        """Queue replies, answered in order."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._script)

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        request = Recorded(
            handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, body
        )
        with self._lock:
            self.requests.append(request)
            item = self._script.pop(0) if self._script else None
        if item is None:
            reply = Reply({"error": {"message": "the fake server has no scripted reply left"}}, 500)
            reply.headers["x-should-retry"] = "false"
        else:
            if callable(item):
                item = item(request)
            reply = item if isinstance(item, Reply) else Reply(item)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.raw is not None:
            payload = reply.raw.encode() if isinstance(reply.raw, str) else reply.raw
        else:
            payload = json.dumps(reply.body).encode()
        try:
            handler.send_response(reply.status)
            handler.send_header("content-type", reply.content_type)
            handler.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass


# ----------------------------------------------------------------------------------------------------
# response bodies


def completion(
    content: str | None = None,
    tool_calls: list[tuple[str, Any]] | None = None,
    *,
    model: str = "fake-model",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """An OpenAI chat completion; ``tool_calls`` are ``(name, arguments)`` (a dict, or raw text)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_fake_{next(_ids)}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for name, arguments in tool_calls
        ]
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def json_completion(value: Any, **kwargs: Any) -> dict[str, Any]:
    """A chat completion whose content is ``value`` encoded as JSON (the JSON tool-call mode's reply)."""
    return completion(json.dumps(value), **kwargs)


def anthropic_message(
    text: str | None = None,
    tool_uses: list[tuple[str, dict[str, Any]]] | None = None,
    *,
    model: str = "claude-fake",
    input_tokens: int = 12,
    output_tokens: int = 7,
    stop_reason: str | None = None,
) -> dict[str, Any]:
    """An Anthropic messages API response; ``tool_uses`` are ``(name, input)``."""
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for name, arguments in tool_uses or ():
        content.append({"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": arguments})
    return {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def completion_chunks(
    pieces: list[str] | None = None,
    tool_calls: list[tuple[str, list[str]]] | None = None,
    *,
    model: str = "fake-model",
    prompt_tokens: int | None = 10,
    completion_tokens: int = 5,
    finish_reason: str | None = None,
) -> list[dict[str, Any]]:
    """A chat completion as the chunks of an OpenAI stream: the text in ``pieces``, then each tool call
    as ``(name, argument pieces)``, then the finish reason and (unless ``prompt_tokens`` is ``None``) a
    usage chunk, as ``stream_options={"include_usage": True}`` asks."""
    chat_id = f"chatcmpl-{next(_ids)}"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [choice],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": piece}) for piece in pieces or ()]
    for index, (name, argument_pieces) in enumerate(tool_calls or ()):
        start = {"index": index, "id": f"call_fake_{next(_ids)}", "type": "function"}
        chunks.append(chunk({"tool_calls": [{**start, "function": {"name": name, "arguments": ""}}]}))
        chunks += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            for piece in argument_pieces
        ]
    chunks.append(chunk({}, finish_reason or ("tool_calls" if tool_calls else "stop")))
    if prompt_tokens is not None:
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        chunks.append(
            {
                "id": chat_id,
                "object": "chat.completion.chunk",
                "created": 1,
                "model": model,
                "choices": [],
                "usage": usage,
            }
        )
    return chunks


def completion_stream(*args: Any, **kwargs: Any) -> Reply:
    """:func:`completion_chunks` as a server-sent event stream."""
    return sse(*completion_chunks(*args, **kwargs))


def anthropic_events(
    pieces: list[str] | None = None,
    tool_uses: list[tuple[str, list[str]]] | None = None,
    *,
    model: str = "claude-fake",
    input_tokens: int = 12,
    output_tokens: int = 7,
    stop_reason: str | None = None,
) -> list[dict[str, Any]]:
    """An Anthropic message as the events of its stream: text ``pieces``, then each tool use as
    ``(name, pieces of its JSON input)``."""
    message = {
        "id": f"msg_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    index = 0
    if pieces:
        events.append(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        )
        events.append({"type": "ping"})
        events += [
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
            for piece in pieces
        ]
        events.append({"type": "content_block_stop", "index": 0})
        index = 1
    for offset, (name, json_pieces) in enumerate(tool_uses or ()):
        block = {"type": "tool_use", "id": f"toolu_{next(_ids)}", "name": name, "input": {}}
        events.append({"type": "content_block_start", "index": index + offset, "content_block": block})
        events += [
            {
                "type": "content_block_delta",
                "index": index + offset,
                "delta": {"type": "input_json_delta", "partial_json": piece},
            }
            for piece in json_pieces
        ]
        events.append({"type": "content_block_stop", "index": index + offset})
    delta = {"stop_reason": stop_reason or ("tool_use" if tool_uses else "end_turn"), "stop_sequence": None}
    events.append({"type": "message_delta", "delta": delta, "usage": {"output_tokens": output_tokens}})
    events.append({"type": "message_stop"})
    return events


def anthropic_stream(*args: Any, **kwargs: Any) -> Reply:
    """:func:`anthropic_events` as a server-sent event stream."""
    return sse(*anthropic_events(*args, **kwargs), done=False, named=True)


Responder = Callable[[Recorded], Any]
