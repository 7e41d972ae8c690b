"""Tools: Python functions the model can call, with JSON schemas computed once from their signatures.

Two parameters are filled in by the engine and never shown to the model: ``context_variables`` (the
chat's shared context) and ``tool_call_id`` (the id of the call being answered, the same when a resumed
chat runs a call again: key side effects on it to make them happen once). A tool may return text, any
JSON-serializable value, or a :class:`ToolResult` (such as ``SwarmResult``) that also updates the
context or hands the conversation to another agent.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
import typing
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

from parley import json_text
from parley.json_schema import RecursiveSchema, inline_refs
from parley.records import FrozenRecord

if TYPE_CHECKING:
    from pydantic import BaseModel

CONTEXT_PARAMETER = "context_variables"
CALL_ID_PARAMETER = "tool_call_id"


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


class Tool:
    """A Python function with the schema the model sees.

    Call it like the function it wraps. In asynchronous chats a synchronous function runs in a worker
    thread, so that it never blocks the event loop; ``in_thread=False`` calls it directly instead (for
    quick functions: a thread costs tens of microseconds). Synchronous chats always call it directly.
    ``timeout`` (seconds) bounds a call: when it passes, the model is told the tool timed out (see
    :mod:`parley.timeouts` for what happens to the function).

    AG2's spelling works too: ``Tool(name=..., description=..., func_or_tool=f)``, where ``f`` may be
    another tool (its name, description, time limit, thread and parameters are the defaults), and
    ``parameters_json_schema`` sets the parameters the model sees instead of those computed from the
    signature.
    """

    def __init__(
        self,
        func: Callable[..., Any] | Tool | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        in_thread: bool | None = None,
        timeout: float | None = None,
        func_or_tool: Callable[..., Any] | Tool | None = None,
        parameters_json_schema: dict[str, Any] | None = None,
    ) -> None:
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise ValueError(f"a tool's timeout must be a positive number of seconds, not {timeout!r}")
        if func is None:
            func = func_or_tool
        elif func_or_tool is not None:
            raise ToolDefinitionError("give the function either positionally or as func_or_tool, not both")
        if isinstance(func, Tool):  # what is not given again is the tool's own
            name = name or func.name
            description = description if description is not None else func.description
            timeout = timeout if timeout is not None else func.timeout
            in_thread = in_thread if in_thread is not None else func.in_thread
            if parameters_json_schema is None:
                parameters_json_schema = func.parameters
            func = func.func
        if not callable(func):
            raise ToolDefinitionError(f"a tool must be callable, not {func!r}")
        if description is not None and not isinstance(description, str):
            raise ToolDefinitionError(f"a tool's description must be a string, not {description!r:.80}")
        if parameters_json_schema is not None and not isinstance(parameters_json_schema, dict):
            raise ToolDefinitionError(
                f"parameters_json_schema must be a JSON schema dict, not {parameters_json_schema!r}"
            )
        self.func: Callable[..., Any] = func
        self.name: str = name or getattr(func, "__name__", None) or type(func).__name__
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ToolDefinitionError(
                f"tool name {self.name!r} must be 1-64 letters, digits, '_' or '-' (as model APIs require)"
            )
        doc = inspect.getdoc(func) or ""
        self.description: str = description if description is not None else _summary_of(doc)
        self.is_async = inspect.iscoroutinefunction(func) or (
            not inspect.isfunction(func) and inspect.iscoroutinefunction(type(func).__call__)
        )
        self.in_thread: bool = True if in_thread is None else in_thread
        self.timeout: float | None = timeout
        signature = _signature_of(func, self.name, doc)
        self.injects_context = signature.injects_context
        self.injects_call_id = signature.injects_call_id
        model = signature.arguments_model
        # the model is complete (its schema was made): its validator is final
        self._arguments_validator = None if model is None else model.__pydantic_validator__
        self._parameter_names = signature.parameter_names
        self._parameter_set = frozenset(signature.parameter_names)
        self.parameters: dict[str, Any] = (
            signature.parameters if parameters_json_schema is None else parameters_json_schema
        )
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

    @property
    def tool_schema(self) -> dict[str, Any]:
        """AG2's name for :attr:`schema`."""
        return self.schema

    @property
    def function_schema(self) -> dict[str, Any]:
        """The schema in the legacy ``functions`` form: name, description and parameters."""
        return dict(self.schema["function"])

    @property
    def realtime_tool_schema(self) -> dict[str, Any]:
        """The schema in the form realtime APIs take: ``{"type": "function", "name": ...}``."""
        return {"type": "function", **self.schema["function"]}

    def register_for_llm(self, agent: Any) -> None:
        """Offer this tool to ``agent``'s model."""
        _check_agent(agent, "register_for_llm")
        agent.register_for_llm()(self)

    def register_for_execution(self, agent: Any) -> None:
        """Let ``agent`` run this tool when a model calls it."""
        _check_agent(agent, "register_for_execution")
        agent.register_for_execution()(self)

    def register_tool(self, agent: Any) -> None:
        """Both: offer this tool to ``agent``'s model and let ``agent`` run it."""
        self.register_for_llm(agent)
        self.register_for_execution(agent)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def parse_arguments(self, arguments: str | dict[str, Any] | None) -> dict[str, Any]:
        """Decode and validate the model's arguments into keyword arguments for the function.

        Arguments the function does not take (unless it takes ``**kwargs``) and required ones that are
        missing are errors naming them, so the model can correct its call.

        Raises:
            ValueError: the arguments are not a JSON object or fail validation; the message says why.
        """
        validator = self._arguments_validator
        if validator is None and (arguments == "{}" or arguments is None or arguments == ""):
            return {}
        if arguments is None or arguments == "":
            decoded: Any = {}
        elif isinstance(arguments, str):
            try:
                decoded = json_text.loads(arguments)
            except (ValueError, RecursionError) as error:
                raise ValueError(f"the arguments are not valid JSON ({error}): {arguments[:200]!r}") from None
        else:
            decoded = arguments
        if not isinstance(decoded, dict):
            raise ValueError(f"the arguments must be a JSON object, not {type(decoded).__name__}")
        extra: dict[str, Any] = {}
        problems = []
        if not self._parameter_set.issuperset(decoded):
            unexpected = [name for name in decoded if name not in self._parameter_set]
            if self._takes_any_keyword:
                extra = {name: decoded[name] for name in unexpected}
            else:
                takes = ", ".join(self._parameter_names) or "no arguments"
                names = ", ".join(map(repr, unexpected))
                problems.append(f"unexpected arguments {names} ({self.name} takes {takes})")
            decoded = {name: value for name, value in decoded.items() if name in self._parameter_set}
        if validator is None:
            if problems:
                raise ValueError("; ".join(problems))
            return extra
        try:
            validated = validator.validate_python(decoded)
        except RecursionError:
            raise ValueError("the arguments are nested too deeply") from None
        except Exception as error:
            if not hasattr(error, "errors"):
                raise
            problems.append(_validation_message(error))
        if problems:
            raise ValueError("; ".join(problems))
        # the model's fields, in the function's order, are its instance's attributes
        return {**validated.__dict__, **extra}

    @functools.cached_property
    def _takes_any_keyword(self) -> bool:
        """Whether the function has a ``**kwargs`` that takes arguments the schema does not name."""
        try:
            parameters = inspect.signature(self.func).parameters.values()
        except (TypeError, ValueError):
            return False
        return any(parameter.kind is parameter.VAR_KEYWORD for parameter in parameters)

    def call_arguments(
        self, arguments: dict[str, Any], context_variables: dict[str, Any] | None, call_id: str | None
    ) -> dict[str, Any]:
        """The keyword arguments of a call: the model's, and the ones the engine injects."""
        if self.injects_context:
            arguments[CONTEXT_PARAMETER] = {} if context_variables is None else context_variables
        if self.injects_call_id:
            arguments[CALL_ID_PARAMETER] = call_id
        return arguments


