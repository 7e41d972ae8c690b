"""OpenAI's chat completions API through the official ``openai`` SDK.

Serves OpenAI, Azure OpenAI (``api_type="azure"``) and every OpenAI-compatible server: vLLM, Ollama,
llama.cpp's server, LM Studio... Rate limits, 5xx answers, timeouts and dropped connections are retried
with exponential backoff by the SDK (``max_retries`` times, honouring ``Retry-After``); an answer that is
not a chat completion at all (a proxy's HTML page) is retried the same number of times. Every other
unusable answer is a :class:`~parley.models.faults.ModelResponseError`, and no error carries the API key.

With ``stream=True`` among the request parameters the reply is streamed, its text passed to the sink in
:data:`parley.models.streaming.token_sink`, and the result is the response the same request without
streaming gets.
"""

from __future__ import annotations

import copy
import json
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from parley.messages import Message, content_str
from parley.models import json_tools
from parley.models.base import ModelResponse, reported_usage, usage_bound
from parley.models.config import request_params_of
from parley.models.faults import ModelResponseError, redact
from parley.models.pricing import Price, cost_of, parse_price, price_in_advance
from parley.models.reply_limits import known_reply_limit
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
from parley.models.stream_assembly import ChatCompletionAssembler, emit_whole
from parley.models.streaming import token_sink

OPENAI_URL = "https://api.openai.com/v1"
#: The API key an OpenAI-compatible server that checks none (vLLM, Ollama...) is sent.
NO_KEY = "not-needed"

_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id", "function_call")
_TOOL_ONLY_PARAMS = ("tool_choice", "parallel_tool_calls")


#: OpenAI's reasoning models, which refuse ``max_tokens`` (they take ``max_completion_tokens``) and
#: the sampling parameters of :data:`_NOT_FOR_REASONING`.
_REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")
_NOT_FOR_REASONING = (
    "temperature",
    "top_p",
    "frequency_penalty",
    "presence_penalty",
    "logprobs",
    "top_logprobs",
    "logit_bias",
)


def _fit_for_reasoning(request: dict[str, Any], model: str) -> None:
    """Send ``max_tokens`` as ``max_completion_tokens``, and leave out, with a warning, the sampling
    parameters a reasoning model refuses (as AG2 does for ``o1``)."""
    if "max_tokens" in request:
        request.setdefault("max_completion_tokens", request.pop("max_tokens"))
    refused = [name for name in _NOT_FOR_REASONING if name in request]
    for name in refused:
        del request[name]
    if refused:
        names = ", ".join(refused)
        warnings.warn(f"{model} does not take {names} (a reasoning model): not sent", stacklevel=4)


