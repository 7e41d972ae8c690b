"""How an agent asks its model for a reply."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from parley.console import release
from parley.engine import current_chat
from parley.events import ModelRequested, ModelResponded
from parley.journal import usage_data
from parley.messages import Message, MessageSequence, Reply, View, check_tool_keys, flatten_for_model
from parley.models.base import ModelClient, ModelError, ModelResponse, is_model_client
from parley.models.streaming import token_sink
from parley.models.usage import UsageSummary
from parley.termination import StopReason

if TYPE_CHECKING:
    from parley.agent import Agent
    from parley.engine import Chat


class ModelReplyMixin:
    """The model reply function of :class:`~parley.agent.ConversableAgent`."""

    name: str
    _name: str
    client: ModelClient | None
    _usage_summary: UsageSummary | None
    _views: dict[Agent, View]

    _oai_system_message: list[Message]
    _tool_schemas: Callable[..., list[dict[str, Any]]]
    _system_messages: Callable[[Chat | None], list[Message]]
    _find_view: Callable[[Agent], View | None]

    def generate_oai_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Ask this agent's model for a reply (``(False, None)`` when the agent has no model)."""
        client = self.client if config is None else _client_or(config, self.client)
        if client is None:
            return False, None
        request = self._model_request(messages, sender)
        tools = self._tool_schemas(messages)
        chat = current_chat.get()
        if chat is None or not (chat.budgets is not None or chat.observes_models or chat.streamers):
            return True, self._reply_from(client.create(request, tools))
        params = self._call_parameters(chat, client, request, tools)
        if params is None:
            return True, None
        if not (chat.observes_models or (chat.streamers and _streams(client))):
            return True, self._reply_from(client.create(request, tools, **params))
        started = self._model_requested(chat, client, request, tools)
        token = token_sink.set(chat.token_sink(self.name) if _streams(client) else None)
        try:
            response = client.create(request, tools, **params)
        finally:
            token_sink.reset(token)
        self._model_responded(chat, client, response, started)
        return True, self._reply_from(response)

    async def a_generate_oai_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, str | dict[str, Any] | None]:
        """Async twin of :meth:`generate_oai_reply`."""
        client = self.client if config is None else _client_or(config, self.client)
        if client is None:
            return False, None
        request = self._model_request(messages, sender)
        tools = self._tool_schemas(messages)
        chat = current_chat.get()
        if chat is None or not (chat.budgets is not None or chat.observes_models or chat.streamers):
            return True, self._reply_from(await client.a_create(request, tools))
        params = self._call_parameters(chat, client, request, tools)
        if params is None:
            return True, None
        if not (chat.observes_models or (chat.streamers and _streams(client))):
            return True, self._reply_from(await client.a_create(request, tools, **params))
        started = self._model_requested(chat, client, request, tools)
        token = token_sink.set(chat.token_sink(self.name) if _streams(client) else None)
        try:
            response = await client.a_create(request, tools, **params)
        finally:
            token_sink.reset(token)
        self._model_responded(chat, client, response, started)
        return True, self._reply_from(response)

    def _call_parameters(
        self, chat: Chat, client: ModelClient, request: Sequence[Message], tools: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """The parameters the chat's budgets set for the call; ``None`` if they forbid it (the chat stops).
        A printing chat's held text is written first: the chat waits for the model next."""
        if chat.holding:
            release()
        if chat.budgets is None:
            return {}
        allowed = chat.budgets.before_model_call(self._name, client, request, tools, chat.state.messages)
        if isinstance(allowed, StopReason):
            chat.note_reply_stop(self, allowed)
            return None
        return allowed

    def _model_requested(
        self, chat: Chat, client: ModelClient, request: Sequence[Message], tools: list[dict[str, Any]]
    ) -> float:
        if chat.observes_models and chat.wants(ModelRequested):
            provider = model_provider(client)
            chat.emit(ModelRequested(self.name, model_name(client), len(request), len(tools), provider))
        return time.perf_counter()

    def _model_responded(
        self, chat: Chat, client: ModelClient, response: ModelResponse, started: float
    ) -> None:
        if not (chat.observes_models and chat.wants(ModelResponded)):
            return
        usage = response.usage
        chat.emit(
            ModelResponded(
                self.name,
                response.model or model_name(client),
                time.perf_counter() - started,
                usage.prompt_tokens,
                usage.completion_tokens,
                response.cost,
                response.cached,
            )
        )

    def _model_request(self, messages: list[Message] | None, sender: Agent | None) -> Sequence[Message]:
        chat = current_chat.get()
        if chat is not None:
            view = chat.views.get(self)  # type: ignore[call-overload]
            if view is not None and messages is view.messages:
                if chat.state.system_messages:
                    return MessageSequence(self._system_messages(chat), view.model_messages)
                return MessageSequence(self._oai_system_message, view.model_messages)
        found = self._find_view(sender) if sender is not None else None
        if messages is None and found is not None:
            messages = found.messages
        if found is not None and messages is found.messages:
            flat = found.model_messages
        else:
            flat = flatten_for_model(messages or [])
        return MessageSequence(self._system_messages(chat), flat)

    @property
    def usage_summary(self) -> UsageSummary:
        """Every model call this agent made, in all its chats."""
        if self._usage_summary is None:
            self._usage_summary = UsageSummary()
        return self._usage_summary

    def _record_usage(self, response: ModelResponse) -> None:
        self.usage_summary.add(response)
        chat = current_chat.get()
        if chat is not None:
            chat.state.usage.add(response)
            if chat.journal is not None:
                chat.journal.usage.append(usage_data(response))
            if chat.budgets is not None:
                chat.budgets.spend_model_call(self._name, response)

    def _reply_from(self, response: ModelResponse) -> str | dict[str, Any]:
        self._record_usage(response)
        message = response.message
        if type(message) is not dict and not isinstance(message, dict):
            model = response.model or model_name(self.client)
            raise TypeError(
                f"{self._name}'s model ({model}) returned a ModelResponse whose message is not a message "
                f"dict such as {{'role': 'assistant', 'content': 'Hello.'}}: {message!r:.80}"
            )
        calls = message.get("tool_calls")
        if calls:
            try:  # as the door checks a message given to a chat
                check_tool_keys(message, "reply")
            except (TypeError, ValueError) as error:
                model = response.model or model_name(self.client)
                raise ModelError(
                    f"{self._name}'s model ({model}) replied with tool calls that are not a list of "
                    f"well-formed calls: {error}"
                ) from None
            for call in calls:
                if not call.get("id"):  # a server that gives none: results answer a call by its id
                    call["id"] = _new_call_id()
            return Reply(content=message.get("content"), role="assistant", tool_calls=calls)
        return message.get("content") or ""


def _streams(client: Any) -> bool:
    """Whether the client's requests ask for a streamed reply (``"stream": True`` in ``llm_config``, or
    in one of its configs)."""
    streams = getattr(client, "streams", None)
    if isinstance(streams, bool):
        return streams
    params = getattr(client, "params", None)
    return isinstance(params, dict) and bool(params.get("stream"))


def model_name(client: Any) -> str:
    """The name of a client's model, for events (of a config list, the model the next request is sent
    to first)."""
    model = getattr(client, "model", None) or getattr(client, "next_model", None)
    if model is None:
        configs = getattr(client, "config_list", None)
        if configs:
            model = configs[0].get("model")
    return str(model or type(client).__name__)


def model_provider(client: Any) -> str:
    """Who serves a client's model, as OpenTelemetry's GenAI conventions name it: its ``provider``, or
    ``_OTHER`` (a model of the application's own, a scripted one)."""
    provider = getattr(client, "provider", None)
    return provider if isinstance(provider, str) and provider else "_OTHER"


def _new_call_id() -> str:
    from parley.models.json_tools import new_call_id

    return new_call_id()


def _client_or(config: Any, default: ModelClient | None) -> ModelClient | None:
    """A reply function's ``config`` when it is a model client, else the agent's own model."""
    return config if is_model_client(config) else default
