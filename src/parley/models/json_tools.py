"""Tool calls through a JSON schema, for models and servers without reliable native tool calling.

Every reply is one JSON object ``{"name": ..., "arguments": {...}}`` that names one of the offered tools
or, unless a tool call is required, :data:`REPLY_TOOL` (``reply_to_user``), whose ``text`` comes back as
an ordinary plain reply. The tools become one JSON schema, an ``anyOf`` with one such entry per name. A
server that constrains decoding to the schema (vLLM, llama.cpp, Ollama, LM Studio, the embedded model)
can then only produce a well-formed call to a real tool, or a plain reply.

Offering the plain reply as one more name, rather than as a separate ``{"content": ...}`` shape, matters
for small models: under constrained decoding the choice is made at the first key, and a separate reply
shape lets the model start answering before it has looked at the names it was shown. (On a 1.5B model
routing a triage swarm: 10/20 requests handed off right with a separate shape, 19/20 with the named one.)

Constrained decoding limits which tokens can come out; it does not tell the model what the tools do. So
the tool names, descriptions and parameters are also rendered into the system prompt
(:func:`with_tools_prompt`), and earlier tool calls and results in the conversation are rewritten as
plain messages any chat template can render.

Servers take the schema in one of two dialects (:data:`DIALECTS`): OpenAI's
``{"type": "json_schema", "json_schema": {"schema": ...}}``, or ``{"type": "json_object", "schema": ...}``
as llama-cpp-python's server does. :func:`send_with_dialect` tries the first, falls back to the other
when a server refuses it, and remembers what each endpoint took.

Models served without constrained decoding often write a tool call as text; :func:`with_text_tool_call`
takes a plain reply that is exactly such a call, naming an offered tool, as that call.

The functions here know nothing of any provider SDK::

    schema = tool_call_schema(tools)                   # for {"type": "json_object", "schema": schema}
    request = response_format(tools)                   # OpenAI-style {"type": "json_schema", ...}
    messages = with_tools_prompt(messages, tools)      # the request's messages
    reply = parse_tool_json(text, tools)               # an assistant message, maybe with tool_calls
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from parley.json_schema import RecursiveSchema, inline_refs
from parley.messages import Message, content_str
from parley.models.base import ModelError
from parley.models.config import RESPONSE_FORMAT_TYPES
from parley.models.streaming import StreamedText

#: The name of the plain-reply choice: ``{"name": "reply_to_user", "arguments": {"text": "..."}}``.
REPLY_TOOL = "reply_to_user"
#: The argument of :data:`REPLY_TOOL` that holds the reply.
REPLY_ARGUMENT = "text"

REPLY_DESCRIPTION = "Answer with a message of your own, when none of the other tools fits."

#: The ways servers take a JSON schema for the reply: OpenAI's ``json_schema`` response format, or a
#: ``json_object`` response format with a ``schema`` (llama-cpp-python's server).
DIALECTS = RESPONSE_FORMAT_TYPES

ToolSchema = dict[str, Any]


def new_call_id() -> str:
    """A fresh tool-call id."""
    return f"call_{uuid.uuid4().hex[:24]}"


# ----------------------------------------------------------------------------------------------------
# the schema


def reply_tool_name(tools: Sequence[ToolSchema]) -> str:
    """The name of the plain-reply choice: :data:`REPLY_TOOL`, suffixed if a tool already has it."""
    taken = {_function_of(tool)["name"] for tool in tools}
    name, suffix = REPLY_TOOL, 2
    while name in taken:
        name, suffix = f"{REPLY_TOOL}_{suffix}", suffix + 1
    return name


def tool_call_schema(tools: Sequence[ToolSchema], tool_choice: Any = None) -> dict[str, Any]:
    """The JSON schema of a reply that calls one of ``tools`` or, unless required not to, just answers.

    ``tool_choice`` is OpenAI's: ``"auto"`` or ``None`` (a tool or a plain reply), ``"required"`` (a
    tool), ``"none"`` (a plain reply) or ``{"type": "function", "function": {"name": ...}}`` (that tool).
    The plain reply is the :data:`REPLY_TOOL` entry.

    Raises:
        ValueError: ``tool_choice`` names no offered tool.
    """
    return {"anyOf": [_option(name, arguments) for name, arguments in choices(tools, tool_choice).items()]}


def choices(tools: Sequence[ToolSchema], tool_choice: Any = None) -> dict[str, dict[str, Any]]:
    """The names a reply may call under ``tool_choice``, in order, each with its arguments' schema (the
    plain reply, :data:`REPLY_TOOL`, last)."""
    named = {
        _function_of(tool)["name"]: _arguments_schema(_function_of(tool))
        for tool in _chosen_tools(tools, tool_choice)
    }
    if _allows_plain_reply(tool_choice):
        named[reply_tool_name(tools)] = _reply_arguments()
    return named


def call_head(name: str) -> str:
    """How a reply that calls ``name`` starts, up to its arguments."""
    return f'{{"name": {json.dumps(name)}, "arguments": '


def response_format(
    tools: Sequence[ToolSchema], tool_choice: Any = None, dialect: str = "json_schema"
) -> dict[str, Any]:
    """The ``response_format`` that constrains the reply to :func:`tool_call_schema`, in ``dialect``."""
    schema = tool_call_schema(tools, tool_choice)
    if dialect == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": schema}}
    if dialect == "json_object":
        return {"type": "json_object", "schema": schema}
    raise ValueError(f"response_format_type must be one of {DIALECTS}, not {dialect!r}")


def _option(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _reply_arguments() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {REPLY_ARGUMENT: {"type": "string"}},
        "required": [REPLY_ARGUMENT],
        "additionalProperties": False,
    }


def _arguments_schema(function: dict[str, Any]) -> dict[str, Any]:
    arguments = _inline_refs(function.get("parameters") or {"type": "object", "properties": {}})
    if arguments.get("type", "object") == "object":
        arguments.setdefault("type", "object")
        arguments.setdefault("properties", {})
        arguments.setdefault("additionalProperties", False)
    return arguments


def _chosen_tools(tools: Sequence[ToolSchema], tool_choice: Any) -> list[ToolSchema]:
    if tool_choice == "none":
        return []
    if isinstance(tool_choice, dict):
        wanted = (tool_choice.get("function") or {}).get("name") or tool_choice.get("name")
        chosen = [tool for tool in tools if _function_of(tool)["name"] == wanted]
        if not chosen:
            raise ValueError(f"tool_choice names {wanted!r}, which is not among the tools offered")
        return chosen
    return list(tools)


def _allows_plain_reply(tool_choice: Any) -> bool:
    return tool_choice is None or tool_choice in ("auto", "none")


def _function_of(tool: ToolSchema) -> dict[str, Any]:
    function = tool.get("function", tool)
    if not isinstance(function, dict) or not function.get("name"):
        raise ValueError(f"not an OpenAI tool schema (no function name): {tool!r:.200}")
    return function


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` written out in place, without titles, as constrained decoding takes it."""
    try:
        return inline_refs(schema, keep_titles=False)
    except RecursiveSchema as error:
        raise ValueError(f"the JSON tool-call mode cannot express a recursive schema: {error}") from None


