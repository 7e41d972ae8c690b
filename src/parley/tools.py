"""Tools: Python functions the model can call, with JSON schemas computed once from their signatures.

A parameter named ``context_variables`` is filled in by the engine with the chat's shared context and is
never shown to the model. A tool may return text, any JSON-serializable value, or a :class:`ToolResult`
(such as ``SwarmResult``) that also updates the context or hands the conversation to another agent.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import re
import threading
import typing
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

if TYPE_CHECKING:
    from pydantic import BaseModel

CONTEXT_PARAMETER = "context_variables"


class ToolDefinitionError(TypeError):
    """A function cannot be turned into a tool (a missing or unresolvable annotation...)."""


class ToolResult:
    """Base for rich tool results: text for the model, context updates, and an optional handoff.

    ``SwarmResult`` and ``ReplyResult`` are the two kinds; a handoff is an agent, an agent's name, or a
    transition target.
    """

    def result_text(self) -> str:
        """What the model is told."""
        raise NotImplementedError

    def result_handoff(self) -> Any:
        """Where the conversation goes next, or ``None`` to stay with the caller."""
        return None

    def result_context(self) -> Any:
        """Context-variable updates (a dict or ``ContextVariables``), or ``None``."""
        return None


@dataclass(slots=True)
class ToolOutcome:
    """The result of one tool call: what the model is told, and what the call asks of the chat."""

    call_id: str | None
    name: str
    content: str
    handoff: Any = None
    context_updates: dict[str, Any] = field(default_factory=dict)

    def as_tool_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "tool", "content": self.content}
        if self.call_id is not None:
            message["tool_call_id"] = self.call_id
        return message


class Tool:
    """A Python function with the schema the model sees.

    Call it like the function it wraps. ``in_thread`` runs a synchronous function in a worker thread
    during asynchronous chats (by default it is called directly).
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        in_thread: bool = False,
    ) -> None:
        if isinstance(func, Tool):
            func = func.func
        if not callable(func):
            raise ToolDefinitionError(f"a tool must be callable, not {func!r}")
        self.func: Callable[..., Any] = func
        self.name = name or getattr(func, "__name__", None) or type(func).__name__
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-' (as model APIs require)"
            )
        doc = inspect.getdoc(func) or ""
        self.description = description if description is not None else _summary_of(doc)
        self.is_async = inspect.iscoroutinefunction(func) or (
            not inspect.isfunction(func) and inspect.iscoroutinefunction(type(func).__call__)
        )
        self.in_thread = in_thread
        signature = _signature_of(func, self.name, doc)
        self.injects_context = signature.injects_context
        self._arguments_model = signature.arguments_model
        self._parameter_names = signature.parameter_names
        self.parameters = signature.parameters
        self._schema: dict[str, Any] | None = None
        self.__name__ = self.name
        self.__doc__ = func.__doc__

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI tool schema the model is given (built once; do not change it in place)."""
        if self._schema is None:
            self._schema = {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.parameters,
                },
            }
        return self._schema

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def parse_arguments(self, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Decode and validate the model's arguments into keyword arguments for the function.

        Raises:
            ValueError: the arguments are not a JSON object or fail validation; the message says why.
        """
        if arguments is None or arguments == "" or (arguments == "{}" and self._arguments_model is None):
            decoded: Any = {}
        elif isinstance(arguments, str):
            try:
                decoded = json.loads(arguments)
            except ValueError as error:
                raise ValueError(f"the arguments are not valid JSON ({error}): {arguments[:200]!r}") from None
        else:
            decoded = arguments
        if not isinstance(decoded, dict):
            raise ValueError(f"the arguments must be a JSON object, not {type(decoded).__name__}")
        if self._arguments_model is None:
            if decoded:
                raise ValueError(f"{self.name} takes no arguments, got {sorted(decoded)}")
            return {}
        try:
            validated = self._arguments_model.model_validate(decoded)
        except Exception as error:
            if hasattr(error, "errors"):
                raise ValueError(_validation_message(error)) from None
            raise
        return {name: getattr(validated, name) for name in self._parameter_names}

    def _call_args(
        self, arguments: dict[str, Any], context_variables: dict[str, Any] | None
    ) -> dict[str, Any]:
        if self.injects_context:
            arguments[CONTEXT_PARAMETER] = {} if context_variables is None else context_variables
        return arguments


