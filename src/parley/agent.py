"""Agents: ``ConversableAgent`` with AG2's classic API, and its reply-function chain.

An agent is a definition (name, prompts, tools, handoffs, model, reply functions, hooks) that any number
of chats use at once. What belongs to one conversation lives in that chat's state. AG2's read APIs on an
agent (``chat_messages``, ``last_message``, ``context_variables``, ``get_context``...) read the chat the
agent is serving, when called from inside one, and otherwise its latest chat (with that peer).
"""

from __future__ import annotations

import copy
import difflib
import functools
import inspect
import itertools
import os
import re
import sys
import types
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from parley.agent_base import Agent, check_protocol_agent
from parley.chat_result import ChatResult
from parley.context_variables import ContextVariables, context_problem
from parley.durable import Durability, chat_id_of, durability
from parley.engine import (
    Alternating,
    Chat,
    RepliesOnReceive,
    attach_partial_result,
    current_chat,
    refuse_async_reply_functions,
    run_sync,
)
from parley.events import ConsolePrinter, Listener, MessageSent
from parley.exceptions import AgentNameConflictError, InvalidCarryOverTypeError
from parley.human_reply import HumanReplyMixin
from parley.limits import Condition
from parley.llm_reply import ModelReplyMixin
from parley.messages import Message, View, as_own, content_str, to_logged, to_message
from parley.models.base import ModelClient
from parley.models.cache import using_cache
from parley.models.config import keeps_tools, model_client_from_llm_config, resolve_llm_config
from parley.models.usage import UsageSummary
from parley.records import Record
from parley.reply_chain import (
    ReplyChain,
    ReplyFunction,
    Trigger,
    compiled_plain_chain,
    function_name,
    matches,
    plain_chain,
    reply_entry,
)
from parley.summary import (
    DEFAULT_SUMMARY_PROMPT,
    SummaryMethod,
    check_summary_method,
    no_reflection_model,
    summarize,
)
from parley.termination import StopKind, StopReason, max_turns_condition
from parley.tool_use import OVER_BUDGET, ToolUseMixin
from parley.tools import Tool, as_tool
from parley.tracing import entry_listeners

if TYPE_CHECKING:
    from parley.group.handoffs import Handoffs
    from parley.run_response import AsyncRunResponse, RunOutcome, RunResponse
    from parley.state import ChatState

_WHITESPACE = re.compile(r"\s")
_Coroutine = types.CoroutineType

HumanInputMode = Literal["ALWAYS", "NEVER", "TERMINATE"]
HUMAN_INPUT_MODES = ("ALWAYS", "NEVER", "TERMINATE")
DEFAULT_MAX_CONSECUTIVE_AUTO_REPLY = 100
HOOKABLE_METHODS = (
    "update_agent_state",
    "process_last_received_message",
    "process_all_messages_before_reply",
    "process_message_before_send",
)


def default_is_termination_msg(message: Message) -> bool:
    """AG2's default: the message's content is exactly ``TERMINATE``."""
    content = message.get("content")
    return content == "TERMINATE" if type(content) is str else content_str(content) == "TERMINATE"


