"""The JSON-schema tool-call mode's building blocks: the schema, the prompt, history and reply parsing."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import BaseModel

from parley.models import ModelError
from parley.models.json_tools import (
    parse_tool_json,
    response_format,
    tool_call_schema,
    tools_prompt,
    with_tools_prompt,
    without_native_tool_calls,
)
from parley.tools import Tool


def get_weather(city: Annotated[str, "The city's name"], unit: str = "C") -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


def transfer_to_billing() -> str:
    """Hand the conversation to the billing specialist."""
    return "ok"


class Address(BaseModel):
    street: str
    city: str


def ship(address: Address, express: bool = False) -> str:
    """Ship the order to an address."""
    return "shipped"


TOOLS = [Tool(get_weather).schema, Tool(transfer_to_billing).schema]


def test_the_schema_has_one_option_per_tool_and_a_plain_reply():
    schema = tool_call_schema(TOOLS)

    weather, billing, plain = schema["anyOf"]
    assert weather["properties"]["name"] == {"const": "get_weather"}
    assert weather["required"] == ["name", "arguments"]
    assert weather["additionalProperties"] is False
    assert weather["properties"]["arguments"]["properties"]["city"]["type"] == "string"
    assert weather["properties"]["arguments"]["required"] == ["city"]
    assert weather["properties"]["arguments"]["additionalProperties"] is False
    assert billing["properties"]["arguments"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert plain == {
        "type": "object",
        "properties": {"content": {"type": "string"}},
        "required": ["content"],
        "additionalProperties": False,
    }


def test_the_schema_uses_only_simple_keywords():
    allowed = {"type", "properties", "required", "const", "enum", "anyOf", "items", "additionalProperties"}
    allowed |= {"description", "default"}
    schema = tool_call_schema([*TOOLS, Tool(ship).schema])

    def keys(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield key
                if key == "properties":
                    for prop in value.values():
                        yield from keys(prop)
                elif key not in ("const", "default", "enum"):
                    yield from keys(value)
        elif isinstance(node, list):
            for item in node:
                yield from keys(item)

    assert set(keys(schema)) <= allowed
    assert "$ref" not in json.dumps(schema)


def test_nested_models_are_inlined():
    option = tool_call_schema([Tool(ship).schema])["anyOf"][0]
    address = option["properties"]["arguments"]["properties"]["address"]
    assert address == {
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        "required": ["street", "city"],
    }


def test_tool_choice_shapes_the_options():
    assert len(tool_call_schema(TOOLS, "required")["anyOf"]) == 2
    only = tool_call_schema(TOOLS, {"type": "function", "function": {"name": "transfer_to_billing"}})
    assert [option["properties"]["name"]["const"] for option in only["anyOf"]] == ["transfer_to_billing"]
    with pytest.raises(ValueError, match="nope"):
        tool_call_schema(TOOLS, {"type": "function", "function": {"name": "nope"}})


def test_response_format_is_openai_json_schema():
    format_ = response_format(TOOLS)
    assert format_["type"] == "json_schema"
    assert format_["json_schema"]["schema"] == tool_call_schema(TOOLS)


def test_the_prompt_names_and_describes_every_tool_and_the_reply_format():
    prompt = tools_prompt(TOOLS)

    assert "- get_weather(city: string, unit?: string): Get the current weather for a city." in prompt
    assert "    city: The city's name" in prompt
    assert "- transfer_to_billing(): Hand the conversation to the billing specialist." in prompt
    assert '{"name": "<tool name>", "arguments": {<the arguments>}}' in prompt
    assert '{"content": "<your reply>"}' in prompt
    assert '"content"' not in tools_prompt(TOOLS, "required")


def test_with_tool_choice_none_the_prompt_asks_for_a_plain_reply_in_json():
    prompt = tools_prompt(TOOLS, "none")

    assert "get_weather" not in prompt
    assert prompt == 'Reply with one JSON object, without calling a tool: {"content": "<your reply>"}.'
    assert tool_call_schema(TOOLS, "none")["anyOf"] == [
        {
            "type": "object",
            "properties": {"content": {"type": "string"}},
            "required": ["content"],
            "additionalProperties": False,
        }
    ]


def test_the_prompt_goes_into_the_system_message():
    messages = [{"role": "system", "content": "You route requests."}, {"role": "user", "content": "hi"}]

    sent = with_tools_prompt(messages, TOOLS)

    assert sent[0]["content"].startswith("You route requests.\n\nYou can call these tools:")
    assert sent[1] == {"role": "user", "content": "hi"}
    assert messages[0]["content"] == "You route requests."
    assert with_tools_prompt([{"role": "user", "content": "hi"}], TOOLS)[0]["role"] == "system"


def test_history_with_tool_calls_becomes_plain_messages():
    messages = [
        {"role": "user", "content": "weather in Paris?", "name": "user"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny in Paris"},
    ]

    plain = without_native_tool_calls(messages)

    assert plain[0] == messages[0]
    assert plain[1] == {
        "role": "assistant",
        "content": '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    }
    assert plain[2] == {"role": "user", "content": "Result of get_weather: sunny in Paris"}


def test_a_tool_call_reply_becomes_an_openai_tool_call_with_a_fresh_id():
    first = parse_tool_json('{"name": "get_weather", "arguments": {"city": "Paris"}}', TOOLS)
    second = parse_tool_json('{"name": "get_weather", "arguments": {"city": "Paris"}}', TOOLS)

    (call,) = first["tool_calls"]
    assert first["role"] == "assistant" and first["content"] is None
    assert call["type"] == "function"
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert call["id"].startswith("call_")
    assert call["id"] != second["tool_calls"][0]["id"]


def test_a_plain_reply_becomes_content():
    assert parse_tool_json('{"content": "Hello!"}', TOOLS) == {"role": "assistant", "content": "Hello!"}
    assert parse_tool_json('```json\n{"content": "fenced"}\n```')["content"] == "fenced"


def test_an_unknown_tool_name_is_kept_for_the_executor_to_answer():
    message = parse_tool_json('{"name": "launch_rockets", "arguments": {}}', TOOLS)
    assert message["tool_calls"][0]["function"]["name"] == "launch_rockets"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("Sure, the weather is sunny.", "not valid JSON"),
        ("", "empty reply"),
        (None, "empty reply"),
        ('{"tool": "get_weather"}', "neither a tool call"),
        ("[1, 2]", "neither a tool call"),
    ],
)
def test_malformed_replies_raise_a_clear_model_error(text, match):
    with pytest.raises(ModelError, match=match):
        parse_tool_json(text, TOOLS)