def as_tool(func: Callable[..., Any] | Tool, name: str | None = None, description: str | None = None) -> Tool:
    """``func`` as a :class:`Tool`; an existing tool is reused unless renamed or redescribed.

    Registering the same function on many agents makes one tool, shared by all of them.
    """
    if isinstance(func, Tool):
        if name in (None, func.name) and description in (None, func.description):
            return func
        func = func.func
    try:
        variants = _tools.get(func)
    except TypeError:
        return Tool(func, name=name, description=description)
    if variants is None:
        variants = _tools[func] = {}
    tool = variants.get((name, description))
    if tool is None:
        tool = variants[(name, description)] = Tool(func, name=name, description=description)
    return tool


_tools: weakref.WeakKeyDictionary[Callable[..., Any], dict[tuple[str | None, str | None], Tool]] = (
    weakref.WeakKeyDictionary()
)


# ----------------------------------------------------------------------------------------------------
# execution


HandoffCheck = Callable[[Any], "str | None"]
"""Says why a handoff a tool asked for cannot be taken, or ``None`` if it can."""


def run_tool_calls(
    tool_calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Tool],
    context_variables: dict[str, Any] | None,
    on_execute: Callable[[str, str, str | None], None] | None = None,
    check_handoff: HandoffCheck | None = None,
) -> list[ToolOutcome]:
    """Run a model message's tool calls and return their outcomes in the order of the calls.

    Synchronous functions are called directly; asynchronous ones run concurrently on a private event
    loop (in a worker thread if this thread already runs one).
    """
    outcomes, pending = _start(tool_calls, tools, context_variables, on_execute, in_threads=False)
    if pending:
        results = _run_concurrently([start for _, start in pending])
        for (index, _), outcome in zip(pending, results, strict=True):
            outcomes[index] = outcome
    return _resolve_handoffs(_done(outcomes), check_handoff)


async def a_run_tool_calls(
    tool_calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Tool],
    context_variables: dict[str, Any] | None,
    on_execute: Callable[[str, str, str | None], None] | None = None,
    check_handoff: HandoffCheck | None = None,
) -> list[ToolOutcome]:
    """Like :func:`run_tool_calls`, on the running event loop; async tools run concurrently."""
    import asyncio

    outcomes, pending = _start(tool_calls, tools, context_variables, on_execute, in_threads=True)
    if pending:
        results = await asyncio.gather(*(start() for _, start in pending))
        for (index, _), outcome in zip(pending, results, strict=True):
            outcomes[index] = outcome
    return _resolve_handoffs(_done(outcomes), check_handoff)


PendingCall = Callable[[], Awaitable[ToolOutcome]]


def _start(
    tool_calls: Sequence[dict[str, Any]],
    tools: Mapping[str, Tool],
    context_variables: dict[str, Any] | None,
    on_execute: Callable[[str, str, str | None], None] | None,
    *,
    in_threads: bool,
) -> tuple[list[ToolOutcome | None], list[tuple[int, PendingCall]]]:
    """Run the synchronous calls now; return the rest as calls to await, with their positions."""
    outcomes: list[ToolOutcome | None] = []
    pending: list[tuple[int, PendingCall]] = []
    for index, call in enumerate(tool_calls):
        plan = _plan(call, tools)
        outcomes.append(plan if isinstance(plan, ToolOutcome) else None)
        if isinstance(plan, ToolOutcome):
            continue
        tool, call_id, arguments = plan
        if on_execute is not None:
            on_execute(tool.name, json.dumps(arguments, default=str), call_id)
        if tool.is_async:
            pending.append((index, functools.partial(_a_invoke, tool, call_id, arguments, context_variables)))
        elif tool.in_thread and in_threads:
            pending.append(
                (index, functools.partial(_in_thread, tool, call_id, arguments, context_variables))
            )
        else:
            outcomes[index] = _invoke(tool, call_id, arguments, context_variables)
    return outcomes, pending


def _done(outcomes: list[ToolOutcome | None]) -> list[ToolOutcome]:
    return [outcome for outcome in outcomes if outcome is not None]


