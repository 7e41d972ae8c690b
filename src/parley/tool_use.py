"""How an agent offers tools to its model and executes the tool calls it receives."""

from __future__ import annotations

import inspect
import json
import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from parley.console import release
from parley.coroutines import run_sync
from parley.engine import current_chat
from parley.events import ContextUpdated, ToolExecuting, ToolFinished
from parley.journal import handoff_data, handoff_from_data
from parley.messages import Message, Reply
from parley.models.base import ModelClient
from parley.models.config import keeps_tools
from parley.tool_calls import (
    HandoffCheck,
    ToolOutcome,
    a_run_tool_calls,
    handoff_refused,
    on_private_loop,
    result_text,
    run_only_call,
    run_tool_calls,
)
from parley.tools import Tool, ToolResult, as_tool

if TYPE_CHECKING:
    from parley.agent import Agent, ConversableAgent
    from parley.engine import Chat
    from parley.group.handoffs import Handoffs


OVER_BUDGET: dict[str, Any] = {}
"""What :meth:`ToolUseMixin._own_tool_reply` returns when a budget forbids the tool calls (no reply)."""


class ToolUseMixin:
    """Tool registration and the tool-execution reply function of :class:`~parley.agent.ConversableAgent`."""

    name: str
    _name: str
    client: ModelClient | None
    llm_config: Any
    _context_variables: dict[str, Any]
    _function_map: dict[str, Tool]
    _llm_tools: dict[str, Tool]
    _offered: dict[str, dict[str, Any]]
    _function_style: set[str]
    _llm_tool_schemas: list[dict[str, Any]] | None
    _handoffs: Handoffs | None
    _tools_version: int
    tool_timeout: float | None

    _view_messages: Callable[[Agent | None], list[Message]]

    def generate_tool_calls_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Run the tool calls of the last message with this agent's functions, and reply with the results."""
        calls = self._pending_tool_calls(messages, sender)
        if not calls:
            return False, None
        chat = current_chat.get()
        if chat is not None and chat.budgets is not None and self._over_budget(chat, calls):
            return True, None
        options = self._tool_options(chat, calls, None)
        outcomes = run_tool_calls(calls, self._function_map, self._context_of(chat), **options)
        return True, self._tool_reply(outcomes, chat)

    async def a_generate_tool_calls_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Async twin of :meth:`generate_tool_calls_reply`: calls run concurrently where they can."""
        calls = self._pending_tool_calls(messages, sender)
        if not calls:
            return False, None
        chat = current_chat.get()
        if chat is not None and chat.budgets is not None and self._over_budget(chat, calls):
            return True, None
        options = self._tool_options(chat, calls, None)
        outcomes = await a_run_tool_calls(calls, self._function_map, self._context_of(chat), **options)
        return True, self._tool_reply(outcomes, chat)

    def generate_function_call_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Run the legacy ``function_call`` of the last message and reply with a ``role: "function"``
        message (``(False, None)`` when the last message has none)."""
        if messages and "function_call" not in messages[-1]:
            return False, None
        call = self._pending_function_call(messages, sender)
        if call is None:
            return False, None
        _, result = self.execute_function(call)
        return True, _as_function_message(result)

    async def a_generate_function_call_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Async twin of :meth:`generate_function_call_reply`."""
        call = self._pending_function_call(messages, sender)
        if call is None:
            return False, None
        _, result = await self.a_execute_function(call)
        return True, _as_function_message(result)

    def _pending_function_call(self, messages: list[Message] | None, sender: Agent | None) -> Any:
        if messages is None:
            messages = self._view_messages(sender)
        if not messages:
            return None
        return messages[-1].get("function_call") or None

    def execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> tuple[bool, dict[str, Any]]:
        """Run one call (``{"name": ..., "arguments": "<JSON>"}``) with this agent's functions.

        Returns:
            ``(success, {"name": ..., "role": "function", "content": ...})``: the content is what the
            function returned, or an ``Error: ...`` text (unknown function, bad arguments, or what it
            raised).
        """
        prepared = self._prepare_call(func_call, call_id)
        if isinstance(prepared, dict):
            return False, prepared
        tool, arguments, name = prepared
        self._announce_execution(name, arguments, call_id, verbose)
        try:
            content = tool.func(**arguments)
            if inspect.isawaitable(content):
                content = on_private_loop(_awaited(content))
        except Exception as error:
            return False, {"name": name, "role": "function", "content": f"Error: {error}"}
        return True, {"name": name, "role": "function", "content": content}

    async def a_execute_function(
        self, func_call: dict[str, Any], call_id: str | None = None, verbose: bool = False
    ) -> tuple[bool, dict[str, Any]]:
        """Async twin of :meth:`execute_function`: an async function is awaited."""
        prepared = self._prepare_call(func_call, call_id)
        if isinstance(prepared, dict):
            return False, prepared
        tool, arguments, name = prepared
        self._announce_execution(name, arguments, call_id, verbose)
        try:
            content = tool.func(**arguments)
            if inspect.isawaitable(content):
                content = await content
        except Exception as error:
            return False, {"name": name, "role": "function", "content": f"Error: {error}"}
        return True, {"name": name, "role": "function", "content": content}

    def _prepare_call(
        self, func_call: dict[str, Any], call_id: str | None
    ) -> tuple[Tool, dict[str, Any], str] | dict[str, Any]:
        """The tool and keyword arguments of a call, or the function message saying why it cannot run."""
        if not isinstance(func_call, dict):
            raise TypeError(f"func_call must be a dict with 'name' and 'arguments', not {func_call!r}")
        name = func_call.get("name") or ""
        tool = self._function_map.get(name)
        if tool is None:
            return {"name": name, "role": "function", "content": f"Error: Function {name} not found."}
        try:
            arguments = tool.parse_arguments(func_call.get("arguments"))
        except ValueError as error:
            return {"name": name, "role": "function", "content": f"Error: {error}"}
        chat = current_chat.get()
        context = self._context_of(chat)
        return tool, tool.call_arguments(arguments, context, call_id), name

    def _announce_execution(
        self, name: str, arguments: dict[str, Any], call_id: str | None, verbose: bool
    ) -> None:
        chat = current_chat.get()
        if chat is not None and chat.listeners and chat.wants(ToolExecuting):
            chat.emit(ToolExecuting(self.name, name, json.dumps(arguments, default=str), call_id))
            if chat.holding:
                release()
        elif verbose:
            print(f">>>>>>>> EXECUTING FUNCTION {name}... Input arguments: {arguments}")

    _runs_own_tools = False
    """Whether the agent runs its own tool calls, first thing in its next turn (agents of a swarm)."""

    def _own_tool_reply(
        self, messages: list[Message], calls: list[dict[str, Any]] | None = None
    ) -> dict[str, Any] | None:
        """Run the tool calls of this agent's own last message (or ``calls``); ``None`` if it has none
        pending, :data:`OVER_BUDGET` if a budget forbids running them.

        ``context_variables`` is injected, context updates are applied, and a handoff a tool asks for
        is kept for the chat's next-speaker rule (the first valid one wins; later ones are answered as
        not taken; one naming no agent of the chat is an error).
        """
        reply: dict[str, Any] | None = run_sync(self._run_own_calls(messages, calls, sync=True))
        return reply

    async def _a_own_tool_reply(self, messages: list[Message]) -> dict[str, Any] | None:
        """Async twin of :meth:`_own_tool_reply`: calls run concurrently where they can."""
        return await self._run_own_calls(messages, None, sync=False)

    async def _run_own_calls(
        self, messages: list[Message], calls: list[dict[str, Any]] | None, *, sync: bool
    ) -> dict[str, Any] | None:
        if calls is None:
            calls = self._own_pending_calls(messages)
            if not calls:
                return None
        chat = current_chat.get()
        if chat is not None and chat.budgets is not None and self._over_budget(chat, calls):
            return OVER_BUDGET
        if chat is not None and not chat.state.tool_results and len(calls) == 1:
            check = getattr(chat.rule, "handoff_problem", None)
            handoffs = self._handoffs
            if handoffs is not None:
                reply = _transfer_reply(handoffs, calls[0], chat, check, self._name)
                if reply is not None:
                    return reply
            outcome = await run_only_call(
                calls[0],
                self._executable_tools(),
                chat.state.context_variables,
                check,
                self.tool_timeout,
                _execution_teller(chat, self._name) if chat.listeners else None,
                sync=sync,
            )
            return self._kept_unless_refused(_only_reply(outcome, chat, self._name), [outcome], chat)
        options = self._tool_options(chat, calls, _handoff_check(chat))
        tools, context = self._executable_tools(), self._context_of(chat)
        if sync:
            outcomes = run_tool_calls(calls, tools, context, **options)
        else:
            outcomes = await a_run_tool_calls(calls, tools, context, **options)
        return self._kept_unless_refused(self._tool_reply(outcomes, chat), outcomes, chat)

    def _kept_unless_refused(
        self, reply: dict[str, Any], outcomes: list[ToolOutcome], chat: Chat | None
    ) -> dict[str, Any]:
        """``reply``; or, if a tool asked for a handoff that ends the chat, the reply appended to the chat
        (the tools ran: their results are not lost) and the handoff's error raised."""
        for outcome in outcomes:
            if outcome.refused is not None:
                if chat is not None:
                    chat.append(reply, self)  # type: ignore[arg-type]
                raise outcome.refused
        return reply

    def _over_budget(self, chat: Chat, calls: list[dict[str, Any]]) -> bool:
        assert chat.budgets is not None
        reason = chat.budgets.before_tool_calls(self._name, len(calls))
        if reason is None:
            return False
        chat.note_reply_stop(self, reason)
        return True

    def _own_pending_calls(self, messages: list[Message]) -> list[dict[str, Any]]:
        if not messages:
            return []
        last = messages[-1]
        if last.get("name") != self.name:
            return []
        calls: list[dict[str, Any]] = last.get("tool_calls") or []
        return calls

    def _executable_tools(self) -> Mapping[str, Tool]:
        """The functions this agent runs, with its handoff tools (one map, rebuilt when either changes)."""
        handoffs = self._handoffs
        if handoffs is None or not handoffs.llm_conditions:
            return self._function_map
        if self._merged_versions != (self._tools_version, handoffs.version):
            self._merged_tools = {**self._function_map, **handoffs.tools_by_name}
            self._merged_versions = (self._tools_version, handoffs.version)
        return self._merged_tools

    _merged_versions: tuple[int, int] | None = None
    _merged_tools: dict[str, Tool] = {}

    def _executable_tool_names(self) -> set[str]:
        names = set(self._function_map)
        if self._handoffs is not None:
            names.update(self._handoffs.tools_by_name)
        return names

    def _set_function(self, name: str, tool: Tool | None) -> None:
        """Add, replace or (with ``None``) remove a function this agent executes."""
        if tool is None:
            self._function_map.pop(name, None)
        else:
            self._function_map[name] = tool
        self._tools_version += 1

    def _context_of(self, chat: Chat | None) -> dict[str, Any]:
        return self._context_variables if chat is None else chat.state.context_variables

    def _tool_options(
        self, chat: Chat | None, calls: list[dict[str, Any]], check: HandoffCheck | None
    ) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if check is not None:
            options["check_handoff"] = check
        if self.tool_timeout is not None:
            options["timeout"] = self.tool_timeout
        if chat is None:
            return options
        on_execute = _execution_teller(chat, self.name)
        if on_execute is not None:
            options["on_execute"] = on_execute
        if chat.state.tool_results:
            options["known"] = {
                index: outcome_from_data(data) for index, data in chat.state.tool_results.items()
            }
        if chat.journal is not None and len(calls) > 1:
            options["on_outcome"] = lambda index, outcome: chat.record_tool_outcome(
                index, outcome_data(outcome)
            )
        return options

    def _pending_tool_calls(
        self, messages: list[Message] | None, sender: Agent | None
    ) -> list[dict[str, Any]]:
        if messages is None:
            messages = self._view_messages(sender)
        if not messages:
            return []
        calls: list[dict[str, Any]] = messages[-1].get("tool_calls") or []
        return calls

    def _tool_reply(self, outcomes: list[ToolOutcome], chat: Chat | None) -> dict[str, Any]:
        """The tool reply carrying ``outcomes``; their context changes and handoff go to the chat."""
        context = self._context_of(chat)
        listened = chat is not None and bool(chat.listeners)
        changes_seen = listened and chat is not None and chat.wants(ContextUpdated)
        handoff = None
        for outcome in outcomes:
            if listened:
                assert chat is not None
                _tell_finished(chat, outcome, self.name)
            if outcome.context_set or outcome.context_removed:
                context.update(outcome.context_set)
                for key in outcome.context_removed:
                    context.pop(key, None)
                if changes_seen:
                    assert chat is not None
                    changes = dict(outcome.context_set)
                    chat.emit(ContextUpdated(self.name, changes, list(outcome.context_removed)))
            if handoff is None and outcome.handoff is not None:
                handoff = outcome.handoff
                if chat is not None:
                    chat.handoff_tool = outcome.name
        if chat is not None:
            chat.state.handoff = handoff
        responses = [outcome.as_tool_message() for outcome in outcomes]
        if len(responses) == 1:
            content = responses[0]["content"]
        else:  # as AG2 joins them: its swarms' tool executor with one newline, its agents with two
            separator = "\n" if chat is not None and chat.state.shape == "swarm" else "\n\n"
            content = separator.join(r["content"] for r in responses)
        return Reply(role="tool", tool_responses=responses, content=content)

    # ------------------------------------------------------------------------------------------------
    # tools

    def _add_llm_tool(self, tool: Tool) -> None:
        self._llm_tools[tool.name] = tool
        self._offer(tool.name, tool.schema, function_style=False)

    def _offer(self, name: str, schema: dict[str, Any] | None, *, function_style: bool) -> None:
        """Offer the model a tool schema (``None``: stop offering it), and keep ``llm_config``'s
        ``tools``/``functions`` lists as AG2 keeps them."""
        if schema is None:
            self._offered.pop(name, None)
            self._llm_tools.pop(name, None)
        else:
            self._offered[name] = schema
        if function_style:
            self._function_style.add(name)
        elif schema is not None:
            self._function_style.discard(name)
        self._llm_tool_schemas = list(self._offered.values())
        if self.llm_config and keeps_tools(self.llm_config):
            key = "functions" if function_style else "tools"
            self.llm_config[key] = [
                schema["function"] if key == "functions" else schema
                for tool_name, schema in self._offered.items()
                if (tool_name in self._function_style) == function_style
            ]

    def _offer_from_llm_config(self) -> None:
        """Offer the tools and functions an AG2 ``llm_config`` lists."""
        if not keeps_tools(self.llm_config):
            return
        for schema in self.llm_config.get("tools") or ():
            self._offered[_tool_name(schema, "llm_config['tools']")] = schema
        for signature in self.llm_config.get("functions") or ():
            name = _function_name(signature, "llm_config['functions']")
            self._offered[name] = {"type": "function", "function": signature}
            self._function_style.add(name)
        if self._offered:
            self._llm_tool_schemas = list(self._offered.values())

    def can_execute_function(self, name: list[str] | str) -> bool:
        """Whether this agent executes the function ``name`` (every one of them, for a list)."""
        names = name if isinstance(name, list) else [name]
        return all(each in self._function_map for each in names)

    def remove_tool_for_llm(self, tool: Tool) -> None:
        """Stop offering ``tool`` to the model.

        Raises:
            ValueError: the model is not offered ``tool``.
        """
        if self._llm_tools.get(tool.name) is not tool:
            raise ValueError(f"Tool {tool.name!r} is not offered to {self.name}'s model")
        self._offer(tool.name, None, function_style=False)

    def update_tool_signature(
        self, tool_sig: str | dict[str, Any], is_remove: bool, silent_override: bool = False
    ) -> None:
        """Offer the model a tool schema (``{"type": "function", "function": {"name": ...}}``), replacing
        one of the same name, or with ``is_remove`` stop offering the tool named ``tool_sig``.

        Raises:
            RuntimeError: the agent has no model.
            ValueError: the schema has no name, or there is no such tool to remove.
        """
        self._update_signature(tool_sig, is_remove, function_style=False, silent_override=silent_override)

    def update_function_signature(
        self, func_sig: str | dict[str, Any], is_remove: bool, silent_override: bool = False
    ) -> None:
        """Like :meth:`update_tool_signature`, for a legacy function signature (``{"name": ...,
        "description": ..., "parameters": ...}``, kept in ``llm_config["functions"]``). The model is
        offered it as a tool.
        """
        self._update_signature(func_sig, is_remove, function_style=True, silent_override=silent_override)

    def _update_signature(
        self, signature: str | dict[str, Any], is_remove: bool, *, function_style: bool, silent_override: bool
    ) -> None:
        kind = "function" if function_style else "tool"
        if self.client is None:
            raise RuntimeError(f"{self.name} has no model (llm_config=False): it cannot be offered a {kind}")
        if is_remove:
            name = signature if isinstance(signature, str) else None
            if isinstance(signature, dict):
                name = (
                    signature.get("name") if function_style else (signature.get("function") or {}).get("name")
                )
            if name not in self._offered or (name in self._function_style) != function_style:
                raise ValueError(f"{self.name} offers no {kind} named {name!r}")
            self._offer(name, None, function_style=function_style)
            return
        if not isinstance(signature, dict):
            raise ValueError(f"a {kind} signature must be a dict, not {signature!r}")
        if function_style:
            name = _function_name(signature, "the function signature")
            schema = {"type": "function", "function": signature}
        else:
            name = _tool_name(signature, "the tool signature")
            schema = signature
        if name in self._offered and not silent_override:
            warnings.warn(f"Function '{name}' is being overridden.", UserWarning, stacklevel=3)
        self._offer(name, schema, function_style=function_style)

    def _tool_schemas(self, messages: list[Message] | None = None) -> list[dict[str, Any]]:
        """The tools offered to the model for a reply to ``messages``: its own, and the handoffs
        available now."""
        schemas = self._llm_tool_schemas
        if schemas is None:
            schemas = self._llm_tool_schemas = list(self._offered.values())
        handoffs = self._handoffs
        if handoffs is None or not handoffs.llm_conditions:
            return schemas
        always = handoffs._always
        if always is not None and always[0] is schemas:
            return always[1]
        return handoffs.offered_with(self, messages or [], schemas)  # type: ignore[arg-type]

    @property
    def tools(self) -> list[Tool]:
        """The tools this agent offers to its model."""
        return list(self._llm_tools.values())

    @property
    def function_map(self) -> dict[str, Tool]:
        """The functions this agent executes, by name."""
        return dict(self._function_map)

    def register_for_llm(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        api_style: str = "tool",
        silent_override: bool = False,
    ) -> Callable[[Callable[..., Any]], Tool]:
        """Decorator: offer the function to this agent's model as a tool, with a schema from its signature.

        The schema is added to ``llm_config["tools"]`` (``api_style="function"``: to
        ``llm_config["functions"]``, AG2's legacy form), as AG2 does.
        """
        if api_style not in ("tool", "function"):
            raise ValueError(f"api_style must be 'tool' or 'function', not {api_style!r}")

        def decorator(func: Callable[..., Any]) -> Tool:
            tool = as_tool(func, name=name, description=description)
            if self.client is None:
                raise RuntimeError(f"{self.name} has no model (llm_config=False): it cannot call tools")
            if tool.name in self._offered and not silent_override:
                warnings.warn(f"Function '{tool.name}' is being overridden.", UserWarning, stacklevel=2)
            self._llm_tools[tool.name] = tool
            self._offer(tool.name, tool.schema, function_style=api_style == "function")
            return tool

        return decorator

    def register_for_execution(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        in_thread: bool | None = None,
        timeout: float | None = None,
        serialize: bool = True,
        silent_override: bool = False,
    ) -> Callable[[Callable[..., Any]], Tool]:
        """Decorator: let this agent execute the function when another agent's model calls it.

        In asynchronous chats a synchronous function runs in a worker thread, so that it does not block
        the event loop; ``in_thread=False`` calls it directly (for quick functions). ``timeout``
        (seconds) bounds each call (default: the agent's ``tool_timeout``). Given a :class:`Tool`, what
        is not given here is the tool's own. ``serialize`` and ``silent_override`` are AG2's and change
        nothing here (results are always sent as text).
        """
        if name is not None and not isinstance(name, str):
            raise TypeError(
                f"register_for_execution's name must be a string, not {name!r:.60}; as a decorator it "
                "needs its parentheses: @agent.register_for_execution()"
            )

        def decorator(func: Callable[..., Any]) -> Tool:
            tool = as_tool(func, name=name, description=description)
            if in_thread is not None or timeout is not None:
                tool = Tool(tool, in_thread=in_thread, timeout=timeout)
            self._set_function(tool.name, tool)
            return tool

        return decorator

    def register_function(self, function_map: dict[str, Callable[..., Any] | None]) -> None:
        """Add (or, with ``None``, remove) functions this agent executes, by name."""
        for tool_name, function in function_map.items():
            self._set_function(tool_name, None if function is None else as_tool(function, name=tool_name))


