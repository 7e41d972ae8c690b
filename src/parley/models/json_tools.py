"""Tool calls through a JSON schema, for models and servers without reliable native tool calling.

The tools become one JSON schema the reply must match: an ``anyOf`` with one
``{"name": <const>, "arguments": <the tool's parameters>}`` entry per tool and, unless a tool call is
required, a plain-reply entry ``{"content": <string>}``. A server that constrains decoding to the schema
(vLLM, llama.cpp, Ollama, LM Studio, the embedded model) can then only produce a well-formed call to a
real tool, or a plain reply.

Constrained decoding limits which tokens can come out; it does not tell the model what the tools do. So
the tool names, descriptions and parameters are also rendered into the system prompt
(:func:`with_tools_prompt`), and earlier tool calls and results in the conversation are rewritten as
plain messages the server's chat template can render.

The functions here know nothing of any provider SDK::

    schema = tool_call_schema(tools)                   # for {"type": "json_object", "schema": schema}
    request = response_format(tools)                   # OpenAI-style {"type": "json_schema", ...}
    messages = with_tools_prompt(messages, tools)      # the request's messages
    reply = parse_tool_json(text, tools)               # an assistant message, maybe with tool_calls
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from parley.messages import Message, content_str
from parley.models.base import ModelError

#: The key of the plain-reply option: ``{"content": "..."}``.
REPLY_KEY = "content"

ToolSchema = dict[str, Any]


def new_call_id() -> str:
    """A fresh tool-call id."""
    return f"call_{uuid.uuid4().hex[:24]}"


# ----------------------------------------------------------------------------------------------------
# the schema


def tool_call_schema(tools: Sequence[ToolSchema], tool_choice: Any = None) -> dict[str, Any]:
    """The JSON schema of a reply that calls one of ``tools`` or, unless required not to, just answers.

    ``tool_choice`` is OpenAI's: ``"auto"`` or ``None`` (a tool or a plain reply), ``"required"`` (a
    tool), or ``{"type": "function", "function": {"name": ...}}`` (that tool).

    Raises:
        ValueError: ``tool_choice`` names no offered tool, or excludes every option.
    """
    offered = _chosen_tools(tools, tool_choice)
    options = [_tool_option(tool) for tool in offered]
    if _allows_plain_reply(tool_choice):
        options.append(
            {
                "type": "object",
                "properties": {REPLY_KEY: {"type": "string"}},
                "required": [REPLY_KEY],
                "additionalProperties": False,
            }
        )
    if not options:
        raise ValueError(f"tool_choice={tool_choice!r} leaves no tool to call and no plain reply")
    return {"anyOf": options}


def response_format(tools: Sequence[ToolSchema], tool_choice: Any = None) -> dict[str, Any]:
    """The OpenAI ``response_format`` that constrains the reply to :func:`tool_call_schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "tool_call_or_reply", "schema": tool_call_schema(tools, tool_choice)},
    }


def _tool_option(tool: ToolSchema) -> dict[str, Any]:
    function = _function_of(tool)
    arguments = _inline_refs(function.get("parameters") or {"type": "object", "properties": {}})
    if arguments.get("type", "object") == "object":
        arguments.setdefault("type", "object")
        arguments.setdefault("properties", {})
        arguments.setdefault("additionalProperties", False)
    return {
        "type": "object",
        "properties": {"name": {"const": function["name"]}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


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
    """``schema`` with its local ``$ref``s replaced by their definitions, without ``$defs`` and titles."""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}

    def node(value: Any, seen: tuple[str, ...]) -> Any:
        if not isinstance(value, dict):
            return value
        ref = value.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if not ref.startswith(("#/$defs/", "#/definitions/")) or name not in definitions:
                raise ValueError(f"tool schema refers to {ref!r}, which it does not define")
            if name in seen:
                raise ValueError(f"the JSON tool-call mode cannot express the recursive schema {name!r}")
            siblings = {key: item for key, item in value.items() if key != "$ref"}
            return {**node(definitions[name], (*seen, name)), **node(siblings, seen)}
        simplified: dict[str, Any] = {}
        for key, item in value.items():
            if key in ("title", "$defs", "definitions"):
                continue
            if key == "properties" and isinstance(item, dict):
                simplified[key] = {name: node(prop, seen) for name, prop in item.items()}
            elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(item, list):
                simplified[key] = [node(option, seen) for option in item]
            elif key in ("items", "additionalProperties", "not"):
                simplified[key] = node(item, seen)
            else:
                simplified[key] = item
        return simplified

    resolved: dict[str, Any] = node(schema, ())
    return resolved


# ----------------------------------------------------------------------------------------------------
# the prompt


def tools_prompt(tools: Sequence[ToolSchema], tool_choice: Any = None) -> str:
    """The tools, their descriptions and parameters, and the reply format, as text for the system prompt."""
    offered = _chosen_tools(tools, tool_choice)
    if not offered:
        return f'Reply with one JSON object, without calling a tool: {{"{REPLY_KEY}": "<your reply>"}}.'
    lines = ["You can call these tools:"]
    for tool in offered:
        function = _function_of(tool)
        parameters = _inline_refs(function.get("parameters") or {})
        signature = ", ".join(_describe_parameters(parameters))
        description = (function.get("description") or "").strip()
        lines.append(f"- {function['name']}({signature})" + (f": {description}" if description else ""))
        for name, prop in (parameters.get("properties") or {}).items():
            if isinstance(prop, dict) and prop.get("description"):
                lines.append(f"    {name}: {prop['description']}")
    call = '{"name": "<tool name>", "arguments": {<the arguments>}}'
    if _allows_plain_reply(tool_choice):
        lines.append(
            f"Reply with one JSON object. To call a tool: {call}. "
            f'To reply without calling a tool: {{"{REPLY_KEY}": "<your reply>"}}.'
        )
    else:
        lines.append(f"Reply with one JSON object that calls a tool: {call}.")
    return "\n".join(lines)


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
    calls and results are rewritten by :func:`without_native_tool_calls`.
    """
    plain = without_native_tool_calls(messages)
    prompt = tools_prompt(tools, tool_choice)
    if plain and plain[0].get("role") == "system":
        system = content_str(plain[0].get("content"))
        plain[0] = {**plain[0], "content": f"{system}\n\n{prompt}" if system else prompt}
    else:
        plain.insert(0, {"role": "system", "content": prompt})
    return plain


def without_native_tool_calls(messages: Sequence[Message]) -> list[Message]:
    """The conversation with tool calls and results as plain messages.

    An assistant's tool calls become its content, the JSON it would produce in this mode; a tool result
    becomes a user message naming the tool it answers.
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
                rendered.append(_call_json(function))
            text = content_str(message.get("content"))
            plain.append(
                {
                    **{key: value for key, value in message.items() if key != "tool_calls"},
                    "role": "assistant",
                    "content": "\n".join([text, *rendered] if text else rendered),
                }
            )
        else:
            plain.append(message)
    return plain


def _call_json(function: dict[str, Any]) -> str:
    raw = function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw else raw or {}
    except ValueError:
        arguments = raw
    return json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False)


# ----------------------------------------------------------------------------------------------------
# the reply


def parse_tool_json(text: str | None, tools: Sequence[ToolSchema] | None = None) -> Message:
    """The assistant message a reply in this mode stands for.

    ``{"name": ..., "arguments": {...}}`` becomes a message with one OpenAI-style tool call (a fresh
    id, the arguments encoded as JSON); ``{"content": "..."}`` becomes a plain reply. A name that is not
    among ``tools`` is kept: the tool executor answers it with an error the model can correct.

    Raises:
        ModelError: the reply is not JSON, or is JSON of neither shape.
    """
    stripped = _strip_code_fence((text or "").strip())
    if not stripped:
        raise ModelError("the model returned an empty reply in the JSON tool-call mode")
    try:
        reply = json.loads(stripped)
    except ValueError as error:
        raise ModelError(
            f"the model's reply in the JSON tool-call mode is not valid JSON ({error}): {stripped[:300]!r}. "
            "Does the server support response_format with a JSON schema?"
        ) from None
    if isinstance(reply, dict) and isinstance(reply.get("name"), str) and reply["name"]:
        arguments = reply.get("arguments", {})
        encoded = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        call = {
            "id": new_call_id(),
            "type": "function",
            "function": {"name": reply["name"], "arguments": encoded},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    if isinstance(reply, dict) and isinstance(reply.get(REPLY_KEY), str):
        return {"role": "assistant", "content": reply[REPLY_KEY]}
    known = ", ".join(_function_of(tool)["name"] for tool in tools or ()) or "none"
    raise ModelError(
        "the model's reply in the JSON tool-call mode is neither a tool call "
        f'({{"name": ..., "arguments": {{...}}}}; tools: {known}) nor a plain reply '
        f'({{"{REPLY_KEY}": ...}}): {stripped[:300]!r}'
    )


def _strip_code_fence(text: str) -> str:
    if text.startswith("```") and text.endswith("```") and "\n" in text:
        return text[text.index("\n") + 1 : -3].strip()
    return text