# ----------------------------------------------------------------------------------------------------
# the prompt


def tools_prompt(tools: Sequence[ToolSchema], tool_choice: Any = None) -> str:
    """The tools, their descriptions and parameters, and the reply format, as text for the system prompt.

    The plain reply is listed as one more tool, :data:`REPLY_TOOL`, when ``tool_choice`` allows one.
    """
    offered = _chosen_tools(tools, tool_choice)
    lines = ["You can call these tools:"]
    for tool in offered:
        function = _function_of(tool)
        parameters = _inline_refs(function.get("parameters") or {})
        lines.append(_tool_line(function["name"], parameters, function.get("description")))
        for name, prop in (parameters.get("properties") or {}).items():
            described = prop.get("description") if isinstance(prop, dict) else None
            if described and described != name:  # a name as its own description says nothing more
                lines.append(f"    {name}: {described}")
    if _allows_plain_reply(tool_choice):
        reply = _reply_arguments()
        description = REPLY_DESCRIPTION if offered else "Answer with a message of your own."
        lines.append(_tool_line(reply_tool_name(tools), reply, description))
    call = '{"name": "<tool name>", "arguments": {<the arguments>}}'
    lines.append(f"Reply with one JSON object that calls one of them: {call}.")
    return "\n".join(lines)