def _transfer_reply(
    handoffs: Handoffs, call: dict[str, Any], chat: Chat, check: HandoffCheck | None, executor: str
) -> dict[str, Any] | None:
    """The tool reply to a message's only tool call when it calls one of the agent's ``transfer_to_...``
    tools without arguments, as running the tool would make it (and as the listeners would be told);
    ``None`` for any other call."""
    function = call.get("function") or {}
    name: str = function.get("name") or ""
    transfer = handoffs._transfers.get(name)
    if transfer is None:
        return None
    tool, func, target = transfer
    if handoffs._by_name.get(name) is not tool or tool.func is not func:
        return None
    if function.get("arguments") not in _NO_ARGUMENTS:
        return None
    problem = None if check is None else check(target)
    state = chat.state
    if problem is None:
        content = f"Transferred to {target.display_name()}."
        state.handoff = target
        chat.handoff_tool = name
    else:
        content = handoff_refused(name, problem)
        state.handoff = None
    call_id = call.get("id")
    if chat.listeners:
        _tell_transfer(chat, executor, name, call_id, content)
    response = {"role": "tool", "content": content}
    if call_id is not None:
        response["tool_call_id"] = call_id
    return Reply(role="tool", tool_responses=[response], content=content)


_NO_ARGUMENTS = ("{}", None, "")
"""The arguments of a call to a tool without parameters that need no decoding."""