class OpenAIClient:
    """A model behind OpenAI's chat completions API.

    Args:
        model: the model (for Azure, the deployment) name.
        api_key: defaults to ``OPENAI_API_KEY`` (``AZURE_OPENAI_API_KEY`` for Azure); a server at another
            ``base_url`` that needs no key may be left without one.
        base_url: the API's URL, such as ``http://localhost:8000/v1``; for Azure, the resource endpoint.
        api_type: ``"openai"`` or ``"azure"``.
        api_version: Azure's API version (defaults to ``OPENAI_API_VERSION``).
        timeout: seconds before a request is abandoned (and retried).
        max_retries: how often a failed request is retried (the SDK's default: 2).
        price: ``(prompt, completion)`` dollars per 1,000 tokens, instead of the built-in table.
        tool_call_mode: ``"native"`` tool calling, or ``"json_schema"`` (see :mod:`parley.models.json_tools`).
        response_format_type: how the server takes the JSON schema of the ``"json_schema"`` mode:
            ``"json_schema"`` or ``"json_object"``; by default found by trying, once per endpoint.
        params: request parameters sent with every request (``temperature``...).
        client_options: more keyword arguments for the SDK client (``default_headers``...).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        api_type: str = "openai",
        api_version: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        price: Price | None = None,
        tool_call_mode: str = "native",
        response_format_type: str | None = None,
        params: dict[str, Any] | None = None,
        client_options: dict[str, Any] | None = None,
    ) -> None:
        if tool_call_mode not in ("native", "json_schema"):
            raise ValueError(f"tool_call_mode must be 'native' or 'json_schema', not {tool_call_mode!r}")
        self.model = model
        self.api_type = "azure" if api_type.startswith("azure") else "openai"
        self.base_url = base_url
        self.api_version = api_version
        self.price = price
        self.tool_call_mode = tool_call_mode
        if response_format_type is not None:
            json_tools.dialect_for("", response_format_type)  # refuses an unknown one
        self.response_format_type = response_format_type
        self.params = dict(params or {})
        self._api_key = api_key
        self._options = {**(client_options or {})}
        if timeout is not None:
            self._options["timeout"] = timeout
        if max_retries is not None:
            self._options["max_retries"] = max_retries
        self._sync: Any = None
        self._async = PerEventLoop(lambda: self._sdk_client(asynchronous=True))

    @property
    def reply_token_limit(self) -> int | None:
        """The most tokens the model writes in one reply, if parley knows it (see
        :mod:`parley.models.reply_limits`)."""
        return known_reply_limit(self.model)

    @property
    def token_price(self) -> Price | None:
        """Dollars per 1,000 prompt and completion tokens, if known before a call (the configured
        ``price``, else the built-in table's)."""
        return price_in_advance(self.price, self.model)

    @classmethod
    def from_config(cls, config: dict[str, Any], settings: dict[str, Any] | None = None) -> OpenAIClient:
        """The client for one entry of an AG2 ``config_list``."""
        options = {
            key: config[key]
            for key in ("organization", "project", "default_headers", "default_query", "http_client")
            if config.get(key) is not None
        }
        for key in ("azure_endpoint", "azure_deployment", "azure_ad_token"):
            if config.get(key) is not None:
                options[key] = config[key]
        return cls(
            config["model"],
            api_key=config.get("api_key"),
            base_url=config.get("base_url"),
            api_type=config.get("api_type") or "openai",
            api_version=config.get("api_version"),
            timeout=config.get("timeout"),
            max_retries=config.get("max_retries"),
            price=parse_price(config.get("price")),
            tool_call_mode=config.get("tool_call_mode") or "native",
            response_format_type=config.get("response_format_type"),
            params=request_params_of(config),
            client_options=options,
        )

    @property
    def provider(self) -> str:
        """The provider, as OpenTelemetry's GenAI conventions name it (``gen_ai.provider.name``)."""
        return "azure.ai.openai" if self.api_type == "azure" else "openai"

    @property
    def endpoint(self) -> str:
        """Where requests go."""
        if self.api_type == "azure":
            found = self._options.get("azure_endpoint") or self.base_url
            return str(found or os.environ.get("AZURE_OPENAI_ENDPOINT") or "Azure OpenAI (no endpoint set)")
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self.model!r}, endpoint={redact(self.endpoint, self.secrets)!r})"

    # ------------------------------------------------------------------------------------------------

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Send one chat completion request and return its reply."""
        request, json_tools_used = self._request(messages, tools, params)
        if json_tools_used:  # the mode's own response_format, in the dialect the server takes
            response = retry_unusable(
                lambda: json_tools.send_with_dialect(
                    self.endpoint,
                    self.response_format_type,
                    request,
                    lambda sent: self._create_once(sent, tools),
                ),
                self._max_retries,
                self.secrets,
            )
        else:
            response = retry_unusable(
                lambda: self._create_once(request, None), self._max_retries, self.secrets
            )
        return self._with_text_tool_call(response, tools, request, json_tools_used)

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Async twin of :meth:`create`."""
        request, json_tools_used = self._request(messages, tools, params)
        if json_tools_used:
            response = await a_retry_unusable(
                lambda: json_tools.a_send_with_dialect(
                    self.endpoint,
                    self.response_format_type,
                    request,
                    lambda sent: self._a_create_once(sent, tools),
                ),
                self._max_retries,
                self.secrets,
            )
        else:
            response = await a_retry_unusable(
                lambda: self._a_create_once(request, None), self._max_retries, self.secrets
            )
        return self._with_text_tool_call(response, tools, request, json_tools_used)

    @staticmethod
    def _with_text_tool_call(
        response: ModelResponse,
        tools: Sequence[dict[str, Any]] | None,
        request: dict[str, Any],
        json_tools_used: bool,
    ) -> ModelResponse:
        """In the native mode, a text reply that is exactly a tool call naming an offered tool becomes it."""
        if json_tools_used:
            return response
        message = json_tools.with_text_tool_call(response.message, tools, request.get("tool_choice"))
        return response if message is response.message else replace(response, message=message)

    def _create_once(
        self, request: dict[str, Any], offered: Sequence[dict[str, Any]] | None
    ) -> ModelResponse:
        if self._sync is None:
            self._sync = self._sdk_client(asynchronous=False)
        completions = self._sync.chat.completions
        raw = completions.with_raw_response.create(**split_known(completions.create, request))
        http = raw.http_response
        if not (request.get("stream") and is_event_stream(http)):
            http.read()
            return self._answer(self._decode(http), offered, request, streamed=bool(request.get("stream")))
        assembler = ChatCompletionAssembler(token_sink.get())
        try:
            for chunk in raw.parse():
                assembler.add(chunk.model_dump())
        except (ValueError, RecursionError) as error:
            raise self._fault(
                f"sent a stream event that is not JSON ({error})", status=http.status_code
            ) from None
        finally:
            http.close()
        return self._response(assembler.completion(), offered, request)

    async def _a_create_once(
        self, request: dict[str, Any], offered: Sequence[dict[str, Any]] | None
    ) -> ModelResponse:
        completions = self._async.get().chat.completions
        raw = await completions.with_raw_response.create(**split_known(completions.create, request))
        http = raw.http_response
        if not (request.get("stream") and is_event_stream(http)):
            await http.aread()
            return self._answer(self._decode(http), offered, request, streamed=bool(request.get("stream")))
        assembler = ChatCompletionAssembler(token_sink.get())
        try:
            async for chunk in await awaited(raw.parse()):
                assembler.add(chunk.model_dump())
        except (ValueError, RecursionError) as error:
            raise self._fault(
                f"sent a stream event that is not JSON ({error})", status=http.status_code
            ) from None
        finally:
            await http.aclose()
        return self._response(assembler.completion(), offered, request)

    def _answer(
        self,
        data: dict[str, Any],
        offered: Sequence[dict[str, Any]] | None,
        request: dict[str, Any],
        *,
        streamed: bool,
    ) -> ModelResponse:
        """The response to a body that came in one piece; if a stream was asked for (and the server did
        not stream), the sink gets the reply in one piece."""
        response = self._response(data, offered, request)
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
        found = [
            self._api_key,
            os.environ.get("AZURE_OPENAI_API_KEY" if self.api_type == "azure" else "OPENAI_API_KEY"),
            self._options.get("azure_ad_token"),
        ]
        found.extend(header_secrets(self._options.get("default_headers")))
        return tuple(secret for secret in found if isinstance(secret, str) and secret)

    def _fault(self, problem: str, **details: Any) -> ModelResponseError:
        return ModelResponseError(
            problem, model=self.model, endpoint=self.endpoint, secrets=self.secrets, **details
        )

    def _decode(self, http: Any) -> dict[str, Any]:
        return decode_json_body(http, self._fault, "choices")

    # ------------------------------------------------------------------------------------------------

    def _sdk_client(self, *, asynchronous: bool) -> Any:
        openai = import_sdk("openai", "openai")
        options = dict(self._options)
        if self.api_type == "azure":
            options.setdefault("azure_deployment", self.model)
            if self.base_url and "azure_endpoint" not in options:
                options["azure_endpoint"] = self.base_url
            factory = openai.AsyncAzureOpenAI if asynchronous else openai.AzureOpenAI
            return factory(api_key=self._api_key, api_version=self.api_version, **options)
        api_key = self._api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key and self.base_url and not self.base_url.startswith(OPENAI_URL):
            api_key = NO_KEY
        factory = openai.AsyncOpenAI if asynchronous else openai.OpenAI
        return factory(api_key=api_key, base_url=self.base_url, **options)

    def _request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        merged = {**params, **self.params}
        if self.model.startswith(_REASONING_MODELS):
            _fit_for_reasoning(merged, self.model)
        if merged.get("response_format") is not None:
            merged["response_format"] = _response_format(merged["response_format"])
        tools = list(tools or ())
        if not tools:
            for name in _TOOL_ONLY_PARAMS:
                merged.pop(name, None)
        if merged.get("stream"):
            merged.setdefault("stream_options", {"include_usage": True})
        else:
            merged.pop("stream", None)
            merged.pop("stream_options", None)
        if self.tool_call_mode == "json_schema":
            tool_choice = merged.pop("tool_choice", None)
            merged.pop("parallel_tool_calls", None)
            if tools and tool_choice != "none":
                # The reply is JSON for parley to read, not text for anyone to watch: it is not streamed.
                merged.pop("stream", None)
                merged.pop("stream_options", None)
                merged["response_format"] = json_tools.response_format(tools, tool_choice)
                sent = json_tools.with_tools_prompt(messages, tools, tool_choice)
                return {"model": self.model, "messages": [_wire(m) for m in sent], **merged}, True
            plain = json_tools.without_native_tool_calls(messages)
            return {"model": self.model, "messages": [_wire(m) for m in plain], **merged}, False
        request = {"model": self.model, "messages": [_wire(message) for message in messages], **merged}
        if tools:
            request["tools"] = tools
        return request, False

    def _response(
        self,
        completion: Any,
        json_tools_offered: Sequence[dict[str, Any]] | None,
        request: dict[str, Any],
        status: int | None = 200,
    ) -> ModelResponse:
        data = completion.model_dump() if hasattr(completion, "model_dump") else dict(completion)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise self._fault("returned no choices", status=status, body=data)
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise self._fault("returned a choice without a message", status=status, body=data)
        if json_tools_offered is not None:
            cut_off = choice.get("finish_reason") == "length"
            reply = json_tools.parse_tool_json(message.get("content"), json_tools_offered, cut_off=cut_off)
        else:
            reply = self._reply(message, choice.get("finish_reason"), status)
        model = data.get("model") or self.model
        usage = reported_usage(data.get("usage"), ("prompt_tokens", "completion_tokens"))
        if usage is None:
            usage = usage_bound(request, reply, redact(f"{self.endpoint} ({model})", self.secrets))
        official = self.api_type == "azure" or self.endpoint.startswith(OPENAI_URL)
        cost = cost_of(usage, model, self.model, price=self.price, warn=official)
        return ModelResponse(reply, usage, cost=cost, model=model)

    def _reply(self, message: dict[str, Any], finish_reason: Any, status: int | None) -> Message:
        content = self._content(message, status)
        raw_calls = message.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise self._fault("returned tool_calls that are not a list", status=status, body=message)
        calls = [self._tool_call(call, status) for call in raw_calls]
        if finish_reason == "length":
            for call in calls:
                if not _is_json_object(call["function"]["arguments"]):
                    raise self._fault(
                        f"stopped at its token limit (finish_reason 'length') in the middle of a call to "
                        f"{call['function']['name']!r}; raise max_tokens",
                        status=status,
                        body=call["function"]["arguments"],
                    )
        if not calls and not content_str(content):
            raise self._fault(f"returned an empty reply (finish_reason={finish_reason!r})", status=status)
        reply: Message = {"role": "assistant", "content": content}
        if calls:
            reply["tool_calls"] = calls
        return reply

    def _content(self, message: dict[str, Any], status: int | None) -> str | list[dict[str, Any]] | None:
        """The reply's content: text, or a list of content parts; parts that are all text become text."""
        content = message.get("content")
        if content is None and message.get("refusal"):
            content = message["refusal"]
        if content is None or isinstance(content, str):
            return content
        if isinstance(content, list) and all(_is_content_part(part) for part in content):
            if all(part["type"] == "text" for part in content):
                return "".join(part["text"] for part in content)
            return content
        raise self._fault(
            "returned content that is neither text nor a list of content parts", status=status, body=content
        )

    def _tool_call(self, call: Any, status: int | None) -> dict[str, Any]:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            kind = call.get("type") if isinstance(call, dict) else type(call).__name__
            raise self._fault(f"returned a tool call of unsupported type {kind!r}", status=status, body=call)
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        return {
            "id": call.get("id") or json_tools.new_call_id(),
            "type": "function",
            "function": {"name": function.get("name") or "", "arguments": arguments},
        }


