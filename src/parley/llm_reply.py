"""How an agent asks its model for a reply."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from parley.engine import current_chat
from parley.journal import usage_data
from parley.messages import Message, MessageSequence, Reply, View, flatten_for_model
from parley.models.base import ModelClient, ModelResponse
from parley.models.usage import UsageSummary
from parley.termination import StopReason

if TYPE_CHECKING:
    from parley.agent import Agent
    from parley.engine import Chat


class ModelReplyMixin:
    """The model reply function of :class:`~parley.agent.ConversableAgent`."""

    name: str
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
        if chat is not None and chat.budgets is not None:
            allowed = chat.budgets.before_model_call(self.name, client, request, tools, chat.state.messages)
            if isinstance(allowed, StopReason):
                chat.note_reply_stop(self, allowed)
                return True, None
            return True, self._reply_from(client.create(request, tools, **allowed))
        return True, self._reply_from(client.create(request, tools))

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
        if chat is not None and chat.budgets is not None:
            allowed = chat.budgets.before_model_call(self.name, client, request, tools, chat.state.messages)
            if isinstance(allowed, StopReason):
                chat.note_reply_stop(self, allowed)
                return True, None
            return True, self._reply_from(await client.a_create(request, tools, **allowed))
        return True, self._reply_from(await client.a_create(request, tools))

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
                chat.budgets.spend_model_call(self.name, response)

    def _reply_from(self, response: ModelResponse) -> str | dict[str, Any]:
        self._record_usage(response)
        message = response.message
        if message.get("tool_calls"):
            return Reply(content=message.get("content"), role="assistant", tool_calls=message["tool_calls"])
        return message.get("content") or ""


def _client_or(config: Any, default: ModelClient | None) -> ModelClient | None:
    """A reply function's ``config`` when it is a model client, else the agent's own model."""
    return config if isinstance(config, ModelClient) else default