def _execution_teller(chat: Chat, executor: str) -> Callable[[str, str, str | None], None] | None:
    """What tells the chat's listeners that ``executor`` runs a tool; ``None`` if none listens."""
    if not (chat.listeners and chat.wants(ToolExecuting)):
        return None

    def tell(tool: str, arguments: str, call_id: str | None) -> None:
        chat.emit(ToolExecuting(executor, tool, arguments, call_id))
        if chat.holding:
            release()

    return tell


def _tell_transfer(chat: Chat, executor: str, name: str, call_id: str | None, content: str) -> None:
    """Tell the listeners that a transfer tool ran (its arguments are none: ``{}``) and what it said."""
    if chat.wants(ToolExecuting):
        chat.emit(ToolExecuting(executor, name, "{}", call_id))
    if chat.wants(ToolFinished):
        chat.emit(ToolFinished(executor, name, call_id, content))


def _tell_finished(chat: Chat, outcome: ToolOutcome, executor: str) -> None:
    """Tell the listeners a tool call's outcome."""
    if chat.wants(ToolFinished):
        chat.emit(
            ToolFinished(
                executor, outcome.name, outcome.call_id, outcome.content, outcome.duration_s, outcome.error
            )
        )


def _only_reply(outcome: ToolOutcome, chat: Chat, executor: str) -> dict[str, Any]:
    """:meth:`ToolUseMixin._tool_reply` for the outcome of a message's only tool call."""
    state = chat.state
    listened = bool(chat.listeners)
    if listened:
        _tell_finished(chat, outcome, executor)
    if outcome.context_set or outcome.context_removed:
        context = state.context_variables
        context.update(outcome.context_set)
        for key in outcome.context_removed:
            context.pop(key, None)
        if listened and chat.wants(ContextUpdated):
            chat.emit(ContextUpdated(executor, dict(outcome.context_set), list(outcome.context_removed)))
    handoff = state.handoff = outcome.handoff
    if handoff is not None:
        chat.handoff_tool = outcome.name
    content = outcome.content
    response = {"role": "tool", "content": content}
    if outcome.call_id is not None:
        response["tool_call_id"] = outcome.call_id
    return Reply(role="tool", tool_responses=[response], content=content)


