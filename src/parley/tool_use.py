"""How an agent offers tools to its model and executes the tool calls it receives."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from parley.events import ContextUpdated, ToolExecuting
from parley.messages import Message
from parley.models.base import ModelClient
from parley.tools import HandoffCheck, Tool, ToolOutcome, a_run_tool_calls, as_tool, run_tool_calls

if TYPE_CHECKING:
    from parley.agent import Agent, ConversableAgent
    from parley.engine import Chat
    from parley.group.handoffs import Handoffs


class ToolUseMixin:
    """Tool registration and the tool-execution reply function of :class:`~parley.agent.ConversableAgent`."""

    name: str
    client: ModelClient | None
    _chat: Chat | None
    _context_variables: dict[str, Any]
    _function_map: dict[str, Tool]
    _llm_tools: dict[str, Tool]
    _llm_tool_schemas: list[dict[str, Any]] | None
    _handoffs: Handoffs | None

    _view_messages: Callable[[Agent | None], list[Message]]

    def generate_tool_calls_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Run the tool calls of the last message with this agent's functions, and reply with the results."""
        calls = self._pending_tool_calls(messages, sender)
        if not calls:
            return False, None
        return True, self._tool_reply(
            run_tool_calls(calls, self._function_map, self._context_variables, self._execution_listener())
        )

    async def a_generate_tool_calls_reply(
        self, messages: list[Message] | None = None, sender: Agent | None = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Async twin of :meth:`generate_tool_calls_reply`: async tools run concurrently."""
        calls = self._pending_tool_calls(messages, sender)
        if not calls:
            return False, None
        outcomes = await a_run_tool_calls(
            calls, self._function_map, self._context_variables, self._execution_listener()
        )
        return True, self._tool_reply(outcomes)

    _runs_own_tools = False
    """Whether the agent runs its own tool calls, first thing in its next turn (agents of a swarm)."""

    def _own_tool_reply(self, messages: list[Message]) -> dict[str, Any] | None:
        """Run the tool calls of this agent's own last message; ``None`` if it has none pending.

        ``context_variables`` is injected, context updates are applied, and a handoff a tool asks for
        is kept for the chat's next-speaker rule (the first valid one wins; later ones are answered as
        not taken, invalid ones as errors).
        """
        calls = self._own_pending_calls(messages)
        if not calls:
            return None
        tools, listener, check = self._own_tool_setup()
        return self._tool_reply(run_tool_calls(calls, tools, self._context_variables, listener, check))

    async def _a_own_tool_reply(self, messages: list[Message]) -> dict[str, Any] | None:
        """Async twin of :meth:`_own_tool_reply`: async tools run concurrently."""
        calls = self._own_pending_calls(messages)
        if not calls:
            return None
        tools, listener, check = self._own_tool_setup()
        return self._tool_reply(
            await a_run_tool_calls(calls, tools, self._context_variables, listener, check)
        )

    def _own_pending_calls(self, messages: list[Message]) -> list[dict[str, Any]]:
        if not messages:
            return []
        last = messages[-1]
        if last.get("name") != self.name:
            return []
        calls: list[dict[str, Any]] = last.get("tool_calls") or []
        return calls

    def _own_tool_setup(
        self,
    ) -> tuple[Mapping[str, Tool], Callable[[str, str, str | None], None] | None, HandoffCheck | None]:
        tools: Mapping[str, Tool] = self._function_map
        if self._handoffs is not None and self._handoffs.llm_conditions:
            tools = self._handoffs.with_tools(self._function_map)
        rule = self._chat.rule if self._chat is not None else None
        check: HandoffCheck | None = getattr(rule, "handoff_problem", None)
        return tools, self._execution_listener(), check

    def _pending_tool_calls(
        self, messages: list[Message] | None, sender: Agent | None
    ) -> list[dict[str, Any]]:
        if messages is None:
            messages = self._view_messages(sender)
        if not messages:
            return []
        calls: list[dict[str, Any]] = messages[-1].get("tool_calls") or []
        return calls

    def _execution_listener(self) -> Callable[[str, str, str | None], None] | None:
        """Where to announce each tool run: nowhere unless the chat has listeners."""
        return self._on_execute if self._chat is not None and self._chat.listeners else None

    def _on_execute(self, tool: str, arguments: str, call_id: str | None) -> None:
        if self._chat is not None and self._chat.listeners:
            self._chat.emit(ToolExecuting(self.name, tool, arguments, call_id))

    def _tool_reply(self, outcomes: list[ToolOutcome]) -> dict[str, Any]:
        handoff = None
        for outcome in outcomes:
            if outcome.context_updates:
                self._context_variables.update(outcome.context_updates)
                if self._chat is not None and self._chat.listeners:
                    self._chat.emit(ContextUpdated(self.name, outcome.context_updates))
            if handoff is None:
                handoff = outcome.handoff
        self._handoff_requested = handoff
        responses = [outcome.as_tool_message() for outcome in outcomes]
        content = (
            responses[0]["content"] if len(responses) == 1 else "\n\n".join(r["content"] for r in responses)
        )
        return {"role": "tool", "tool_responses": responses, "content": content}

    _handoff_requested: Any = None

    # ------------------------------------------------------------------------------------------------
    # tools

    def _add_llm_tool(self, tool: Tool) -> None:
        self._llm_tools[tool.name] = tool
        self._llm_tool_schemas = [tool.schema for tool in self._llm_tools.values()]

    def _tool_schemas(self) -> list[dict[str, Any]]:
        if self._llm_tool_schemas is None:
            self._llm_tool_schemas = [tool.schema for tool in self._llm_tools.values()]
        if self._handoffs is not None and self._handoffs.offered_schemas:
            return self._handoffs.offered_with(self._llm_tool_schemas)
        return self._llm_tool_schemas

    @property
    def tools(self) -> list[Tool]:
        """The tools this agent offers to its model."""
        return list(self._llm_tools.values())

    @property
    def function_map(self) -> dict[str, Tool]:
        """The functions this agent executes, by name."""
        return dict(self._function_map)

    def register_for_llm(
        self, *, name: str | None = None, description: str | None = None, api_style: str = "tool"
    ) -> Callable[[Callable[..., Any]], Tool]:
        """Decorator: offer the function to this agent's model as a tool, with a schema from its signature."""

        def decorator(func: Callable[..., Any]) -> Tool:
            tool = as_tool(func, name=name, description=description)
            if self.client is None:
                raise RuntimeError(f"{self.name} has no model (llm_config=False): it cannot call tools")
            self._add_llm_tool(tool)
            return tool

        return decorator

    def register_for_execution(
        self, name: str | None = None, *, in_thread: bool = False
    ) -> Callable[[Callable[..., Any]], Tool]:
        """Decorator: let this agent execute the function when another agent's model calls it."""

        def decorator(func: Callable[..., Any]) -> Tool:
            tool = as_tool(func, name=name)
            if in_thread:
                tool = Tool(tool.func, name=tool.name, description=tool.description, in_thread=True)
            self._function_map[tool.name] = tool
            return tool

        return decorator

    def register_function(self, function_map: dict[str, Callable[..., Any] | None]) -> None:
        """Add (or, with ``None``, remove) functions this agent executes, by name."""
        for tool_name, function in function_map.items():
            if function is None:
                self._function_map.pop(tool_name, None)
            else:
                self._function_map[tool_name] = as_tool(function, name=tool_name)


def register_function(
    f: Callable[..., Any],
    *,
    caller: ConversableAgent,
    executor: ConversableAgent,
    name: str | None = None,
    description: str | None = None,
) -> Tool:
    """Offer ``f`` to ``caller``'s model and let ``executor`` run it when the model calls it."""
    tool = caller.register_for_llm(name=name, description=description)(f)
    executor.register_for_execution(name=name)(tool)
    return tool