def _tool_line(name: str, parameters: dict[str, Any], description: Any) -> str:
    signature = ", ".join(_describe_parameters(parameters))
    text = (description or "").strip() if isinstance(description, str) else ""
    return f"- {name}({signature})" + (f": {text}" if text else "")


def _describe_parameters(parameters: dict[str, Any]) -> Iterable[str]:
    required = set(parameters.get("required") or ())
    for name, prop in (parameters.get("properties") or {}).items():
        marker = "" if name in required else "?"
        yield f"{name}{marker}: {_type_text(prop)}"


def _type_text(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(value) for value in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(_type_text(option) for option in schema[key])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(item) for item in kind)
    if kind == "array":
        return f"array of {_type_text(schema.get('items'))}"
    if kind == "object" and schema.get("properties"):
        return "{" + ", ".join(_describe_parameters(schema)) + "}"
    return str(kind or "any")


def with_tools_prompt(
    messages: Sequence[Message], tools: Sequence[ToolSchema], tool_choice: Any = None
) -> list[Message]:
    """The request's messages for the JSON tool-call mode.

    The :func:`tools_prompt` is appended to the first system message (or becomes one), and earlier tool
    calls and results are rewritten by :func:`without_native_tool_calls`. The model's own earlier plain
    replies are shown as it wrote them in this mode, as :data:`REPLY_TOOL` calls.
    """
    plain = without_native_tool_calls(messages, reply_tool=reply_tool_name(tools), calls_as_json=True)
    prompt = tools_prompt(tools, tool_choice)
    if plain and plain[0].get("role") == "system":
        system = content_str(plain[0].get("content"))
        plain[0] = {**plain[0], "content": f"{system}\n\n{prompt}" if system else prompt}
    else:
        plain.insert(0, {"role": "system", "content": prompt})
    return plain


def without_native_tool_calls(
    messages: Sequence[Message], *, reply_tool: str | None = None, calls_as_json: bool = False
) -> list[Message]:
    """The conversation with tool calls and results as plain messages.

    An assistant's tool calls become its content: a line such as ``Called refund(charge_id="CH-1").``,
    or with ``calls_as_json`` the JSON it would produce in this mode (for a request that offers tools;
    a model asked without tools imitates JSON it is shown). A tool result becomes a user message naming
    the tool it answers. With ``reply_tool``, an assistant's plain reply becomes a call of that tool too.
    """
    names: dict[str, str] = {}
    plain: list[Message] = []
    for message in messages:
        calls = message.get("tool_calls")
        if message.get("role") == "tool":
            name = names.get(message.get("tool_call_id") or "", "the tool")
            plain.append(
                {"role": "user", "content": f"Result of {name}: {content_str(message.get('content'))}"}
            )
        elif calls:
            rendered = []
            for call in calls:
                function = call.get("function") or {}
                names[call.get("id") or ""] = function.get("name") or "the tool"
                rendered.append(_call_json(function) if calls_as_json else _call_text(function))
            text = content_str(message.get("content"))
            plain.append(
                {
                    **{key: value for key, value in message.items() if key != "tool_calls"},
                    "role": "assistant",
                    "content": "\n".join([text, *rendered] if text else rendered),
                }
            )
        elif reply_tool is not None and message.get("role") == "assistant":
            arguments = {REPLY_ARGUMENT: content_str(message.get("content"))}
            plain.append({**message, "content": _call_json({"name": reply_tool, "arguments": arguments})})
        else:
            plain.append(message)
    return plain


def _call_text(function: dict[str, Any]) -> str:
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw else raw or {}
    except ValueError:
        arguments = raw
    if isinstance(arguments, dict):
        listed = ", ".join(
            f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in arguments.items()
        )
    else:
        listed = str(arguments)
    return f"Called {function.get('name') or 'a tool'}({listed})."