def _check_agent(agent: Any, method: str) -> None:
    if not callable(getattr(agent, method, None)):
        raise TypeError(f"Tool.{method} takes the agent to register the tool with, not {agent!r:.60}")


def as_tool(func: Callable[..., Any] | Tool, name: str | None = None, description: str | None = None) -> Tool:
    """``func`` as a :class:`Tool`; an existing tool is reused unless renamed or redescribed (then a copy
    with its other options: time limit, thread, parameters).

    Registering the same function on many agents makes one tool, shared by all of them.
    """
    if isinstance(func, Tool):
        if name in (None, func.name) and description in (None, func.description):
            return func
        return Tool(func, name=name, description=description)
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
# schemas


@dataclass(slots=True, init=False, repr=False, eq=False)
class _Signature(FrozenRecord):
    """What a function's signature means to a model: its arguments' schema and validator."""

    injects_context: bool
    injects_call_id: bool
    arguments_model: type[BaseModel] | None
    parameter_names: tuple[str, ...]
    parameters: dict[str, Any]

    def __init__(
        self,
        injects_context: bool,
        injects_call_id: bool,
        arguments_model: type[BaseModel] | None,
        parameter_names: tuple[str, ...],
        parameters: dict[str, Any],
    ) -> None:
        object.__setattr__(self, "injects_context", injects_context)
        object.__setattr__(self, "injects_call_id", injects_call_id)
        object.__setattr__(self, "arguments_model", arguments_model)
        object.__setattr__(self, "parameter_names", parameter_names)
        object.__setattr__(self, "parameters", parameters)