def _is_content_part(part: Any) -> bool:
    if not isinstance(part, dict):
        return False
    if part.get("type") == "text":
        return isinstance(part.get("text"), str)
    return part.get("type") == "image_url" and isinstance(part.get("image_url"), dict | str)


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def _response_format(given: Any) -> Any:
    """A ``response_format`` of ``llm_config`` as AG2 sends it: a pydantic model as a strict JSON schema
    (the SDK's own conversion), a bare JSON schema wrapped as one, a format dict (``json_object``,
    ``json_schema``, ``text``) as it is."""
    if isinstance(given, dict):
        if given.get("type") in ("json_object", "json_schema", "text"):
            return given
        from openai.lib._pydantic import _ensure_strict_json_schema

        schema = copy.deepcopy(given)
        strict = _ensure_strict_json_schema(schema, path=(), root=schema)
        return {
            "type": "json_schema",
            "json_schema": {"name": "response_format", "schema": strict, "strict": True},
        }
    if isinstance(given, type) and hasattr(given, "model_json_schema"):
        from openai.lib._parsing._completions import type_to_response_format_param

        return type_to_response_format_param(given)
    return given


def _wire(message: Message) -> Message:
    """A message as the chat completions API takes it: no bookkeeping keys, a role, no tool names."""
    wired = {key: message[key] for key in _MESSAGE_KEYS if message.get(key) is not None}
    wired.setdefault("role", "user")
    if "content" not in wired:
        wired["content"] = None
    if wired["role"] == "tool":
        wired.pop("name", None)
    elif "name" in wired:
        wired["name"] = _API_NAME.sub("_", str(wired["name"]))[:64]
    return wired


_API_NAME = re.compile(r"[\s<|\\/>]")
"""Characters the chat completions API refuses in a message's ``name``."""