def _plan(
    call: dict[str, Any], tools: Mapping[str, Tool]
) -> ToolOutcome | tuple[Tool, str | None, dict[str, Any]]:
    call_id = call.get("id")
    function = call.get("function") or {}
    name = function.get("name") or ""
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return ToolOutcome(call_id, name, f"Error: Function {name} not found. Available tools: {known}.")
    try:
        arguments = tool.parse_arguments(function.get("arguments"))
    except ValueError as error:
        return ToolOutcome(call_id, name, f"Error: invalid arguments for {name}: {error}")
    return tool, call_id, arguments


def _invoke(
    tool: Tool, call_id: str | None, arguments: dict[str, Any], context: dict[str, Any] | None
) -> ToolOutcome:
    try:
        result = tool.func(**tool._call_args(arguments, context))
    except Exception as error:
        return _failure(tool, call_id, error)
    return _outcome(tool, call_id, result)


async def _a_invoke(
    tool: Tool, call_id: str | None, arguments: dict[str, Any], context: dict[str, Any] | None
) -> ToolOutcome:
    try:
        result = await tool.func(**tool._call_args(arguments, context))
    except Exception as error:
        return _failure(tool, call_id, error)
    return _outcome(tool, call_id, result)


async def _in_thread(
    tool: Tool, call_id: str | None, arguments: dict[str, Any], context: dict[str, Any] | None
) -> ToolOutcome:
    import asyncio

    return await asyncio.to_thread(_invoke, tool, call_id, arguments, context)


def _failure(tool: Tool, call_id: str | None, error: Exception) -> ToolOutcome:
    return ToolOutcome(call_id, tool.name, f"Error: {tool.name} raised {type(error).__name__}: {error}")


def _outcome(tool: Tool, call_id: str | None, result: Any) -> ToolOutcome:
    if isinstance(result, ToolResult):
        updates = dict(result.result_context() or {})
        return ToolOutcome(call_id, tool.name, result.result_text(), result.result_handoff(), updates)
    if _is_handoff_target(result):
        return ToolOutcome(call_id, tool.name, f"Transferred to {_target_name(result)}.", handoff=result)
    return ToolOutcome(call_id, tool.name, result_text(result))


def result_text(result: Any) -> str:
    """What the model is told a tool returned."""
    if isinstance(result, str):
        return result
    if result is None:
        return ""
    model_dump_json = getattr(result, "model_dump_json", None)
    if callable(model_dump_json):
        return str(model_dump_json())
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


def _is_handoff_target(result: Any) -> bool:
    return bool(getattr(result, "_is_handoff_target", False))


def _target_name(target: Any) -> str:
    display_name = getattr(target, "display_name", None)
    if callable(display_name):
        return str(display_name())
    return str(getattr(target, "name", target))


def _resolve_handoffs(outcomes: list[ToolOutcome], check_handoff: HandoffCheck | None) -> list[ToolOutcome]:
    """Invalid handoffs become errors; the first valid one wins; later ones are answered as not taken."""
    taken: ToolOutcome | None = None
    for outcome in outcomes:
        if outcome.handoff is None:
            continue
        problem = check_handoff(outcome.handoff) if check_handoff is not None else None
        if problem is not None:
            outcome.content = f"Error: {outcome.name} cannot hand off: {problem}"
            outcome.handoff = None
            continue
        if taken is None:
            taken = outcome
            continue
        outcome.content = (
            f"Not transferred to {_target_name(outcome.handoff)}: an earlier call in the same message "
            f"({taken.name}) already handed off to {_target_name(taken.handoff)}."
        )
        outcome.handoff = None
    return outcomes


def _run_concurrently(calls: list[PendingCall]) -> list[ToolOutcome]:
    import asyncio

    async def gather() -> list[ToolOutcome]:
        return list(await asyncio.gather(*(start() for start in calls)))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(gather())
    results: list[ToolOutcome] = []
    failure: list[BaseException] = []

    def worker() -> None:
        try:
            results.extend(asyncio.run(gather()))
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=worker, name="parley-tools")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return results


# ----------------------------------------------------------------------------------------------------
# schemas