class ConversableAgent(HumanReplyMixin, ModelReplyMixin, ToolUseMixin, Agent):
    """An agent that converses: it replies through an ordered chain of reply functions.

    The default chain, first to last: the termination and human-input check, legacy ``function_call``
    execution, tool execution, the model. Functions added with :meth:`register_reply` go before them (at
    ``position=0``).

    Args:
        name: the agent's name.
        system_message: sent verbatim as the model request's system message.
        is_termination_msg: ``(message) -> bool``; a received message for which it is true ends the chat
            (after asking the human, in ``ALWAYS`` and ``TERMINATE`` modes).
        max_consecutive_auto_reply: how many times in a row the agent may reply without a human.
        human_input_mode: ``"ALWAYS"``, ``"TERMINATE"`` (ask when the chat would end) or ``"NEVER"``.
        function_map: ``{name: function}`` the agent executes when another agent calls them.
        code_execution_config: accepted for AG2 compatibility, but parley does not execute code: with
            anything but ``False``, the first code block the agent replies to is not run, with a warning.
        llm_config: ``False`` for no model, AG2's ``{"config_list": [...], ...}``, or a model client.
        default_auto_reply: the reply when no reply function produces one.
        description: what the agent does, for group chats (defaults to the system message).
        functions: functions the agent offers to its model (as ``register_for_llm``); in swarms and
            group patterns the agent also runs them.
        context_variables: the context the chats this agent starts begin with (a copy each).
        tool_timeout: the time limit, in seconds, of each tool call this agent executes (tools registered
            with their own ``timeout`` keep it); ``None``: no limit.
    """

    DEFAULT_SYSTEM_MESSAGE = "You are a helpful AI Assistant."
    _agent_ids = itertools.count(1)

    # What a new agent starts with unless its constructor says otherwise (kept on the class: instances
    # set their own value when it changes).
    silent: bool | None = None
    _code_execution_config: dict[str, Any] | Literal[False] = False
    _last_chat: Chat | None = None
    _pair_states: dict[Agent, ChatState] | None = None
    """The state of this agent's latest two-agent chat with each peer (``send``/``receive`` go on
    counting its auto-replies, as AG2's counters do)."""
    _llm_tool_schemas: list[dict[str, Any]] | None = None
    _hooks: dict[str, list[Callable[..., Any]]] | None = None
    _handoffs: Handoffs | None = None
    _tools_version = 0
    _runs_own_tools = False
    _usage_summary: UsageSummary | None = None
    _finished_chats: Any = ()

    DEFAULT_CONFIG: Any = False
    """AG2's default ``llm_config``: no model."""
    MAX_CONSECUTIVE_AUTO_REPLY = DEFAULT_MAX_CONSECUTIVE_AUTO_REPLY
    DEFAULT_SUMMARY_PROMPT = DEFAULT_SUMMARY_PROMPT
    DEFAULT_SUMMARY_METHOD = "last_msg"

    def __init__(
        self,
        name: str,
        system_message: str | list[str] | None = DEFAULT_SYSTEM_MESSAGE,
        is_termination_msg: Callable[[Message], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: HumanInputMode = "TERMINATE",
        function_map: dict[str, Callable[..., Any]] | None = None,
        code_execution_config: dict[str, Any] | Literal[False] = False,
        llm_config: Any = None,
        default_auto_reply: str | dict[str, Any] = "",
        description: str | None = None,
        chat_messages: dict[Agent, list[Message]] | None = None,
        silent: bool | None = None,
        context_variables: dict[str, Any] | None = None,
        functions: list[Callable[..., Any]] | Callable[..., Any] | None = None,
        update_agent_state_before_reply: list[Callable[..., Any]] | Callable[..., Any] | None = None,
        tool_timeout: float | None = None,
    ) -> None:
        if human_input_mode not in HUMAN_INPUT_MODES:
            raise ValueError(f"human_input_mode must be one of {HUMAN_INPUT_MODES}, not {human_input_mode!r}")
        if is_termination_msg is not None and not callable(is_termination_msg):
            raise TypeError(
                f"is_termination_msg must be a callable taking a message, not {is_termination_msg!r}"
            )
        if max_consecutive_auto_reply is not None and (
            not isinstance(max_consecutive_auto_reply, int) or max_consecutive_auto_reply < 0
        ):
            raise ValueError(
                f"max_consecutive_auto_reply must be a non-negative int, not {max_consecutive_auto_reply!r}"
            )
        if isinstance(system_message, list):
            system_message = _joined_system_message(system_message)
        elif system_message is not None and not isinstance(system_message, str):
            raise TypeError(
                f"system_message must be a string, a list of strings or None, not {system_message!r}"
            )
        if description is not None and not isinstance(description, str):
            raise TypeError(f"description must be a string or None, not {description!r}")
        if not isinstance(default_auto_reply, str | dict):
            raise TypeError(
                f"default_auto_reply must be a string or a message dict, not {default_auto_reply!r}"
            )
        system_message = system_message or ""
        super().__init__(name, system_message if description is None else description)
        self._oai_system_message: list[Message] = [{"content": system_message, "role": "system"}]
        self._is_termination_msg = is_termination_msg or default_is_termination_msg
        self._max_consecutive_auto_reply = (
            DEFAULT_MAX_CONSECUTIVE_AUTO_REPLY
            if max_consecutive_auto_reply is None
            else max_consecutive_auto_reply
        )
        self.human_input_mode: HumanInputMode = human_input_mode
        self._default_auto_reply = default_auto_reply
        if silent is not None:
            self.silent = silent
        if code_execution_config is not False:
            self._code_execution_config = code_execution_config
        llm_config = resolve_llm_config(llm_config)
        if keeps_tools(llm_config):  # the agent's own copy, which lists its tools
            llm_config = dict(llm_config) if isinstance(llm_config, dict) else llm_config.copy()
        self.llm_config: Any = llm_config or False
        self.client: ModelClient | None = model_client_from_llm_config(llm_config)
        if self.client is not None and _WHITESPACE.search(name):
            raise ValueError(
                f"The name of an agent with a model cannot contain whitespace (model APIs reject such "
                f"names). The name provided is: {name!r}"
            )
        self._views: dict[Agent, View] = {}
        self._loose_auto_replies: defaultdict[Agent | None, int] = defaultdict(int)
        self._max_consecutive_auto_reply_dict: defaultdict[Agent | None, int] = defaultdict(
            _DefaultLimit(self)
        )
        self.reply_at_receive: defaultdict[Agent | None, bool] = defaultdict(bool)
        self._function_map: dict[str, Tool] = {}
        self._llm_tools: dict[str, Tool] = {}
        self._offered: dict[str, dict[str, Any]] = {}
        self._function_style: set[str] = set()
        self._reply_func_list: list[dict[str, Any]] = ReplyChain(
            self._default_replies() if code_execution_config is False else self._replies_noting_code()
        )
        if context_variables is not None and (problem := context_problem(context_variables)) is not None:
            raise TypeError(problem)
        self._context_variables: dict[str, Any] = (
            ContextVariables.empty() if context_variables is None else context_variables
        )
        if tool_timeout is not None and (
            isinstance(tool_timeout, bool)
            or not isinstance(tool_timeout, int | float)
            or not tool_timeout > 0
        ):
            raise ValueError(f"tool_timeout must be a positive number of seconds, not {tool_timeout!r}")
        self.tool_timeout: float | None = tool_timeout
        if (
            self.llm_config
            and keeps_tools(llm_config)
            and (llm_config.get("tools") or llm_config.get("functions"))
        ):
            self._offer_from_llm_config()
        if function_map:
            if not isinstance(function_map, dict):
                raise TypeError(
                    f"function_map must be a dict of functions by name, not {type(function_map).__name__}"
                )
            for tool_name, function in function_map.items():
                self._function_map[tool_name] = as_tool(function, name=tool_name)
        if functions is not None:  # offered to the model only, as in AG2 (swarms run them: see SwarmAgent)
            if self.client is None:
                raise ValueError(
                    f"{name} has no model (llm_config={llm_config!r}): functions= offers functions to the "
                    "agent's model. For an agent that runs them, use function_map={name: function} or "
                    "register_for_execution"
                )
            for function in [functions] if callable(functions) else functions or []:
                self._add_llm_tool(as_tool(function))
        if update_agent_state_before_reply is not None:
            self._add_state_functions(update_agent_state_before_reply)
        if chat_messages:
            for peer, messages in chat_messages.items():
                view = self._view(peer)
                for message in messages:
                    view.add(message)

    def _add_state_functions(self, functions: list[Callable[..., Any]] | Callable[..., Any] | None) -> None:
        """Call each function before every reply of this agent: ``(agent, messages)``, or no arguments;
        an ``UPDATE_SYSTEM_MESSAGE`` rewrites the system message."""
        for function in [functions] if callable(functions) else functions or []:
            if not callable(function):
                raise TypeError(f"update_agent_state_before_reply takes callables, not {function!r}")
            self.register_hook("update_agent_state", _as_state_hook(function))

    _default_reply_entries: tuple[dict[str, Any], ...] = ()

    @classmethod
    def _default_replies(cls) -> tuple[dict[str, Any], ...]:
        """The built-in chain, first to last, shared by every agent (entries are never changed in place)."""
        if not ConversableAgent._default_reply_entries:
            agent = ConversableAgent
            ConversableAgent._default_reply_entries = tuple(
                reply_entry([Agent, None], func, None, None, False, twin)
                for func, twin in (
                    (agent.check_termination_and_human_reply, agent._check_in_async_chain),
                    (agent.generate_function_call_reply, agent.a_generate_function_call_reply),
                    (agent.generate_tool_calls_reply, agent.a_generate_tool_calls_reply),
                    (agent.generate_oai_reply, agent.a_generate_oai_reply),
                )
            )
        return ConversableAgent._default_reply_entries

    @property
    def code_executor(self) -> None:
        """AG2's code executor of the agent: always ``None``, as parley executes no code."""
        return None

    @classmethod
    def _replies_noting_code(cls) -> tuple[dict[str, Any], ...]:
        """The built-in chain of an agent asked to execute code: where AG2 runs the code blocks of the
        last message, :meth:`_note_code_not_run` says that parley does not."""
        *before, model = cls._default_replies()
        entry = reply_entry([Agent, None], ConversableAgent._note_code_not_run, None, None, False, None)
        return (*before, entry, model)

    def _note_code_not_run(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, None]:
        """Warn, once per agent, when the message it replies to has a code block, which AG2 would run
        (this agent was given a ``code_execution_config``) and parley does not; never a reply."""
        if self._told_code_not_run:
            return False, None
        message = self._last_received(messages, sender)
        content = message.get("content") if message is not None else None
        if isinstance(content, str) and "```" in content:
            self._told_code_not_run = True
            text = (
                f"{self.name} received a code block and does not run it: parley does not execute code "
                "(code_execution_config is accepted so that AG2 code runs; give code_execution_config=False "
                "to say no code is to run)"
            )
            warnings.warn(text, UserWarning, stacklevel=_outside_parley())
            self._notice(text)
        return False, None

    _told_code_not_run = False

    # ------------------------------------------------------------------------------------------------
    # identity

    @property
    def system_message(self) -> str:
        """The system message sent with every model request (in the chat being served, if it changed it)."""
        chat = current_chat.get()
        if chat is not None:
            changed = chat.state.system_messages.get(self.name)
            if changed is not None:
                return changed
        return str(self._oai_system_message[0]["content"])

    def update_system_message(self, system_message: str) -> None:
        """Replace the system message, from the next model request on.

        Inside a chat (a tool, a hook, ``UPDATE_SYSTEM_MESSAGE``) it changes the agent's system message in
        that chat only; outside, for the chats it takes part in from then on.
        """
        if not isinstance(system_message, str):
            raise TypeError(f"system_message must be a string, not {type(system_message).__name__}")
        chat = current_chat.get()
        if chat is not None and chat.by_name.get(self.name) is self:
            chat.state.system_messages[self.name] = system_message
        else:
            self._oai_system_message[0] = {"content": system_message, "role": "system"}

    def _system_messages(self, chat: Chat | None) -> list[Message]:
        if chat is not None:
            changed = chat.state.system_messages.get(self.name)
            if changed is not None:
                return [{"content": changed, "role": "system"}]
        return self._oai_system_message

    def max_consecutive_auto_reply(self, sender: Agent | None = None) -> int:
        """The auto-reply limit, for ``sender`` if given."""
        limits = self._max_consecutive_auto_reply_dict
        if sender is None or sender not in limits:
            return self._max_consecutive_auto_reply
        return limits[sender]

    def update_max_consecutive_auto_reply(self, value: int, sender: Agent | None = None) -> None:
        """Change the auto-reply limit, for all senders or one."""
        if sender is None:
            self._max_consecutive_auto_reply = value
            for key in self._max_consecutive_auto_reply_dict:
                self._max_consecutive_auto_reply_dict[key] = value
        else:
            self._max_consecutive_auto_reply_dict[sender] = value

    def reset_consecutive_auto_reply_counter(self, sender: Agent | None = None) -> None:
        """Reset the auto-reply counter (in the chat being served, or the latest), for all senders or one."""
        chat = current_chat.get() or self._last_chat
        if chat is not None:
            chat.state.auto_replies.pop(self.name, None)
        if sender is None:
            self._loose_auto_replies.clear()
        else:
            self._loose_auto_replies[sender] = 0

    def _auto_replies(self, sender: Agent | None) -> tuple[dict[Any, int], Any]:
        """The auto-reply counters to use and this agent's key in them: the chat's, inside a chat."""
        chat = current_chat.get()
        if chat is not None:
            return chat.state.auto_replies, self.name
        return self._loose_auto_replies, sender

    # ------------------------------------------------------------------------------------------------
    # views of conversations

    def _find_view(self, peer: Agent) -> View | None:
        """This agent's view of its conversation with ``peer``: in the chat being served, else the latest."""
        chat = current_chat.get()
        if chat is not None and chat.peers.get(self) is peer:
            return chat.views[self]
        return self._views.get(peer)

    def _view(self, peer: Agent) -> View:
        """Like :meth:`_find_view`, starting an empty view if there is none."""
        view = self._find_view(peer)
        if view is None:
            view = self._views[peer] = View(for_model=self.client is not None)
        return view

    def _joined(self, chat: Chat) -> None:
        """Point this agent's read APIs at ``chat``, its latest."""
        peer = chat.peers[self]
        self._views[peer] = chat.views[self]
        self._last_chat = chat
        if isinstance(peer, ConversableAgent) and chat.peers.get(peer) is self:  # a two-agent chat
            if self._pair_states is None:
                self._pair_states = {}
            self._pair_states[peer] = chat.state

    @property
    def chat_messages(self) -> defaultdict[Agent, list[Message]]:
        """``{peer: messages}``: this agent's view of its latest conversation with each peer; inside a
        swarm or group pattern, of that one only, whatever other swarms the agent serves at once."""
        views = dict(self._views)
        chat = current_chat.get()
        if chat is not None and self in chat.views:
            peer = chat.peers[self]
            if getattr(peer, "_runs_swarm", False):  # another swarm's manager: another chat at once
                views = {
                    other: view for other, view in views.items() if not getattr(other, "_runs_swarm", False)
                }
            views[peer] = chat.views[self]
        return defaultdict(list, {peer: view.messages for peer, view in views.items()})

    def _view_messages(self, sender: Agent | None) -> list[Message]:
        return self._view(sender).messages if sender is not None else []

    def chat_messages_for_summary(self, agent: Agent) -> list[Message]:
        """The messages of the conversation with ``agent``."""
        return self._view(agent).messages

    def last_message(self, agent: Agent | None = None) -> Message | None:
        """The last message of the conversation with ``agent`` (the only one, if ``agent`` is None)."""
        chat = current_chat.get()
        if agent is None and chat is not None and self in chat.views:
            agent = chat.peers[self]
        if agent is None:
            if not self._views:
                return None
            if len(self._views) > 1:
                raise ValueError(
                    "more than one conversation found: pass the agent whose last message you want"
                )
            view = next(iter(self._views.values()))
        else:
            if agent not in self._views and not (chat is not None and chat.peers.get(self) is agent):
                raise KeyError(f"{self.name} has had no conversation with {agent.name}")
            view = self._view(agent)
        return view.messages[-1] if view.messages else None

    def clear_history(
        self, recipient: Agent | None = None, nr_messages_to_preserve: int | None = None
    ) -> None:
        """Forget the conversation with ``recipient`` (with everyone, if None).

        Earlier ``ChatResult.chat_history`` lists are left untouched.
        """
        peers = list(self._views) if recipient is None else [recipient]
        for peer in peers:
            old = self._views.get(peer)
            view = self._views[peer] = View()
            if old is not None and nr_messages_to_preserve:
                for message in old.messages[-nr_messages_to_preserve:]:
                    view.add(message)

    # ------------------------------------------------------------------------------------------------
    # reply functions and hooks

    def register_reply(
        self,
        trigger: Trigger,
        reply_func: ReplyFunction,
        position: int = 0,
        config: Any = None,
        reset_config: Callable[[Any], None] | None = None,
        *,
        ignore_async_in_sync_chat: bool = False,
        remove_other_reply_funcs: bool = False,
        async_twin: ReplyFunction | None = None,
    ) -> None:
        """Add a reply function ``(recipient, messages, sender, config) -> (final, reply)``.

        It is consulted at ``position`` in the chain (0: first) for senders matching ``trigger``: a class,
        an agent, an agent name, a callable ``(sender) -> bool``, a list of these, or ``None`` (no sender).
        Returning ``(True, reply)`` makes ``reply`` final; ``(True, None)`` ends the chat with nothing sent.
        An async function runs in async chats; ``ignore_async_in_sync_chat`` lets sync chats skip it.
        """
        if not isinstance(position, int) or position < 0:
            raise ValueError(f"position must be a non-negative int, not {position!r}")
        entry = reply_entry(trigger, reply_func, config, reset_config, ignore_async_in_sync_chat, async_twin)
        if remove_other_reply_funcs:
            self._reply_func_list.clear()
        self._reply_func_list.insert(position, entry)

    def replace_reply_func(self, old_reply_func: ReplyFunction, new_reply_func: ReplyFunction) -> None:
        """Put ``new_reply_func`` where ``old_reply_func`` was registered."""
        for index, entry in enumerate(self._reply_func_list):
            if entry["reply_func"] == old_reply_func:
                self._reply_func_list[index] = {
                    **entry,
                    "reply_func": new_reply_func,
                    "async_twin": None,
                    "is_async": inspect.iscoroutinefunction(new_reply_func),
                }

    @property
    def hook_lists(self) -> dict[str, list[Callable[..., Any]]]:
        """The hooks registered for each of :data:`HOOKABLE_METHODS`."""
        if self._hooks is None:
            self._hooks = {method: [] for method in HOOKABLE_METHODS}
        return self._hooks

    def register_hook(self, hookable_method: str, hook: Callable[..., Any]) -> None:
        """Add a hook to one of :data:`HOOKABLE_METHODS`."""
        if hookable_method not in self.hook_lists:
            raise ValueError(f"unknown hookable method {hookable_method!r}; known: {HOOKABLE_METHODS}")
        if not callable(hook):
            raise TypeError(f"a hook must be callable, not {hook!r:.60}")
        if hook in self.hook_lists[hookable_method]:
            raise ValueError(f"{hook!r} is already registered for {hookable_method}")
        self.hook_lists[hookable_method].append(hook)

    def _async_reply_functions_unusable_in_sync_chat(self) -> list[str]:
        chain = self._reply_func_list
        known = getattr(chain, "sync_unusable", None)
        if known is not None:
            return known
        unusable = [
            function_name(entry["reply_func"])
            for entry in chain
            if entry["is_async"] and not entry["ignore_async_in_sync_chat"]
        ]
        if type(chain) is ReplyChain:
            chain.sync_unusable = unusable
        return unusable

    @property
    def handoffs(self) -> Handoffs:
        """This agent's handoffs in swarms and group patterns: LLM conditions and after-work."""
        if self._handoffs is None:
            from parley.group.handoffs import Handoffs

            self._handoffs = Handoffs()
        return self._handoffs

    def register_handoff(self, condition: Any) -> None:
        """Add one handoff condition (an ``OnCondition`` or ``OnContextCondition``) to :attr:`handoffs`."""
        self.handoffs.add(condition)

    def register_handoffs(self, conditions: list[Any]) -> None:
        """Add handoff conditions to :attr:`handoffs`, in order."""
        self.handoffs.add_many(conditions)

    def register_nested_chats(
        self,
        chat_queue: list[dict[str, Any]],
        trigger: Trigger,
        reply_func_from_nested_chats: str | Callable[..., Any] = "summary_from_nested_chats",
        position: int | None = None,
        use_async: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Reply to senders matching ``trigger`` with the summary of a queue of chats.

        See :func:`parley.nested.register_nested_chats`. By default the nested chats answer right after
        the termination and human check. ``reply_func_from_nested_chats`` may be, as in AG2, your own
        ``(chat_queue, recipient, messages, sender, config) -> (final, reply)`` (a coroutine function with
        ``use_async``) that runs the queue as it wants. The keyword arguments are
        :meth:`register_reply`'s ``config``, ``reset_config`` and ``ignore_async_in_sync_chat``.
        """
        from parley.nested import register_nested_chats

        unknown = sorted(set(kwargs) - {"config", "reset_config", "ignore_async_in_sync_chat"})
        if unknown:
            raise TypeError(
                f"register_nested_chats got unexpected keyword arguments {unknown}; it takes config, "
                "reset_config and ignore_async_in_sync_chat besides its own"
            )

        if reply_func_from_nested_chats != "summary_from_nested_chats" and not callable(
            reply_func_from_nested_chats
        ):
            raise ValueError(
                "reply_func_from_nested_chats must be 'summary_from_nested_chats' or a callable, "
                f"not {reply_func_from_nested_chats!r}"
            )
        custom = None if isinstance(reply_func_from_nested_chats, str) else reply_func_from_nested_chats
        if position is None:
            position = 1 + next(
                index
                for index, entry in enumerate(self._reply_func_list)
                if entry["reply_func"] is ConversableAgent.check_termination_and_human_reply
            )
        register_nested_chats(
            self, chat_queue, trigger, position=position, use_async=use_async, reply_func=custom, **kwargs
        )

    def _prepare_messages(self, messages: list[Message]) -> list[Message]:
        if self._hooks is None:
            return messages
        self.update_agent_state_before_reply(messages)
        return self.process_all_messages_before_reply(self.process_last_received_message(messages))

    def update_agent_state_before_reply(self, messages: list[Message]) -> None:
        """Call the ``update_agent_state`` hooks, in order, as the agent does before each reply."""
        for hook in self.hook_lists["update_agent_state"]:
            hook(self, messages)

    def process_last_received_message(self, messages: list[Message]) -> list[Message]:
        """``messages`` with the last one's text passed through the ``process_last_received_message``
        hooks (not a function call, an ``exit`` or a message with a ``context``), as before each reply."""
        return _last_processed(messages, self.hook_lists["process_last_received_message"])

    def process_all_messages_before_reply(self, messages: list[Message]) -> list[Message]:
        """``messages`` passed through the ``process_all_messages_before_reply`` hooks, as before each
        reply."""
        for hook in self.hook_lists["process_all_messages_before_reply"]:
            messages = hook(messages)
            if not isinstance(messages, list) or not all(isinstance(message, dict) for message in messages):
                raise TypeError(
                    f"the process_all_messages_before_reply hook {function_name(hook)} must return a list "
                    f"of message dicts, not {messages!r:.80}"
                )
        return messages

    def generate_reply(
        self,
        messages: list[Message] | None = None,
        sender: Agent | None = None,
        exclude: Sequence[ReplyFunction] = (),
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        """Reply to ``messages`` (the conversation with ``sender`` by default) through the reply chain.

        Returns the first final reply, ``None`` if a reply function ended the chat, or the default
        auto-reply if no function produced a final reply. Async reply functions are skipped.
        """
        if messages is None:
            if sender is None:
                raise ValueError("generate_reply needs messages or a sender")
            messages = self._view(sender).messages
        elif type(messages) is not list:
            _check_messages(messages)
        if self._hooks is not None:
            messages = self._prepare_messages(messages)
        last = messages[-1] if messages else _NO_MESSAGE
        if exclude or "tool_calls" in last or "function_call" in last:
            chain = plain_chain(self._reply_func_list, _skipped_for(last).union(exclude), sync=True)
        else:
            chain = getattr(self._reply_func_list, "plain_sync", None) or compiled_plain_chain(
                self._reply_func_list, _SKIP_BOTH, sync=True
            )
        for entry, every_sender in chain:
            if every_sender or matches(entry["trigger"], sender):
                reply_func = entry["reply_func"]
                outcome = reply_func(self, messages=messages, sender=sender, config=entry["config"])
                if type(outcome) is not tuple or len(outcome) != 2:
                    outcome = _reply_outcome(reply_func, outcome)
                final, reply = outcome
                if final:
                    if reply is None:
                        self._note_final_none(reply_func)
                    return reply
        return self._default_auto_reply

    async def a_generate_reply(
        self,
        messages: list[Message] | None = None,
        sender: Agent | None = None,
        exclude: Sequence[ReplyFunction] = (),
        **kwargs: Any,
    ) -> str | dict[str, Any] | None:
        """Like :meth:`generate_reply`; async reply functions are awaited, sync ones called."""
        if messages is None:
            if sender is None:
                raise ValueError("a_generate_reply needs messages or a sender")
            messages = self._view(sender).messages
        elif type(messages) is not list:
            _check_messages(messages)
        if self._hooks is not None:
            messages = self._prepare_messages(messages)
        last = messages[-1] if messages else _NO_MESSAGE
        if exclude or "tool_calls" in last or "function_call" in last:
            chain = plain_chain(self._reply_func_list, _skipped_for(last).union(exclude), sync=False)
        else:
            chain = getattr(self._reply_func_list, "plain_async", None) or compiled_plain_chain(
                self._reply_func_list, _SKIP_BOTH, sync=False
            )
        for entry, every_sender in chain:
            if every_sender or matches(entry["trigger"], sender):
                reply_func = entry["reply_func"]
                runner = entry["async_twin"] or reply_func
                outcome = runner(self, messages=messages, sender=sender, config=entry["config"])
                if type(outcome) is not tuple and (
                    type(outcome) is _Coroutine or inspect.isawaitable(outcome)
                ):
                    outcome = await outcome
                if type(outcome) is not tuple or len(outcome) != 2:
                    outcome = _reply_outcome(reply_func, outcome)
                final, reply = outcome
                if final:
                    if reply is None:
                        self._note_final_none(reply_func)
                    return reply
        return self._default_auto_reply

    def _note_final_none(self, reply_func: ReplyFunction) -> None:
        chat = current_chat.get()
        if chat is not None:
            chat.note_reply_stop(
                self,
                StopReason(
                    StopKind.REPLY_FUNC_FINAL_NONE,
                    f"Reply function {function_name(reply_func)} of {self.name} returned a final None",
                    self.name,
                ),
            )

    def _take_turn(self, chat: Chat) -> Any:
        peer = chat.peers[self]
        messages = chat.views[self].messages
        reply: str | dict[str, Any] | None = None
        if self._runs_own_tools and messages and messages[-1].get("tool_calls"):
            reply = self._own_tool_reply(messages)
            if reply is OVER_BUDGET:
                return None
        if reply is None:
            reply = self.generate_reply(messages, peer)
        if reply is not None and self._hooks is not None:
            reply = self._outgoing(reply, peer, chat.silent)
        return reply

    async def _a_take_turn(self, chat: Chat) -> Any:
        peer = chat.peers[self]
        messages = chat.views[self].messages
        reply: str | dict[str, Any] | None = None
        if self._runs_own_tools and messages and messages[-1].get("tool_calls"):
            reply = await self._a_own_tool_reply(messages)
            if reply is OVER_BUDGET:
                return None
        if reply is None:
            reply = await self.a_generate_reply(messages, peer)
        if reply is not None and self._hooks is not None:
            reply = self._outgoing(reply, peer, chat.silent)
        return reply

    def _outgoing(self, reply: Any, recipient: Agent, silent: bool | None) -> Any:
        """A message on its way to ``recipient``, through the ``process_message_before_send`` hooks
        (told ``silent``, unless the agent's own ``silent`` overrides it)."""
        if self._hooks is not None:
            if self.silent is not None:
                silent = self.silent
            for hook in self._hooks["process_message_before_send"]:
                reply = hook(sender=self, message=reply, recipient=recipient, silent=silent)
        return reply

    # ------------------------------------------------------------------------------------------------
    # context variables

    @property
    def context_variables(self) -> dict[str, Any]:
        """The context variables of the chat being served (from inside a chat), else of this agent's latest
        chat, else those its chats begin with. Setting it sets the latter."""
        chat = current_chat.get() or self._last_chat
        return self._context_variables if chat is None else chat.state.context_variables

    @context_variables.setter
    def context_variables(self, context_variables: dict[str, Any]) -> None:
        problem = context_problem(context_variables)
        if problem is not None:
            raise TypeError(problem)
        self._context_variables = context_variables
        self._last_chat = None

    def get_context(self, key: str, default: Any = None) -> Any:
        """A context variable (see :attr:`context_variables`)."""
        return self.context_variables.get(key, default)

    def set_context(self, key: str, value: Any) -> None:
        """Set a context variable (see :attr:`context_variables`)."""
        self.context_variables[key] = value

    # ------------------------------------------------------------------------------------------------
    # sending and receiving

    def send(
        self,
        message: str | dict[str, Any],
        recipient: ConversableAgent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        """Send ``message`` to ``recipient``; it replies if ``request_reply`` (or reply_at_receive) asks.

        The message goes through the ``process_message_before_send`` hooks, and continues the latest
        conversation between the two agents. ``recipient`` may be any agent that implements AG2's
        ``Agent`` protocol (``name``, ``receive``, ``generate_reply``): its ``receive`` gets the message.
        """
        message = self._outgoing(message, recipient, silent)
        if not isinstance(recipient, ConversableAgent):
            self._send_to_protocol_agent(message, recipient)
            recipient.receive(message, self, request_reply, silent)
            return
        chat = recipient._chat_for_sent(self, request_reply, silent)
        chat.append(recipient._first_message_from(self, to_message(message)), self)
        chat.play()

    async def a_send(
        self,
        message: str | dict[str, Any],
        recipient: ConversableAgent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        """Async twin of :meth:`send`."""
        message = self._outgoing(message, recipient, silent)
        if not isinstance(recipient, ConversableAgent):
            self._send_to_protocol_agent(message, recipient)
            await recipient.a_receive(message, self, request_reply, silent)
            return
        chat = recipient._chat_for_sent(self, request_reply, silent)
        chat.append(recipient._first_message_from(self, to_message(message)), self)
        await chat.a_play()

    def receive(
        self,
        message: str | dict[str, Any],
        sender: ConversableAgent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        """Take ``message`` from ``sender`` into this agent's view, and reply if asked to."""
        if not isinstance(sender, ConversableAgent):
            reply = self._reply_to_protocol_agent(message, sender, request_reply, silent)
            if reply is not None:
                self.send(reply, sender, silent=silent)
            return
        chat = self._received(message, sender, request_reply, silent)
        if chat is not None:
            chat.play()

    async def a_receive(
        self,
        message: str | dict[str, Any],
        sender: ConversableAgent,
        request_reply: bool | None = None,
        silent: bool | None = False,
    ) -> None:
        """Async twin of :meth:`receive`."""
        if not isinstance(sender, ConversableAgent):
            check_protocol_agent(sender, "sender")
            self._take_in(message, sender, silent)
            if request_reply is False or (
                request_reply is None and not self.reply_at_receive.get(sender, False)
            ):
                return
            reply = await self.a_generate_reply(self._view(sender).messages, sender)
            if reply is not None:
                await self.a_send(reply, sender, silent=silent)
            return
        chat = self._received(message, sender, request_reply, silent)
        if chat is not None:
            await chat.a_play()

    def _send_to_protocol_agent(self, message: Any, recipient: Any) -> None:
        """Keep a message to an agent outside the engine (AG2's ``Agent`` protocol) in this agent's view."""
        check_protocol_agent(recipient, "recipient")
        self._view(recipient).add(as_own(to_logged(message, self.name, parameter="message")))
        self.reply_at_receive[recipient] = True

    def _reply_to_protocol_agent(
        self, message: Any, sender: Any, request_reply: bool | None, silent: bool | None
    ) -> Any:
        """Take a message from an agent outside the engine into this agent's view; the reply, if asked."""
        check_protocol_agent(sender, "sender")
        self._take_in(message, sender, silent)
        if request_reply is False or (request_reply is None and not self.reply_at_receive.get(sender, False)):
            return None
        return self.generate_reply(self._view(sender).messages, sender)

    def _chat_for_sent(
        self, sender: ConversableAgent, request_reply: bool | None, silent: bool | None
    ) -> Chat:
        """The chat a message ``sender`` sends this agent goes on in: their latest conversation."""
        return sender._raw_chat(self, request_reply, silent)

    def _raw_chat(self, recipient: ConversableAgent, request_reply: bool | None, silent: bool | None) -> Chat:
        requested = None if request_reply is None else bool(request_reply)
        rule = RepliesOnReceive(self, recipient, requested=requested)
        return self._conversation(recipient, rule, silent)

    def _received(
        self,
        message: str | dict[str, Any],
        sender: ConversableAgent,
        request_reply: bool | None,
        silent: bool | None,
    ) -> Chat | None:
        self._take_in(message, sender, silent)
        requested = request_reply if request_reply is not None else self.reply_at_receive[sender]
        if not requested:
            return None
        chat = self._conversation(sender, RepliesOnReceive(sender, self, requested=True), silent)
        chat.last_speaker = sender
        chat.state.last_speaker = sender.name
        return chat

    def _take_in(self, message: Any, sender: Agent, silent: bool | None) -> None:
        """Keep a message received outside a chat in this agent's view, printed unless ``silent``
        (as AG2's ``receive`` prints it)."""
        logged = to_logged(message, sender.name, parameter="message")
        view = self._view(sender)
        view.add(logged)
        if not silent:
            ConsolePrinter()(MessageSent(sender.name, self.name, logged, len(view.messages) - 1))

    def _conversation(self, peer: ConversableAgent, rule: RepliesOnReceive, silent: bool | None) -> Chat:
        """A chat continuing this agent's latest conversation with ``peer`` (``send``/``receive``)."""
        views = {self: self._view(peer), peer: peer._view(self)}
        chat = Chat({self: peer, peer: self}, rule, silent=bool(silent), report_stop=False, views=views)
        previous = None if self._pair_states is None else self._pair_states.get(peer)
        if previous is not None:
            chat.state.auto_replies.update(previous.auto_replies)
        self._joined(chat)
        peer._joined(chat)
        return chat

    # ------------------------------------------------------------------------------------------------
    # two-agent chats

    def initiate_chat(
        self,
        recipient: ConversableAgent,
        message: str | dict[str, Any] | Callable[..., Any] | None = None,
        max_turns: int | None = None,
        summary_method: SummaryMethod = "last_msg",
        summary_args: dict[str, Any] | None = None,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        *,
        store: Any = None,
        chat_id: str | None = None,
        listeners: Sequence[Listener] = (),
        stop_when: Condition | Sequence[Condition] | None = None,
        trace: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Start a chat with ``recipient`` with ``message``, and run it until a rule ends it.

        Args:
            recipient: the agent to talk to.
            message: a string, a message dict, or ``(sender, recipient, context) -> message``; ``None``
                asks the human.
            max_turns: end after both agents spoke this many times (``None``: no limit).
            summary_method: ``"last_msg"``, ``"reflection_with_llm"``, or
                ``(sender, recipient, summary_args) -> str``.
            summary_args: e.g. ``{"summary_prompt": ...}`` for ``reflection_with_llm``.
            clear_history: start from an empty conversation (else continue the latest one between the two).
            silent: do not print the conversation.
            store: keep the chat in this store (a URL such as ``"sqlite:///chats.db"``, or a store
                object): it survives a crash, and the same call continues it (see docs/durability.md).
            chat_id: the chat's id; with ``store``, the chat to continue if it exists.
            listeners: functions that get this chat's events.
            trace: a JSONL file to append this chat's events to (and those of chats started inside it);
                ``parley view`` shows it.
            stop_when: stop conditions and budgets, combined with ``|`` and ``&`` (:mod:`parley.limits`):
                ``MaxTokens(50_000) | MaxCost(0.5) | MaxTime(120)``.
            **kwargs: ``carryover`` (text or list appended to the message as context).

        Returns:
            ChatResult with ``stop_reason`` saying which rule ended the chat.
        """
        recipient = _participant(recipient)
        refuse_async_reply_functions((self, recipient))
        opening = _Opening(
            message, max_turns, summary_method, summary_args, clear_history, silent, kwargs, stop_when, cache
        )
        listeners = entry_listeners(listeners, trace)
        with durability(store, chat_id) as durable, using_cache(cache):
            chat = self._open_chat(recipient, opening, durable, chat_id, listeners)
            if not (durable is not None and durable.finished):
                if chat.state.rounds == 0 and message is None and max_turns != 0:
                    first = run_sync(self._initial_from_human(chat, kwargs, sync=True))
                    if first is not None:
                        chat.append(first, self)
                chat.play()
            return run_sync(self._close_chat(chat, recipient, opening, sync=True))

    async def a_initiate_chat(
        self,
        recipient: ConversableAgent,
        message: str | dict[str, Any] | Callable[..., Any] | None = None,
        max_turns: int | None = None,
        summary_method: SummaryMethod = "last_msg",
        summary_args: dict[str, Any] | None = None,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        *,
        store: Any = None,
        chat_id: str | None = None,
        listeners: Sequence[Listener] = (),
        stop_when: Condition | Sequence[Condition] | None = None,
        trace: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Async twin of :meth:`initiate_chat`; async reply functions, tools and models are awaited."""
        recipient = _participant(recipient)
        opening = _Opening(
            message, max_turns, summary_method, summary_args, clear_history, silent, kwargs, stop_when, cache
        )
        listeners = entry_listeners(listeners, trace)
        with durability(store, chat_id) as durable, using_cache(cache):
            chat = self._open_chat(recipient, opening, durable, chat_id, listeners)
            if not (durable is not None and durable.finished):
                if chat.state.rounds == 0 and message is None and max_turns != 0:
                    first = await self._initial_from_human(chat, kwargs, sync=False)
                    if first is not None:
                        chat.append(first, self)
                await chat.a_play()
            return await self._close_chat(chat, recipient, opening, sync=False)

    def _open_chat(
        self,
        recipient: ConversableAgent,
        opening: _Opening,
        durable: Durability | None,
        chat_id: str | None,
        listeners: Sequence[Listener],
    ) -> Chat:
        if recipient is not self and _is_group_manager(self) and recipient in self.groupchat.agents:  # type: ignore[attr-defined]
            raise ValueError(
                f"{self.name} cannot start its group chat by sending to {recipient.name}: start it from "
                f"the agent, {recipient.name}.initiate_chat({self.name}, ...), or with "
                "initiate_group_chat"
            )
        if recipient.name == self.name and not (recipient is self and _is_group_manager(self)):
            raise AgentNameConflictError(
                f"two agents in one chat share the name {self.name!r}; names must be unique"
            )
        max_turns, message = opening.max_turns, opening.message
        if max_turns is not None and (
            not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 0
        ):
            raise ValueError(f"max_turns must be None or a non-negative int, not {max_turns!r}")
        check_summary_method(opening.summary_method)
        reflects = opening.summary_method == "reflection_with_llm"
        if reflects and self.client is None and recipient.client is None:
            raise ValueError(no_reflection_model(self, recipient))
        if opening.summary_args is not None and not isinstance(opening.summary_args, dict):
            raise TypeError(f"summary_args must be a dict, not {opening.summary_args!r}")
        if message is not None and not (isinstance(message, str | dict) or callable(message)):
            raise TypeError(
                f"message must be a string, a message dict or a callable, not {type(message).__name__}"
            )
        if isinstance(message, dict):
            to_message(message)
        if opening.kwargs and not callable(message):
            _warn_of_mistyped_parameters(opening.kwargs)
        chat = recipient._chat_started_by(
            self,
            max_turns=max_turns,
            clear_history=opening.clear_history or (durable is not None and durable.resuming),
            silent=bool(opening.silent),
            chat_id=chat_id_of(durable, chat_id),
            listeners=listeners,
            stop_when=opening.stop_when,
        )
        chat.stop_event_waits = opening.summary_method == "reflection_with_llm"
        if durable is not None:
            opening_data = message if isinstance(message, str | dict) else None
            kind = "human" if message is None else "given" if opening_data is not None else "function"
            durable.attach(chat, chat.state.shape, [*chat.peers], opening_data, kind, self.name)
        for agent in chat.peers:
            agent._joined(chat)
        if chat.state.rounds == 0 and max_turns != 0 and message is not None:
            initial = self._initial_message(message, recipient, opening.kwargs)
            outgoing = self._outgoing(initial, chat.peers[self], chat.silent)
            chat.append(recipient._first_message_from(self, outgoing), self)
        return chat

    def _first_message_from(self, sender: ConversableAgent, message: Any) -> Any:
        """The first message of a chat ``sender`` starts with this agent, as the chat logs it."""
        return message

    def _initial_message(self, message: Any, recipient: ConversableAgent, kwargs: dict[str, Any]) -> Any:
        if callable(message) and not isinstance(message, str | dict):
            message = message(self, recipient, kwargs)
            if not isinstance(message, str | dict):
                raise TypeError(
                    f"the message callable returned {type(message).__name__}, not a string or dict"
                )
            return message
        return self.generate_init_message(message, **kwargs)

    def generate_init_message(
        self, message: str | dict[str, Any] | None = None, **kwargs: Any
    ) -> str | dict[str, Any]:
        """The first message of a chat this agent starts: ``message`` with the ``carryover`` of earlier
        chats appended as context (``None``: the human is asked for it). ``initiate_chat`` calls it, so a
        subclass may change what a chat starts with.

        Raises:
            TypeError: ``message`` is not a string or a message dict, or the carryover is neither a
                string nor a list.
        """
        if message is None:
            message = run_sync(self._ask_human(">", True))
        if not isinstance(message, str | dict):
            raise TypeError(f"message must be a string or a message dict, not {type(message).__name__}")
        return _with_carryover(message, kwargs.get("carryover"))

    async def a_generate_init_message(
        self, message: str | dict[str, Any] | None = None, **kwargs: Any
    ) -> str | dict[str, Any]:
        """Async twin of :meth:`generate_init_message`."""
        if message is None:
            message = await self._ask_human(">", False)
        if not isinstance(message, str | dict):
            raise TypeError(f"message must be a string or a message dict, not {type(message).__name__}")
        return _with_carryover(message, kwargs.get("carryover"))

    async def _initial_from_human(self, chat: Chat, kwargs: dict[str, Any], *, sync: bool) -> Any:
        """The first message, asked of the human; ``None`` if they typed ``exit``, which ends the chat."""
        reply = await self._ask_human(">", sync, chat)
        if reply == "exit":
            chat.stop(self._human_exit())
            return None
        return _with_carryover(reply, kwargs.get("carryover"))

    def _chat_started_by(
        self,
        initiator: ConversableAgent,
        *,
        max_turns: int | None,
        clear_history: bool,
        silent: bool,
        chat_id: str | None = None,
        listeners: Sequence[Listener] = (),
        stop_when: Any = None,
    ) -> Chat:
        """The chat ``initiator.initiate_chat(self, ...)`` runs; the initiator then appends its message.

        A two-agent chat by default; a group chat manager returns its group chat instead.
        """
        # as AG2: a chat of max_turns leaves neither agent replying on receive afterwards
        initiator.reply_at_receive[self] = self.reply_at_receive[initiator] = max_turns is None
        conditions = [] if max_turns is None else [max_turns_condition(max_turns)]
        views = None if clear_history else {initiator: initiator._view(self), self: self._view(initiator)}
        return Chat(
            {initiator: self, self: initiator},
            Alternating(initiator, self),
            conditions=conditions,
            context_variables=initiator._context_variables.copy(),
            silent=silent,
            listeners=listeners,
            chat_id=chat_id,
            views=views,
            stop_when=stop_when,
        )

    async def _close_chat(
        self, chat: Chat, recipient: ConversableAgent, opening: _Opening, *, sync: bool
    ) -> ChatResult:
        result = chat.result(chat.views[self].messages if self in chat.views else None, cost=False)
        if chat.state.summary is not None:
            result.cost = chat.state.usage.to_dict()
            return result
        token = current_chat.set(chat)
        try:
            summary_args = {"cache": opening.cache, **(opening.summary_args or {})}  # AG2 passes the cache
            summary = await summarize(self, recipient, opening.summary_method, summary_args, sync=sync)
            if sync:
                chat.finish(summary)
            else:
                await chat.a_finish(summary)
        except Exception as error:
            result.cost = chat.state.usage.to_dict()
            attach_partial_result(error, result)
            raise
        finally:
            current_chat.reset(token)
            chat.send_held_stop_event()
        result.summary = summary
        result.cost = chat.state.usage.to_dict()
        return result

    # ------------------------------------------------------------------------------------------------
    # AG2's run API

    def run(
        self,
        recipient: Any = None,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        max_turns: int | None = None,
        summary_method: SummaryMethod = "last_msg",
        summary_args: dict[str, Any] | None = None,
        message: str | dict[str, Any] | Callable[..., Any] | None = None,
        executor_kwargs: dict[str, Any] | None = None,
        tools: Tool | list[Tool] | None = None,
        user_input: bool | None = False,
        msg_to: str | None = "agent",
        **kwargs: Any,
    ) -> RunResponse:
        """Start a chat in a worker thread and return at once; ``response.process()`` prints it as it goes.

        With a ``recipient``, this agent chats with it (``initiate_chat``'s arguments). Without one, a
        ``user`` agent is made for the run: it executes this agent's tools and ``tools``, answers with
        its human if ``user_input`` (else never), ends on a message containing ``TERMINATE``, and either
        sends ``message`` to this agent (``msg_to="agent"``) or receives it (``"user"``).
        ``executor_kwargs`` are that agent's further arguments. Either way, further keyword arguments
        (``stop_when``, ``store``, ``chat_id``...) go to ``initiate_chat``.

        Returns:
            A :class:`~parley.run_response.RunResponse`: its ``messages``, ``summary``, ``cost`` and
            ``last_speaker`` are the chat's once it has finished.
        """
        from parley.run_response import RunResponse

        plan = self._run_plan(
            recipient, clear_history, cache, max_turns, summary_method, summary_args, message, msg_to, kwargs
        )
        executor = None if recipient is not None else self._run_executor(executor_kwargs, user_input)

        def start(listener: Listener) -> RunOutcome:
            with self._run_tools(executor, tools):
                if executor is None:
                    result = self.initiate_chat(recipient, listeners=[listener], **plan)
                elif msg_to == "user":
                    result = self.initiate_chat(executor, listeners=[listener], **plan)
                else:
                    result = executor.initiate_chat(self, listeners=[listener], **plan)
            return self._run_outcome(result, recipient)

        return RunResponse(start, [self] if recipient is None else [self, recipient])

    async def a_run(
        self,
        recipient: Any = None,
        clear_history: bool = True,
        silent: bool | None = False,
        cache: Any = None,
        max_turns: int | None = None,
        summary_method: SummaryMethod = "last_msg",
        summary_args: dict[str, Any] | None = None,
        message: str | dict[str, Any] | Callable[..., Any] | None = None,
        executor_kwargs: dict[str, Any] | None = None,
        tools: Tool | list[Tool] | None = None,
        user_input: bool | None = False,
        msg_to: str | None = "agent",
        **kwargs: Any,
    ) -> AsyncRunResponse:
        """Async twin of :meth:`run`: the chat runs in a task on the running event loop; await the
        response's ``process()`` and attributes."""
        from parley.run_response import AsyncRunResponse

        plan = self._run_plan(
            recipient, clear_history, cache, max_turns, summary_method, summary_args, message, msg_to, kwargs
        )
        executor = None if recipient is not None else self._run_executor(executor_kwargs, user_input)

        async def start(listener: Listener) -> RunOutcome:
            with self._run_tools(executor, tools):
                if executor is None:
                    result = await self.a_initiate_chat(recipient, listeners=[listener], **plan)
                elif msg_to == "user":
                    result = await self.a_initiate_chat(executor, listeners=[listener], **plan)
                else:
                    result = await executor.a_initiate_chat(self, listeners=[listener], **plan)
            return self._run_outcome(result, recipient)

        return AsyncRunResponse(start, [self] if recipient is None else [self, recipient])

    def _run_plan(
        self,
        recipient: Any,
        clear_history: bool,
        cache: Any,
        max_turns: int | None,
        summary_method: SummaryMethod,
        summary_args: dict[str, Any] | None,
        message: Any,
        msg_to: str | None,
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        check_summary_method(summary_method)
        if msg_to not in ("agent", "user", None):
            raise ValueError(f"msg_to must be 'agent' or 'user', not {msg_to!r}")
        plan: dict[str, Any] = {
            "message": message,
            "clear_history": clear_history,
            "cache": cache,
            "max_turns": max_turns,
            "summary_method": summary_method,
            "summary_args": summary_args,
            "silent": True,
        }
        plan.update(kwargs)
        return plan

    def _run_executor(
        self, executor_kwargs: dict[str, Any] | None, user_input: bool | None
    ) -> ConversableAgent:
        """The ``user`` agent of a run without a recipient."""
        arguments = dict(executor_kwargs or {})
        arguments.setdefault("is_termination_msg", _mentions_terminate)
        arguments.setdefault("llm_config", False)
        return ConversableAgent("user", human_input_mode="ALWAYS" if user_input else "NEVER", **arguments)

    @contextmanager
    def _run_tools(
        self, executor: ConversableAgent | None, tools: Tool | list[Tool] | None
    ) -> Iterator[None]:
        """For a run with a ``user`` agent: it executes this agent's tools and ``tools``, which this agent's
        model is offered during the run."""
        extra = [tools] if isinstance(tools, Tool) else list(tools or [])
        if executor is None:
            if extra:
                raise ValueError(
                    "run(tools=...) is for a run without a recipient; register them on the agents"
                )
            yield
            return
        for tool in [*self.tools, *extra]:
            executor.register_for_execution()(tool)
        added = [tool for tool in extra if tool.name not in self._offered]
        for tool in added:
            self.register_for_llm()(tool)
        try:
            yield
        finally:
            for tool in added:
                self._offer(tool.name, None, function_style=tool.name in self._function_style)

    def _run_outcome(self, result: ChatResult, recipient: Any) -> RunOutcome:
        from parley.run_response import RunOutcome

        if recipient is None:
            return RunOutcome(result, self.name)
        last = getattr(recipient, "last_speaker", None)
        if isinstance(last, Agent):
            return RunOutcome(result, last.name)
        history = result.chat_history
        speaker = history[-1].get("name") if history else None
        return RunOutcome(result, recipient.name if speaker == recipient.name else self.name)

    def reset(self) -> None:
        """Forget all conversations, counters and usage."""
        self._usage_summary = None
        self._views.clear()
        self._last_chat = None
        self._pair_states = None
        self._loose_auto_replies.clear()
        self.reply_at_receive.clear()
        for index, entry in enumerate(self._reply_func_list):
            if entry["reset_config"] is not None:
                entry["reset_config"](entry["config"])
            elif entry["init_config"] is not None:
                self._reply_func_list[index] = {**entry, "config": copy.copy(entry["init_config"])}

    def stop_reply_at_receive(self, sender: Agent | None = None) -> None:
        """Stop replying on receive, to ``sender`` or to everyone."""
        if sender is None:
            self.reply_at_receive.clear()
        else:
            self.reply_at_receive[sender] = False

    def initiate_chats(
        self,
        chat_queue: list[dict[str, Any]],
        *,
        store: Any = None,
        chat_id: str | None = None,
        trace: str | os.PathLike[str] | None = None,
    ) -> list[ChatResult]:
        """Run a queue of chats from this agent, one after another, carrying each summary into the next
        (see :func:`parley.nested.initiate_chats`)."""
        from parley.nested import initiate_chats

        queue = self._sent_queue(chat_queue)
        self._finished_chats = initiate_chats(queue, store=store, chat_id=chat_id, trace=trace)
        return self._finished_chats

    async def a_initiate_chats(
        self,
        chat_queue: list[dict[str, Any]],
        *,
        store: Any = None,
        chat_id: str | None = None,
        trace: str | os.PathLike[str] | None = None,
    ) -> dict[Any, ChatResult]:
        """Run a queue of chats from this agent on the event loop, as AG2 does: by ``chat_id`` and
        ``prerequisites``, returning ``{chat_id: ChatResult}``
        (see :func:`parley.nested.a_initiate_chats`)."""
        from parley.nested import a_initiate_chats

        queue = self._sent_queue(chat_queue)
        self._finished_chats = await a_initiate_chats(queue, store=store, chat_id=chat_id, trace=trace)
        return self._finished_chats

    def get_chat_results(self, chat_index: Any = None) -> Any:
        """The results of this agent's last :meth:`initiate_chats` (a list) or :meth:`a_initiate_chats`
        (by ``chat_id``); with ``chat_index``, the one at that index or ``chat_id``."""
        if chat_index is not None:
            return self._finished_chats[chat_index]
        return self._finished_chats

    def _sent_queue(self, chat_queue: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The chats of ``chat_queue``, each sent by this agent."""
        from parley.nested import checked_queue

        return [{"sender": self, **chat} for chat in checked_queue(chat_queue)]

    def get_total_usage(self) -> dict[str, Any] | None:
        """Every model call this agent made since it was created or :meth:`reset`, in AG2's usage shape
        (including cached calls); ``None`` for an agent without a model or that made no call, as in AG2."""
        if self.client is None or self._usage_summary is None or self._usage_summary.empty:
            return None
        return dict(self._usage_summary.to_dict()["usage_including_cached_inference"])

    def get_actual_usage(self) -> dict[str, Any] | None:
        """Every model call this agent made that was not answered from the cache; ``None`` for an agent
        without a model or that made no call."""
        if self.client is None or self._usage_summary is None or self._usage_summary.empty:
            return None
        return dict(self._usage_summary.to_dict()["usage_excluding_cached_inference"])

    def print_usage_summary(self, mode: str | Sequence[str] = ("actual", "total")) -> None:
        """Print this agent's usage and cost: ``"actual"`` (the calls not answered from a cache, which were
        paid for), ``"total"`` (every call), or a list of both, as AG2's ``mode``."""
        modes: list[Any] = list(mode) if isinstance(mode, list | tuple) else [mode]
        if not modes or any(item not in _USAGE_MODES for item in modes):
            raise ValueError(f"mode must be 'actual', 'total' or a list of them, not {mode!r}")
        if self.get_total_usage() is None:
            if self.client is None:
                print(f"No cost incurred from agent '{self.name}'.")
            else:
                print(f"Agent '{self.name}': no usage summary, it has made no model call.")
            return
        for item in modes:
            usage = self.get_actual_usage() if item == "actual" else self.get_total_usage()
            label = _USAGE_MODES[item]
            if usage is None:
                print(f"Agent '{self.name}': {label}: none")
                continue
            print(f"Agent '{self.name}': {label}: cost {usage['total_cost']}")
            for model, counts in usage.items():
                if model != "total_cost":
                    print(f"  {model}: {counts}")


_USAGE_MODES = {
    "actual": "usage without the calls answered from a cache",
    "total": "usage with the calls answered from a cache",
}
"""What :meth:`ConversableAgent.print_usage_summary` prints for each ``mode``."""


def _reply_outcome(reply_func: Any, outcome: Any) -> tuple[Any, Any]:
    """A reply function's ``(final, reply)`` given as a list, or a clear error for anything else."""
    if type(outcome) is list and len(outcome) == 2:
        return outcome[0], outcome[1]
    raise TypeError(
        f"the reply function {function_name(reply_func)} must return (final, reply), such as "
        f"(True, 'text') or (False, None), not {outcome!r:.80}"
    )


def _last_processed(messages: list[Message], hooks: list[Callable[..., Any]]) -> list[Message]:
    """``messages`` with the last one's content passed through ``hooks``, as AG2 does: text or multimodal
    parts, not a function call, an ``"exit"`` or a message with a ``context``."""
    last = messages[-1] if hooks and messages else None
    if last is None or "function_call" in last or "context" in last:
        return messages
    content = last.get("content")
    if not (isinstance(content, list) or (isinstance(content, str) and content != "exit")):
        return messages
    processed = content
    for hook in hooks:
        processed = hook(processed)
        if not isinstance(processed, str | list):
            raise TypeError(
                f"the process_last_received_message hook {function_name(hook)} must return the message's "
                f"text (or its list of content parts), not {processed!r:.80}"
            )
    return messages if processed == content else [*messages[:-1], {**last, "content": processed}]


_TOOL_CALLS_REPLY = ConversableAgent.generate_tool_calls_reply
_FUNCTION_CALL_REPLY = ConversableAgent.generate_function_call_reply
_SKIP_BOTH: frozenset[Any] = frozenset({_TOOL_CALLS_REPLY, _FUNCTION_CALL_REPLY})
"""The built-in reply functions that answer only tool calls or a function call: the reply chain does
not call them for a last message with neither."""
_NO_MESSAGE: Message = {}


def _skipped_for(last: Message) -> frozenset[Any]:
    """Which of :data:`_SKIP_BOTH` have nothing to answer in ``last``."""
    return frozenset(
        function
        for function, key in ((_TOOL_CALLS_REPLY, "tool_calls"), (_FUNCTION_CALL_REPLY, "function_call"))
        if not last.get(key)
    )


_RESERVED_KEYWORDS = ("carryover", "verbose")
"""The extra keywords of ``initiate_chat`` that AG2 reserves."""


@functools.cache
def _chat_parameters() -> tuple[str, ...]:
    """``initiate_chat``'s parameters and AG2's reserved keywords (read once, when a chat is given an
    extra keyword)."""
    parameters = inspect.signature(ConversableAgent.initiate_chat).parameters.values()
    named = [parameter.name for parameter in parameters if parameter.kind is not parameter.VAR_KEYWORD]
    return (*named[1:], *_RESERVED_KEYWORDS)


def _warn_of_mistyped_parameters(kwargs: dict[str, Any]) -> None:
    """Warn of the extra keywords of ``initiate_chat`` that look like a misspelt parameter: as in AG2,
    they are kept for a message callable, so with a text message they change nothing."""
    known = _chat_parameters()
    for keyword in kwargs:
        if keyword in known:
            continue
        close = difflib.get_close_matches(keyword, known, n=1)
        if close:
            warnings.warn(
                f"initiate_chat() got {keyword}=, which is not one of its parameters (extra keywords only "
                f"reach a message callable, and this chat's message is not one); did you mean {close[0]}=?",
                UserWarning,
                stacklevel=4,
            )


@dataclass(slots=True, init=False, repr=False, eq=False)
class _Opening(Record):
    """What ``initiate_chat`` was asked to do."""

    message: Any
    max_turns: int | None
    summary_method: SummaryMethod
    summary_args: dict[str, Any] | None
    clear_history: bool
    silent: bool | None
    kwargs: dict[str, Any]
    stop_when: Any
    cache: Any = None

    def __init__(
        self,
        message: Any,
        max_turns: int | None,
        summary_method: SummaryMethod,
        summary_args: dict[str, Any] | None,
        clear_history: bool,
        silent: bool | None,
        kwargs: dict[str, Any],
        stop_when: Any,
        cache: Any = None,
    ) -> None:
        self.message = message
        self.max_turns = max_turns
        self.summary_method = summary_method
        self.summary_args = summary_args
        self.clear_history = clear_history
        self.silent = silent
        self.kwargs = kwargs
        self.stop_when = stop_when
        self.cache = cache


def _mentions_terminate(message: Message) -> bool:
    """The termination check of a run's ``user`` agent: the message's text contains ``TERMINATE``."""
    content = message.get("content")
    return "TERMINATE" in (content_str(content) if isinstance(content, str | list | None) else str(content))


def _participant(recipient: Any) -> ConversableAgent:
    """The chat participant for ``recipient``: itself, or a stand-in for an AG2-protocol agent."""
    if isinstance(recipient, ConversableAgent):
        return recipient
    check_protocol_agent(recipient, "recipient")
    from parley.protocol_peer import ProtocolPeer

    return ProtocolPeer(recipient)


def _is_group_manager(agent: ConversableAgent) -> bool:
    from parley.groupchat import GroupChatManager

    return isinstance(agent, GroupChatManager)


def _with_carryover(message: Any, carryover: Any) -> Any:
    if not carryover:
        return message
    if not isinstance(carryover, str | list):
        raise InvalidCarryOverTypeError(
            f"carryover must be a string or a list of strings, not {type(carryover).__name__}"
        )
    if isinstance(carryover, list):
        carryover = "\n".join(
            content_str(item.get("content")) if isinstance(item, dict) else str(item) for item in carryover
        )
    context = f"\nContext: \n{carryover}"
    if isinstance(message, str):
        return message + context
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return {**message, "content": content + context}
    if isinstance(content, list):  # parts: as AG2, the context is a text part before them
        return {**message, "content": [{"type": "text", "text": context}, *content]}
    return message


class _DefaultLimit:
    """What a sender without a limit of its own gets: the agent's limit, read when asked. It holds the
    agent weakly, so that an agent is not in a reference cycle through its own dict and an agent nobody
    uses any more (a swarm's manager, say) is freed at once."""

    __slots__ = ("_agent",)

    def __init__(self, agent: ConversableAgent) -> None:
        self._agent = weakref.ref(agent)

    def __call__(self) -> int:
        agent = self._agent()
        return 0 if agent is None else agent._max_consecutive_auto_reply


def _check_messages(messages: Any) -> None:
    """Fail, naming it, unless ``messages`` is a list of message dicts (or another sequence of them)."""
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of message dicts, not {messages!r:.80}")
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TypeError(f"messages[{index}] must be a message dict, not {message!r:.80}")


def _outside_parley() -> int:
    """The ``stacklevel`` of the first caller outside parley, for a warning about what its code asked."""
    level = 2
    frame = sys._getframe(2)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        level, frame = level + 1, frame.f_back
    return level


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _as_state_hook(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` as an ``(agent, messages)`` hook, also when it takes no arguments."""
    try:
        takes_nothing = not inspect.signature(function).parameters
    except (TypeError, ValueError):
        return function
    if not takes_nothing:
        return function

    def hook(agent: ConversableAgent, messages: list[Message]) -> None:
        function()

    return hook


def _joined_system_message(parts: list[Any]) -> str:
    """A system message given as a list of strings, as one string (one part per line)."""
    for index, part in enumerate(parts):
        if not isinstance(part, str):
            raise TypeError(f"system_message[{index}] must be a string, not {part!r}")
    return "\n".join(parts)