def _call_json(function: dict[str, Any]) -> str:
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw else raw or {}
    except ValueError:
        arguments = raw
    return json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False)


# ----------------------------------------------------------------------------------------------------
# the reply


def parse_tool_json(
    text: str | None, tools: Sequence[ToolSchema] | None = None, *, cut_off: bool = False
) -> Message:
    """The assistant message a reply in this mode stands for.

    ``{"name": ..., "arguments": {...}}`` becomes a message with one OpenAI-style tool call (a fresh
    id, the arguments encoded as JSON), or a plain reply when the name is :data:`REPLY_TOOL`. A name
    that is not among ``tools`` is kept: the tool executor answers it with an error the model can
    correct. A plain reply ``cut_off`` at the token limit comes back as far as it got, as a plain-text
    reply would.

    Raises:
        ModelError: the reply is not JSON, or is not of that shape (a tool call cut off included).
    """
    stripped = _strip_code_fence((text or "").strip())
    if not stripped:
        raise ModelError("the model returned an empty reply in the JSON tool-call mode")
    try:
        reply = json.loads(stripped)
    except ValueError as error:
        partial = ToolJsonReader(tools or ())
        partial.feed(stripped)
        so_far = partial.reply_so_far() if cut_off else None
        if so_far is not None:
            return {"role": "assistant", "content": so_far}
        if cut_off:
            raise ModelError(
                f"the model was cut off at its token limit before its JSON reply ended: {stripped[:300]!r}; "
                "raise max_tokens"
            ) from None
        raise ModelError(
            f"the model's reply in the JSON tool-call mode is not valid JSON ({error}): {stripped[:300]!r}. "
            "Does the server support response_format with a JSON schema?"
        ) from None
    reply_tool = reply_tool_name(tools or ())
    if isinstance(reply, dict) and isinstance(reply.get("name"), str) and reply["name"]:
        arguments = reply.get("arguments", {})
        if reply["name"] == reply_tool and isinstance(arguments, dict):
            said = arguments.get(REPLY_ARGUMENT)
            if isinstance(said, str):
                return {"role": "assistant", "content": said}
        return _tool_call_message([(reply["name"], arguments)])
    known = ", ".join(_function_of(tool)["name"] for tool in tools or ()) or "none"
    raise ModelError(
        'the model\'s reply in the JSON tool-call mode is not {"name": ..., "arguments": {...}} '
        f"(tools: {known}; {reply_tool} for a plain reply): {stripped[:300]!r}"
    )


def _tool_call_message(calls: Sequence[tuple[str, Any]]) -> Message:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": new_call_id(),
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments
                    if isinstance(arguments, str)
                    else json.dumps(arguments, ensure_ascii=False),
                },
            }
            for name, arguments in calls
        ],
    }