@dataclass(frozen=True, slots=True)
class _Signature:
    """What a function's signature means to a model: its arguments' schema and validator."""

    injects_context: bool
    arguments_model: type[BaseModel] | None
    parameter_names: tuple[str, ...]
    parameters: dict[str, Any]


_signatures: weakref.WeakKeyDictionary[Callable[..., Any], _Signature] = weakref.WeakKeyDictionary()


def _signature_of(func: Callable[..., Any], name: str, doc: str) -> _Signature:
    """The function's argument schema, computed once per function however many agents register it."""
    try:
        cached = _signatures.get(func)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    injects_context, model, names = _arguments_model(func, name, _parameter_docs(doc))
    signature = _Signature(injects_context, model, names, _parameters_schema(model))
    with contextlib.suppress(TypeError):
        _signatures[func] = signature
    return signature


def _arguments_model(
    func: Callable[..., Any], name: str, parameter_docs: dict[str, str]
) -> tuple[bool, type[BaseModel] | None, tuple[str, ...]]:
    signature = inspect.signature(func)
    hints = _type_hints(func, name)
    fields: dict[str, Any] = {}
    injects_context = False
    for parameter in signature.parameters.values():
        if parameter.name == CONTEXT_PARAMETER:
            injects_context = True
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(parameter.name, Any)
        fields[parameter.name] = _field(annotation, parameter, parameter_docs.get(parameter.name))
    if not fields:
        return injects_context, None, ()
    from pydantic import ConfigDict, create_model

    model = create_model(f"{name}_arguments", __config__=ConfigDict(arbitrary_types_allowed=True), **fields)
    return injects_context, model, tuple(fields)


def _type_hints(func: Callable[..., Any], name: str) -> dict[str, Any]:
    target = func if inspect.isfunction(func) or inspect.ismethod(func) else type(func).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as error:
        raise ToolDefinitionError(
            f"cannot resolve the type annotations of tool {name!r}: {error}. Annotations must name types "
            "importable from the function's module."
        ) from error


def _field(annotation: Any, parameter: inspect.Parameter, doc: str | None) -> tuple[Any, Any]:
    from pydantic import Field

    description = doc
    if get_origin(annotation) is Annotated:
        base, *metadata = get_args(annotation)
        texts = [item for item in metadata if isinstance(item, str)]
        if texts:
            description = texts[0]
            rest = [item for item in metadata if not isinstance(item, str)]
            annotation = Annotated[(base, *rest)] if rest else base
    default = ... if parameter.default is inspect.Parameter.empty else parameter.default
    if description is None:
        return annotation, Field(default)
    return annotation, Field(default, description=description)


def _parameters_schema(model: type[BaseModel] | None) -> dict[str, Any]:
    if model is None:
        return {"type": "object", "properties": {}}
    schema = _without_titles(model.model_json_schema())
    schema.setdefault("required", [])
    return schema


def _without_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title``s, which only repeat the names the model already sees."""
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    cleaned = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("default", "const", "enum", "examples"):
            cleaned[key] = value
        elif key in ("properties", "$defs"):
            cleaned[key] = {name: _without_titles(sub) for name, sub in value.items()}
        else:
            cleaned[key] = _without_titles(value)
    return cleaned


def _summary_of(doc: str) -> str:
    lines: list[str] = []
    for line in doc.splitlines():
        if not line.strip() or re.match(r"^(Args|Arguments|Parameters|Returns|Raises):\s*$", line.strip()):
            if lines:
                break
            continue
        lines.append(line.strip())
    return " ".join(lines)


def _parameter_docs(doc: str) -> dict[str, str]:
    docs: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        stripped = line.strip()
        if re.match(r"^(Args|Arguments|Parameters):\s*$", stripped):
            in_args = True
            continue
        if in_args:
            if re.match(r"^(Returns|Raises|Yields|Examples?|Notes?):\s*$", stripped):
                break
            match = re.match(r"^(\w+)\s*(\([^)]*\))?\s*:\s*(.+)$", stripped)
            if match:
                docs[match.group(1)] = match.group(3)
    return docs


def _validation_message(error: Any) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item.get("loc", ())) or "arguments"
        problems.append(f"{where}: {item.get('msg')}")
    return "; ".join(problems)