_signatures: weakref.WeakKeyDictionary[Callable[..., Any], _Signature] = weakref.WeakKeyDictionary()


def _signature_of(func: Callable[..., Any], name: str, doc: str) -> _Signature:
    """The function's argument schema, computed once per function however many agents register it."""
    try:
        cached = _signatures.get(func)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    if _takes_nothing(func):
        return _Signature(False, False, None, (), _parameters_schema(None))
    injected, model, names = _arguments_model(func, name, _parameter_docs(doc))
    try:
        parameters = _parameters_schema(model)
    except Exception as error:
        from pydantic import PydanticUserError

        if not isinstance(error, PydanticUserError):
            raise
        raise ToolDefinitionError(
            f"tool {name!r}: its parameters cannot be described to a model as JSON ({error.message}); "
            "annotate them with JSON types: str, int, float, bool, lists and dicts of them, pydantic models"
        ) from None
    signature = _Signature(
        CONTEXT_PARAMETER in injected, CALL_ID_PARAMETER in injected, model, names, parameters
    )
    with contextlib.suppress(TypeError):
        _signatures[func] = signature
    return signature


_ANY_ARGUMENTS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _takes_nothing(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is a plain function of no parameters (a handoff's transfer is one), whose
    signature needs no reading; a wrapper, or a function that says its own signature, is read."""
    if not inspect.isfunction(func) or hasattr(func, "__wrapped__") or hasattr(func, "__signature__"):
        return False
    code = func.__code__
    return code.co_argcount == 0 and code.co_kwonlyargcount == 0 and not code.co_flags & _ANY_ARGUMENTS


def _arguments_model(
    func: Callable[..., Any], name: str, parameter_docs: dict[str, str]
) -> tuple[set[str], type[BaseModel] | None, tuple[str, ...]]:
    signature = inspect.signature(func)
    hints = _type_hints(func, name)
    fields: dict[str, Any] = {}
    injected: set[str] = set()
    for parameter in signature.parameters.values():
        if parameter.name in (CONTEXT_PARAMETER, CALL_ID_PARAMETER):
            injected.add(parameter.name)
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(parameter.name, Any)
        fields[parameter.name] = _field(annotation, parameter, parameter_docs.get(parameter.name))
    if not fields:
        return injected, None, ()
    from pydantic import ConfigDict, create_model

    model = create_model(f"{name}_arguments", __config__=ConfigDict(arbitrary_types_allowed=True), **fields)
    return injected, model, tuple(fields)


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
    """The parameters' JSON schema as AG2 writes it: each parameter's schema in place (an enum or a
    pydantic model written out, with its title), described by its annotation, its docstring entry or
    else its name."""
    if model is None:
        return {"type": "object", "properties": {}}
    generated = model.model_json_schema()
    properties: dict[str, Any] = {}
    for name, parameter in generated.get("properties", {}).items():
        parameter = {key: value for key, value in parameter.items() if key != "title"}
        parameter.setdefault("description", name)
        properties[name] = parameter
    schema = {"type": "object", "properties": properties, "required": generated.get("required", [])}
    definitions = generated.get("$defs")
    if not definitions:
        return schema
    try:
        return inline_refs({**schema, "$defs": definitions}, keep_titles=True)
    except RecursiveSchema:  # a model that contains itself is referred to, not written out
        return {**schema, "$defs": definitions}


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