_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n?```$", re.DOTALL)
_TOOL_CALL_TAGS = re.compile(r"^<tool_call>\s*(.*?)\s*</tool_call>$", re.DOTALL)


def _strip_code_fence(text: str) -> str:
    fenced = _FENCE.match(text)
    return fenced.group(1).strip() if fenced else text


def with_text_tool_call(
    reply: Message, tools: Sequence[ToolSchema] | None, tool_choice: Any = None
) -> Message:
    """``reply``, or the tool call its text is, when the text is exactly a tool call naming an offered tool
    (and ``tool_choice`` is not ``"none"``).

    Models served without constrained decoding often write a call as text instead of a native tool
    call: ``{"name": ..., "arguments": {...}}`` (or ``"parameters"``), a list of such, either in a
    fenced code block or in ``<tool_call>`` tags. Anything else (other JSON, other names, text around
    the JSON) stays a plain reply.
    """
    text = reply.get("content")
    if not tools or tool_choice == "none" or reply.get("tool_calls") or not isinstance(text, str):
        return reply
    calls = text_tool_calls(text, tools)
    return _tool_call_message(calls) if calls else reply


def text_tool_calls(text: str, tools: Sequence[ToolSchema]) -> list[tuple[str, Any]]:
    """The ``(name, arguments)`` of the tool calls ``text`` is exactly, each naming an offered tool;
    empty when it is anything else."""
    stripped = _strip_code_fence(text.strip())
    tagged = _TOOL_CALL_TAGS.match(stripped)
    if tagged:
        stripped = tagged.group(1)
    if not stripped.startswith(("{", "[")):
        return []
    try:
        value = json.loads(stripped)
    except ValueError:
        return []
    items = value if isinstance(value, list) else [value]
    names = {_function_of(tool)["name"] for tool in tools}
    calls: list[tuple[str, Any]] = []
    for item in items:
        call = _text_call(item)
        if call is None or call[0] not in names:
            return []
        calls.append(call)
    return calls


_TEXT_CALL_KEYS = frozenset({"name", "arguments", "parameters", "type", "id"})


def _text_call(item: Any) -> tuple[str, Any] | None:
    """``(name, arguments)`` of one call written as JSON: ``{"name", "arguments" | "parameters"}``, maybe
    with ``"type": "function"`` and an ``"id"``, or OpenAI's ``{"type": "function", "function": {...}}``."""
    if not isinstance(item, dict) or item.get("type", "function") != "function":
        return None
    if isinstance(item.get("function"), dict) and set(item) <= {"function", "type", "id"}:
        item = item["function"]
    if not isinstance(item.get("name"), str) or not set(item) <= _TEXT_CALL_KEYS:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    return (item["name"], arguments) if isinstance(arguments, dict) else None


# ----------------------------------------------------------------------------------------------------
# reading a reply as it is generated


_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"')
_ARGUMENTS = re.compile(r'\s*,\s*"arguments"\s*:\s*')
_REPLY_TEXT = re.compile(r'\{\s*"' + REPLY_ARGUMENT + r'"\s*:\s*"')


class ToolJsonReader:
    """Reads a reply of the JSON tool-call mode while it is generated, for streaming and cut-off replies.

    :meth:`feed` takes each piece of generated text and returns what can be shown of it so far: the
    decoded text of a plain reply, or the raw JSON of a tool call's arguments (tagged with the tool).
    """

    def __init__(self, tools: Sequence[ToolSchema]) -> None:
        self.tools = {_function_of(tool)["name"]: _function_of(tool) for tool in tools}
        self.reply_tool = reply_tool_name(tools)
        self.text = ""
        self._shown = 0

    @property
    def name(self) -> str | None:
        """The name the reply calls, once it is complete."""
        head = _HEAD.match(self.text)
        if head is None:
            return None
        try:
            name = json.loads(f'"{head.group(1)}"')
        except ValueError:
            return None
        return str(name)

    def feed(self, piece: str) -> list[StreamedText]:
        """Add ``piece`` to the reply; return the new text there is to show."""
        self.text += piece
        name = self.name
        if name is None:
            return []
        if name == self.reply_tool:
            shown, self._shown = self._shown, len(said := self.reply_so_far() or "")
            return [StreamedText(said[shown:])] if len(said) > shown else []
        arguments = self._arguments_so_far()
        shown, self._shown = self._shown, len(arguments)
        return [StreamedText(arguments[shown:], tool_call=name)] if len(arguments) > shown else []

    def reply_so_far(self) -> str | None:
        """The text of a plain reply as far as it got; ``None`` when the reply is not a plain reply."""
        head = _HEAD.match(self.text)
        if head is None or self.name != self.reply_tool:
            return None
        arguments = _ARGUMENTS.match(self.text, head.end())
        opening = _REPLY_TEXT.match(self.text, arguments.end()) if arguments else None
        return _decoded_prefix(self.text[opening.end() :]) if opening else ""

    def forced_call(self) -> str | None:
        """The whole reply, when what is left of it is forced by the schema: the model has named a
        tool that takes no arguments. ``None`` otherwise."""
        name = self.name
        function = self.tools.get(name) if name is not None else None
        if function is None or _arguments_schema(function) != _NO_ARGUMENTS:
            return None
        return json.dumps({"name": name, "arguments": {}})

    def _arguments_so_far(self) -> str:
        head = _HEAD.match(self.text)
        arguments = _ARGUMENTS.match(self.text, head.end()) if head else None
        if arguments is None:
            return ""
        raw = self.text[arguments.end() :]
        return raw[: _json_value_end(raw)]


_NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


def _decoded_prefix(body: str) -> str:
    """The decoded text of a JSON string's body (after its opening quote), as far as it is complete."""
    end = 0
    index = 0
    while index < len(body):
        char = body[index]
        if char == '"':
            break
        if char == "\\":
            if index + 1 >= len(body):
                break
            step = 6 if body[index + 1] == "u" else 2
            if index + step > len(body):
                break
            if step == 6 and 0xD800 <= int(body[index + 2 : index + 6], 16) <= 0xDBFF:
                if index + 12 > len(body):  # wait for the low surrogate
                    break
                step = 12
            index += step
        else:
            index += 1
        end = index
    try:
        return str(json.loads(f'"{body[:end]}"'))
    except ValueError:
        return ""


def _json_value_end(text: str) -> int:
    """Where the JSON object or array at the start of ``text`` ends, or ``len(text)`` if it has not yet."""
    depth = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth <= 0:
                return index + 1
    return len(text)


# ----------------------------------------------------------------------------------------------------
# the server's dialect

Result = TypeVar("Result")

_dialects: dict[str, str] = {}
_dialects_lock = threading.Lock()


def dialect_for(endpoint: str, configured: str | None = None) -> str:
    """The dialect to ask ``endpoint`` in: ``configured``, else the one it took before, else
    ``json_schema``."""
    if configured is not None:
        if configured not in DIALECTS:
            raise ValueError(f"response_format_type must be one of {DIALECTS}, not {configured!r}")
        return configured
    with _dialects_lock:
        return _dialects.get(endpoint, DIALECTS[0])


def send_with_dialect(
    endpoint: str,
    configured: str | None,
    request: dict[str, Any],
    send: Callable[[dict[str, Any]], Result],
) -> Result:
    """``send(request)`` with this mode's ``response_format`` in the dialect ``endpoint`` takes.

    Unless ``configured`` fixes the dialect, a refusal of one dialect (:func:`refused_response_format`)
    is retried once in the other, and the one that worked is remembered.
    """
    first, second = _attempts(endpoint, configured, request)
    try:
        return send(first)
    except Exception as error:
        if second is None or not refused_response_format(error):
            raise
    result = send(second)
    _remember(endpoint, second)
    return result


async def a_send_with_dialect(
    endpoint: str,
    configured: str | None,
    request: dict[str, Any],
    send: Callable[[dict[str, Any]], Awaitable[Result]],
) -> Result:
    """Async twin of :func:`send_with_dialect`."""
    first, second = _attempts(endpoint, configured, request)
    try:
        return await send(first)
    except Exception as error:
        if second is None or not refused_response_format(error):
            raise
    result = await send(second)
    _remember(endpoint, second)
    return result


def _attempts(
    endpoint: str, configured: str | None, request: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    schema = _schema_of(request.get("response_format"))
    if schema is None:
        return request, None
    dialect = dialect_for(endpoint, configured)
    first = {**request, "response_format": _in_dialect(schema, dialect)}
    if configured is not None:
        return first, None
    other = next(name for name in DIALECTS if name != dialect)
    return first, {**request, "response_format": _in_dialect(schema, other)}


def _schema_of(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    elif response_format.get("type") == "json_object":
        schema = response_format.get("schema")
    else:
        schema = None
    return schema if isinstance(schema, dict) else None


def _in_dialect(schema: dict[str, Any], dialect: str) -> dict[str, Any]:
    if dialect == "json_object":
        return {"type": "json_object", "schema": schema}
    return {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": schema}}


def _remember(endpoint: str, request: dict[str, Any]) -> None:
    with _dialects_lock:
        _dialects[endpoint] = request["response_format"]["type"]


def refused_response_format(error: BaseException) -> bool:
    """Whether ``error`` is a server refusing the request's ``response_format``: an HTTP 400 or 422, or
    the 500 llama-cpp-python's server answers a request it cannot validate with, that names it."""
    text = str(error).lower()
    return getattr(error, "status_code", None) in (400, 422, 500) and (
        "response_format" in text or "json_schema" in text
    )