def _handoff_check(chat: Chat | None) -> HandoffCheck | None:
    """The chat's rule says whether a handoff can be taken (swarms); ``None`` if it does not hand off."""
    return getattr(chat.rule, "handoff_problem", None) if chat is not None else None


def _tool_name(schema: Any, where: str) -> str:
    function = schema.get("function") if isinstance(schema, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"{where} must be {{'type': 'function', 'function': {{'name': ...}}}}, not {schema!r}"
        )
    return name


def _function_name(signature: Any, where: str) -> str:
    name = signature.get("name") if isinstance(signature, dict) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} must have a 'name' key; got {signature!r}")
    return name


def _as_function_message(result: dict[str, Any]) -> dict[str, Any]:
    content = result["content"]
    text = content.result_text() if isinstance(content, ToolResult) else result_text(content)
    return {**result, "content": text}


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def outcome_data(outcome: ToolOutcome) -> dict[str, Any]:
    """A tool call's outcome as plain data, for the chat's records."""
    data: dict[str, Any] = {"call_id": outcome.call_id, "name": outcome.name, "content": outcome.content}
    if outcome.handoff is not None:
        data["handoff"] = handoff_data(outcome.handoff)
    if outcome.context_set:
        data["context_set"] = dict(outcome.context_set)
    if outcome.context_removed:
        data["context_removed"] = list(outcome.context_removed)
    if outcome.error is not None:
        data["error"] = outcome.error
    return data


def outcome_from_data(data: dict[str, Any]) -> ToolOutcome:
    """The outcome :func:`outcome_data` describes."""
    return ToolOutcome(
        data.get("call_id"),
        data.get("name", ""),
        data.get("content", ""),
        handoff_from_data(data.get("handoff")),
        dict(data.get("context_set") or {}),
        list(data.get("context_removed") or ()),
        data.get("error"),
    )


def register_function(
    f: Callable[..., Any],
    *,
    caller: ConversableAgent,
    executor: ConversableAgent,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool:
    """Offer ``f`` to ``caller``'s model and let ``executor`` run it when the model calls it (within
    ``timeout`` seconds, if given)."""
    for role, agent in (("caller", caller), ("executor", executor)):
        if not hasattr(agent, "register_for_llm" if role == "caller" else "register_for_execution"):
            raise TypeError(f"register_function's {role} must be an agent, not {agent!r:.80}")
    tool = caller.register_for_llm(name=name, description=description)(f)
    executor.register_for_execution(name=name, timeout=timeout)(tool)
    return tool
