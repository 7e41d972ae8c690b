"""Anthropic's messages API through the official ``anthropic`` SDK.

OpenAI-format messages and tools go in and come out: leading system messages become ``system``, an
assistant's ``tool_calls`` become ``tool_use`` blocks, tool messages become ``tool_result`` blocks, and
the reply's ``tool_use`` blocks come back as OpenAI-style ``tool_calls``. Content parts (text and
images) become content blocks, and a message from another participant keeps its speaker's name in its
text. Rate limits, overloads, 5xx answers and timeouts are retried with backoff by the SDK
(``max_retries`` times); an unusable answer is a :class:`~parley.models.faults.ModelResponseError`, and
no error carries the API key. With ``stream=True`` the reply is streamed to the sink in
:data:`parley.models.streaming.token_sink`, and the result is what the request without streaming gets.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Sequence
from typing import Any

from parley.messages import Message, content_str
from parley.models.base import ModelError, ModelResponse, Usage, reported_usage, usage_bound
from parley.models.config import request_params_of
from parley.models.faults import ModelResponseError, redact
from parley.models.pricing import Price, cost_of, parse_price, price_in_advance
from parley.models.reply_limits import ANTHROPIC_DEFAULT_MAX_TOKENS
from parley.models.sdk import (
    DEFAULT_MAX_RETRIES,
    PerEventLoop,
    a_retry_unusable,
    awaited,
    decode_json_body,
    header_secrets,
    import_sdk,
    is_event_stream,
    retry_unusable,
    split_known,
)
from parley.models.stream_assembly import AnthropicMessageAssembler, emit_whole
from parley.models.streaming import token_sink

ANTHROPIC_URL = "https://api.anthropic.com"
#: ``max_tokens`` when the config sets none (the messages API requires one).
DEFAULT_MAX_TOKENS = ANTHROPIC_DEFAULT_MAX_TOKENS
#: What a conversation that would not start (or end) with a user turn is given, as AG2 does.
CONTINUE = "Please continue."

#: OpenAI sampling parameters the messages API has no equivalent for; they are not sent.
_OPENAI_ONLY = (
    "seed",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "n",
)


class AnthropicClient:
    """A Claude model behind Anthropic's messages API.

    Args:
        model: the model name, such as ``claude-sonnet-4-5``.
        api_key: defaults to ``ANTHROPIC_API_KEY``.
        base_url: defaults to ``ANTHROPIC_BASE_URL``, else Anthropic's API.
        timeout: seconds before a request is abandoned (and retried).
        max_retries: how often a failed request is retried (the SDK's default: 2).
        price: ``(prompt, completion)`` dollars per 1,000 tokens, instead of the built-in table.
        params: request parameters sent with every request (``temperature``, ``max_tokens``...).
        client_options: more keyword arguments for the SDK client (``default_headers``...).
    """

    reply_token_limit = ANTHROPIC_DEFAULT_MAX_TOKENS
    """The most tokens a reply has when neither the config nor the call sets ``max_tokens``."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        price: Price | None = None,
        params: dict[str, Any] | None = None,
        client_options: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.price = price
        self.params = dict(params or {})
        self._api_key = api_key
        self._options = dict(client_options or {})
        if timeout is not None:
            self._options["timeout"] = timeout
        if max_retries is not None:
            self._options["max_retries"] = max_retries
        self._sync: Any = None
        self._async = PerEventLoop(lambda: self._sdk_client(asynchronous=True))

    @property
    def token_price(self) -> Price | None:
        """Dollars per 1,000 prompt and completion tokens, if known before a call (the configured
        ``price``, else the built-in table's)."""
        return price_in_advance(self.price, self.model)

    @classmethod
    def from_config(cls, config: dict[str, Any], settings: dict[str, Any] | None = None) -> AnthropicClient:
        """The client for one entry of an AG2 ``config_list`` with ``"api_type": "anthropic"``."""
        mode = config.get("tool_call_mode") or "native"
        if mode != "native":
            raise ValueError(
                f"tool_call_mode {mode!r} is for OpenAI-compatible servers and the local model; "
                "Anthropic's models call tools natively"
            )
        options = {
            key: config[key] for key in ("default_headers", "http_client") if config.get(key) is not None
        }
        return cls(
            config["model"],
            api_key=config.get("api_key"),
            base_url=config.get("base_url"),
            timeout=config.get("timeout"),
            max_retries=config.get("max_retries"),
            price=parse_price(config.get("price")),
            params=request_params_of(config),
            client_options=options,
        )

    provider = "anthropic"
    """The provider, as OpenTelemetry's GenAI conventions name it (``gen_ai.provider.name``)."""

    @property
    def endpoint(self) -> str:
        """Where requests go."""
        return self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.model!r}, endpoint={redact(self.endpoint, self.secrets)!r})"

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Send one messages request and return its reply in OpenAI format."""
        request = self._request(messages, tools, params)
        return retry_unusable(lambda: self._create_once(request), self._max_retries, self.secrets)

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Async twin of :meth:`create`."""
        request = self._request(messages, tools, params)
        return await a_retry_unusable(lambda: self._a_create_once(request), self._max_retries, self.secrets)

    def _create_once(self, request: dict[str, Any]) -> ModelResponse:
        if self._sync is None:
            self._sync = self._sdk_client(asynchronous=False)
        api = self._sync.messages
        raw = api.with_raw_response.create(**split_known(api.create, request))
        http = raw.http_response
        if not (request.get("stream") and is_event_stream(http)):
            http.read()
            return self._answer(self._decode(http), request, streamed=bool(request.get("stream")))
        assembler = AnthropicMessageAssembler(token_sink.get())
        try:
            for event in raw.parse():
                assembler.add(event.model_dump())
        except (ValueError, RecursionError) as error:
            raise self._fault(
                f"sent a stream event that is not JSON ({error})", status=http.status_code
            ) from None
        finally:
            http.close()
        return self._response(assembler.message(), request)

    async def _a_create_once(self, request: dict[str, Any]) -> ModelResponse:
        api = self._async.get().messages
        raw = await api.with_raw_response.create(**split_known(api.create, request))
        http = raw.http_response
        if not (request.get("stream") and is_event_stream(http)):
            await http.aread()
            return self._answer(self._decode(http), request, streamed=bool(request.get("stream")))
        assembler = AnthropicMessageAssembler(token_sink.get())
        try:
            async for event in await awaited(raw.parse()):
                assembler.add(event.model_dump())
        except (ValueError, RecursionError) as error:
            raise self._fault(
                f"sent a stream event that is not JSON ({error})", status=http.status_code
            ) from None
        finally:
            await http.aclose()
        return self._response(assembler.message(), request)

    def _answer(self, data: dict[str, Any], request: dict[str, Any], *, streamed: bool) -> ModelResponse:
        """The response to a body that came in one piece; if a stream was asked for (and the server did
        not stream), the sink gets the reply in one piece."""
        response = self._response(data, request)
        if streamed:
            emit_whole(response.message, token_sink.get())
        return response

    @property
    def _max_retries(self) -> int:
        retries = self._options.get("max_retries")
        return DEFAULT_MAX_RETRIES if retries is None else int(retries)

    @property
    def secrets(self) -> tuple[str, ...]:
        """What must never appear in an error: the API key (given or from the environment) and tokens."""
        found = [self._api_key, os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_AUTH_TOKEN")]
        found.extend(header_secrets(self._options.get("default_headers")))
        return tuple(secret for secret in found if isinstance(secret, str) and secret)

    def _fault(self, problem: str, **details: Any) -> ModelResponseError:
        return ModelResponseError(
            problem, model=self.model, endpoint=self.endpoint, secrets=self.secrets, **details
        )

    def _decode(self, http: Any) -> dict[str, Any]:
        return decode_json_body(http, self._fault, "content")

    # ------------------------------------------------------------------------------------------------

    def _sdk_client(self, *, asynchronous: bool) -> Any:
        anthropic = import_sdk("anthropic", "anthropic")
        factory = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
        return factory(api_key=self._api_key, base_url=self.base_url, **self._options)

    def _request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        merged = {**params, **self.params}
        if merged.pop("response_format", None) is not None:
            raise ModelError(
                f"response_format is not supported by the Anthropic client (model {self.model!r}); "
                "describe the format in the system message instead"
            )
        tool_choice = merged.pop("tool_choice", None)
        parallel = merged.pop("parallel_tool_calls", None)
        for name in _OPENAI_ONLY:
            merged.pop(name, None)
        if not merged.get("stream"):
            merged.pop("stream", None)
        max_tokens = merged.pop("max_tokens", None) or merged.pop("max_completion_tokens", None)
        if merged.get("temperature") is not None and merged.get("top_p") is not None:
            del merged["top_p"]
            warnings.warn(
                f"Anthropic's models take temperature or top_p, not both (the latest refuse both): "
                f"{self.model} is sent temperature only",
                stacklevel=4,
            )
        stop = merged.pop("stop", None)
        merged.pop("stream_options", None)
        system, turns = to_anthropic_messages(messages, with_tools=bool(tools))
        request: dict[str, Any] = {
            "model": self.model,
            "messages": turns,
            "max_tokens": max_tokens or DEFAULT_MAX_TOKENS,
        }
        if system:
            request["system"] = system
        if stop:
            request["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        if tools:
            request["tools"] = [to_anthropic_tool(tool) for tool in tools]
            choice = to_anthropic_tool_choice(tool_choice, parallel)
            if choice is not None:
                request["tool_choice"] = choice
        request.update(merged)
        return request

    def _response(self, message: Any, request: dict[str, Any]) -> ModelResponse:
        data = message.model_dump() if hasattr(message, "model_dump") else dict(message)
        blocks = data.get("content")
        if not isinstance(blocks, list) or not all(isinstance(block, dict) for block in blocks):
            raise self._fault("returned content that is not a list of content blocks", status=200, body=data)
        text = "".join(str(block.get("text") or "") for block in blocks if block.get("type") == "text")
        calls = [
            self._tool_call(block, data.get("stop_reason"))
            for block in blocks
            if block.get("type") == "tool_use"
        ]
        if not text and not calls:
            raise self._fault(
                f"returned an empty reply (stop_reason={data.get('stop_reason')!r})", status=200, body=data
            )
        reply: Message = {"role": "assistant", "content": text or None}
        if calls:
            reply["tool_calls"] = calls
        model = data.get("model") or self.model
        raw = data.get("usage")
        reported = reported_usage(raw, ("input_tokens", "output_tokens"))
        if reported is None:
            usage = billed = usage_bound(request, reply, redact(f"{self.endpoint} ({model})", self.secrets))
        else:
            cached = reported_usage(raw, ("cache_creation_input_tokens", "cache_read_input_tokens"))
            written, read = (cached.prompt_tokens, cached.completion_tokens) if cached else (0, 0)
            usage = Usage(reported.prompt_tokens + written + read, reported.completion_tokens)
            billed = Usage(
                reported.prompt_tokens + round(1.25 * written + 0.1 * read), usage.completion_tokens
            )
        cost = cost_of(billed, model, self.model, price=self.price, warn=self.endpoint == ANTHROPIC_URL)
        return ModelResponse(reply, usage, cost=cost, model=model)

    def _tool_call(self, block: dict[str, Any], stop_reason: Any) -> dict[str, Any]:
        arguments = block.get("input")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            cut = " (it stopped at max_tokens in the middle of it; raise max_tokens)"
            raise self._fault(
                f"returned a call to {block.get('name')!r} whose input is not a JSON object"
                + (cut if stop_reason == "max_tokens" else ""),
                status=200,
                body=arguments,
            )
        return {
            "id": block.get("id") or "",
            "type": "function",
            "function": {"name": block.get("name") or "", "arguments": json.dumps(arguments)},
        }


def to_anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI tool schema as an Anthropic tool."""
    function = tool.get("function", tool)
    converted = {
        "name": function["name"],
        "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
    }
    if function.get("description"):
        converted["description"] = function["description"]
    return converted


def to_anthropic_tool_choice(tool_choice: Any, parallel_tool_calls: bool | None) -> dict[str, Any] | None:
    """OpenAI's ``tool_choice`` and ``parallel_tool_calls`` as Anthropic's ``tool_choice``."""
    if tool_choice is None and parallel_tool_calls is None:
        return None
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name") or tool_choice.get("name")
        choice: dict[str, Any] = {"type": "tool", "name": name}
    else:
        kinds = {None: "auto", "auto": "auto", "required": "any", "any": "any", "none": "none"}
        if tool_choice not in kinds:
            raise ValueError(f"unknown tool_choice {tool_choice!r}")
        choice = {"type": kinds[tool_choice]}
    if parallel_tool_calls is False and choice["type"] != "none":
        choice["disable_parallel_tool_use"] = True
    return choice


def to_anthropic_messages(
    messages: Sequence[Message], *, with_tools: bool
) -> tuple[str, list[dict[str, Any]]]:
    """OpenAI-format messages as Anthropic's ``(system, messages)``.

    Leading system messages make up ``system``; later ones become user turns. Consecutive turns of one
    role are merged, and the conversation starts and ends with a user turn. The messages API has no
    speaker names, so a user message's ``name`` (another participant, in a group chat) is written into
    its text as ``name: text``. Without tools in the request the API refuses ``tool_use`` and
    ``tool_result`` blocks, so earlier tool calls and results are then written out as text.
    """
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role") or "user"
        if role == "system" and not turns:
            system.append(content_str(message.get("content")))
            continue
        if role == "tool":
            blocks = [_tool_result(message, with_tools)]
            role = "user"
        elif role == "assistant":
            blocks = _blocks(message.get("content")) + _tool_uses(message.get("tool_calls") or (), with_tools)
        else:
            blocks = _with_speaker(_blocks(message.get("content")), message.get("name"))
            role = "user"
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
    if turns[-1]["role"] != "user":
        turns.append({"role": "user", "content": [{"type": "text", "text": CONTINUE}]})
    return "\n\n".join(part for part in system if part), turns


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        return [{"type": "text", "text": str(content)}]
    blocks = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            blocks.append(_image(part.get("image_url") or {}))
    return blocks


def _with_speaker(blocks: list[dict[str, Any]], name: Any) -> list[dict[str, Any]]:
    """The blocks of a message said by ``name``, with the name at the start of its text."""
    if not name or not blocks:
        return blocks
    first = blocks[0]
    if first["type"] == "text":
        return [{"type": "text", "text": f"{name}: {first['text']}"}, *blocks[1:]]
    return [{"type": "text", "text": f"{name}:"}, *blocks]


def _image(image_url: dict[str, Any] | str) -> dict[str, Any]:
    url = image_url if isinstance(image_url, str) else str(image_url.get("url", ""))
    if url.startswith("data:") and ";base64," in url:
        header, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": header, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _tool_uses(calls: Sequence[dict[str, Any]], with_tools: bool) -> list[dict[str, Any]]:
    blocks = []
    for call in calls:
        function = call.get("function") or {}
        raw = function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) and raw else raw or {}
        except ValueError:
            arguments = {"arguments": raw}
        if not isinstance(arguments, dict):
            arguments = {"arguments": arguments}
        if with_tools:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id") or "",
                    "name": function.get("name") or "",
                    "input": arguments,
                }
            )
        else:
            text = json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False)
            blocks.append({"type": "text", "text": f"Tool call: {text}"})
    return blocks


def _tool_result(message: Message, with_tools: bool) -> dict[str, Any]:
    text = content_str(message.get("content"))
    if with_tools:
        return {"type": "tool_result", "tool_use_id": message.get("tool_call_id") or "", "content": text}
    return {"type": "text", "text": f"Tool result: {text}" if text else "Tool result: (empty)"}
