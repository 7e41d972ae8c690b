"""The JSON-schema tool-call mode's building blocks: the schema, the prompt, history and reply parsing."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import BaseModel

from parley.models import ModelError
from parley.models.json_tools import (
    ToolJsonReader,
    a_send_with_dialect,
    dialect_for,
    parse_tool_json,
    response_format,
    send_with_dialect,
    text_tool_calls,
    tool_call_schema,
    tools_prompt,
    with_text_tool_call,
    with_tools_prompt,
    without_native_tool_calls,
)
from parley.models.streaming import StreamedText
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


REPLY = {
    "type": "object",
    "properties": {
        "name": {"const": "reply_to_user"},
        "arguments": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
    "required": ["name", "arguments"],
    "additionalProperties": False,
}


def test_the_schema_has_one_option_per_tool_and_the_plain_reply_as_one_more_name():
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
    assert plain == REPLY


def test_a_tool_named_like_the_plain_reply_keeps_its_name():
    def reply_to_user(text: str) -> str:
        """Post a reply on the forum."""
        return "posted"

    tools = [Tool(reply_to_user).schema]
    names = [option["properties"]["name"]["const"] for option in tool_call_schema(tools)["anyOf"]]

    assert names == ["reply_to_user", "reply_to_user_2"]
    call = parse_tool_json('{"name": "reply_to_user", "arguments": {"text": "hi"}}', tools)
    assert call["tool_calls"][0]["function"]["name"] == "reply_to_user"
    plain = parse_tool_json('{"name": "reply_to_user_2", "arguments": {"text": "hi"}}', tools)
    assert plain == {"role": "assistant", "content": "hi"}


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
        "description": "address",
    }


def test_tool_choice_shapes_the_options():
    assert len(tool_call_schema(TOOLS, "required")["anyOf"]) == 2
    only = tool_call_schema(TOOLS, {"type": "function", "function": {"name": "transfer_to_billing"}})
    assert [option["properties"]["name"]["const"] for option in only["anyOf"]] == ["transfer_to_billing"]
    assert tool_call_schema(TOOLS, "none")["anyOf"] == [REPLY]
    with pytest.raises(ValueError, match="nope"):
        tool_call_schema(TOOLS, {"type": "function", "function": {"name": "nope"}})


def test_response_format_speaks_both_dialects():
    openai_style = response_format(TOOLS)
    llama_cpp_style = response_format(TOOLS, dialect="json_object")

    assert openai_style["type"] == "json_schema"
    assert openai_style["json_schema"]["schema"] == tool_call_schema(TOOLS)
    assert llama_cpp_style == {"type": "json_object", "schema": tool_call_schema(TOOLS)}
    with pytest.raises(ValueError, match="response_format_type"):
        response_format(TOOLS, dialect="grammar")


def test_the_prompt_names_and_describes_every_tool_and_the_plain_reply_among_them():
    prompt = tools_prompt(TOOLS)

    assert prompt.splitlines() == [
        "You can call these tools:",
        "- get_weather(city: string, unit?: string): Get the current weather for a city.",
        "    city: The city's name",
        "- transfer_to_billing(): Hand the conversation to the billing specialist.",
        "- reply_to_user(text: string): Answer with a message of your own, when none of the other tools "
        "fits.",
        "Reply with one JSON object that calls one of them: "
        '{"name": "<tool name>", "arguments": {<the arguments>}}.',
    ]
    assert "reply_to_user" not in tools_prompt(TOOLS, "required")
    assert '"content"' not in prompt


def test_with_tool_choice_none_the_prompt_offers_only_the_plain_reply():
    prompt = tools_prompt(TOOLS, "none")

    assert "get_weather" not in prompt
    assert "- reply_to_user(text: string): Answer with a message of your own." in prompt


def test_the_prompt_goes_into_the_system_message():
    messages = [{"role": "system", "content": "You route requests."}, {"role": "user", "content": "hi"}]

    sent = with_tools_prompt(messages, TOOLS)

    assert sent[0]["content"].startswith("You route requests.\n\nYou can call these tools:")
    assert sent[1] == {"role": "user", "content": "hi"}
    assert messages[0]["content"] == "You route requests."
    assert with_tools_prompt([{"role": "user", "content": "hi"}], TOOLS)[0]["role"] == "system"


def test_the_models_own_plain_replies_are_shown_as_it_wrote_them():
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello! What do you need?", "name": "triage"},
        {"role": "user", "content": "a refund"},
    ]

    sent = with_tools_prompt(messages, TOOLS)

    assert json.loads(sent[2]["content"]) == {
        "name": "reply_to_user",
        "arguments": {"text": "Hello! What do you need?"},
    }
    assert sent[3] == messages[2]
    assert without_native_tool_calls(messages)[1] == messages[1]


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
    for_the_mode = with_tools_prompt(messages, TOOLS)

    assert plain[0] == messages[0]
    assert plain[1] == {"role": "assistant", "content": 'Called get_weather(city="Paris").'}
    assert plain[2] == {"role": "user", "content": "Result of get_weather: sunny in Paris"}
    assert for_the_mode[2] == {
        "role": "assistant",
        "content": '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    }
    assert for_the_mode[3] == plain[2]


def test_a_tool_call_reply_becomes_an_openai_tool_call_with_a_fresh_id():
    first = parse_tool_json('{"name": "get_weather", "arguments": {"city": "Paris"}}', TOOLS)
    second = parse_tool_json('{"name": "get_weather", "arguments": {"city": "Paris"}}', TOOLS)

    (call,) = first["tool_calls"]
    assert first["role"] == "assistant" and first["content"] is None
    assert call["type"] == "function"
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert call["id"].startswith("call_")
    assert call["id"] != second["tool_calls"][0]["id"]


def test_the_plain_reply_becomes_content():
    reply = '{"name": "reply_to_user", "arguments": {"text": "Hello!"}}'
    assert parse_tool_json(reply, TOOLS) == {"role": "assistant", "content": "Hello!"}
    assert parse_tool_json(f"```json\n{reply}\n```", TOOLS)["content"] == "Hello!"


def test_a_plain_reply_cut_off_is_kept_as_far_as_it_got_and_a_tool_call_cut_off_is_an_error():
    reply = '{"name": "reply_to_user", "arguments": {"text": "Your refund is on its w'
    call = '{"name": "get_weather", "arguments": {"city": "Par'

    assert parse_tool_json(reply, TOOLS, cut_off=True) == {
        "role": "assistant",
        "content": "Your refund is on its w",
    }
    with pytest.raises(ModelError, match="not valid JSON"):
        parse_tool_json(reply, TOOLS)
    with pytest.raises(ModelError, match="cut off at its token limit"):
        parse_tool_json(call, TOOLS, cut_off=True)


def test_an_unknown_tool_name_is_kept_for_the_executor_to_answer():
    message = parse_tool_json('{"name": "launch_rockets", "arguments": {}}', TOOLS)
    assert message["tool_calls"][0]["function"]["name"] == "launch_rockets"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("Sure, the weather is sunny.", "not valid JSON"),
        ("", "empty reply"),
        (None, "empty reply"),
        ('{"tool": "get_weather"}', "is not"),
        ('{"content": "the old plain reply"}', "is not"),
        ("[1, 2]", "is not"),
    ],
)
def test_malformed_replies_raise_a_clear_model_error(text, match):
    with pytest.raises(ModelError, match=match):
        parse_tool_json(text, TOOLS)


# ----------------------------------------------------------------------------------------------------
# a tool call written as text


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
        '```\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n```',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}',
        '[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
    ],
)
def test_a_text_reply_that_is_exactly_a_tool_call_is_taken_as_that_call(text):
    reply = with_text_tool_call({"role": "assistant", "content": text}, TOOLS)

    (call,) = reply["tool_calls"]
    assert reply["content"] is None
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert call["id"].startswith("call_")


@pytest.mark.parametrize(
    "text",
    [
        "Sure! I'll check the weather.",
        'Calling {"name": "get_weather", "arguments": {"city": "Paris"}} now',
        '{"name": "launch_rockets", "arguments": {}}',
        '{"name": "get_weather", "arguments": {"city": "Paris"}, "why": "asked"}',
        '{"name": "get_weather", "arguments": [1]}',
        '[{"name": "get_weather", "arguments": {}}, {"name": "nope", "arguments": {}}]',
        '{"city": "Paris"}',
        "{not json",
    ],
)
def test_any_other_text_stays_a_plain_reply(text):
    reply = {"role": "assistant", "content": text}

    assert with_text_tool_call(reply, TOOLS) is reply


def test_text_tool_calls_are_not_taken_when_no_tools_are_offered_or_tool_choice_is_none():
    text = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    reply = {"role": "assistant", "content": text}

    assert with_text_tool_call(reply, None) is reply
    assert with_text_tool_call(reply, TOOLS, "none") is reply
    assert text_tool_calls(text, TOOLS) == [("get_weather", {"city": "Paris"})]


# ----------------------------------------------------------------------------------------------------
# reading a reply as it is generated


def feed_all(reader: ToolJsonReader, text: str, size: int = 3) -> list[StreamedText]:
    shown: list[StreamedText] = []
    for start in range(0, len(text), size):
        shown.extend(reader.feed(text[start : start + size]))
    return shown


def test_a_plain_reply_is_shown_as_its_decoded_text_while_it_is_generated():
    said = 'Caf\\u00e9 \\"Le Nord\\" \\ud83d\\ude00 is open.\\n'
    text = '{"name": "reply_to_user", "arguments": {"text": "' + said + '"}}'
    reader = ToolJsonReader(TOOLS)

    shown = feed_all(reader, text)

    assert all(piece.tool_call is None for piece in shown)
    assert "".join(piece.text for piece in shown) == 'Café "Le Nord" 😀 is open.\n'
    assert reader.reply_so_far() == 'Café "Le Nord" 😀 is open.\n'
    assert reader.forced_call() is None


def test_a_tool_call_is_shown_as_its_arguments_tagged_with_the_tool():
    text = '{ "name": "get_weather", "arguments": {"city": "Paris {north}", "unit": "C"} }'
    reader = ToolJsonReader(TOOLS)

    shown = feed_all(reader, text, size=2)

    assert {piece.tool_call for piece in shown} == {"get_weather"}
    assert "".join(piece.text for piece in shown) == '{"city": "Paris {north}", "unit": "C"}'
    assert reader.reply_so_far() is None


def test_a_reply_cut_off_keeps_the_text_so_far_and_a_tool_without_arguments_is_forced_once_named():
    cut = ToolJsonReader(TOOLS)
    cut.feed('{"name": "reply_to_user", "arguments": {"text": "Your refund is on its w')
    named = ToolJsonReader(TOOLS)
    named.feed('{"name": "transfer_to_bil')
    before = named.forced_call()
    named.feed('ling"')

    assert cut.reply_so_far() == "Your refund is on its w"
    assert before is None
    assert json.loads(named.forced_call() or "") == {"name": "transfer_to_billing", "arguments": {}}


# ----------------------------------------------------------------------------------------------------
# the server's dialect


class Refused(Exception):
    status_code = 422


class Unrelated(Exception):
    status_code = 400


def test_a_refused_dialect_is_retried_in_the_other_and_remembered():
    sent: list[dict] = []

    def send(request: dict) -> str:
        sent.append(request["response_format"])
        if request["response_format"]["type"] == "json_schema":
            raise Refused("response_format: Input should be 'text' or 'json_object'")
        return "answered"

    request = {"model": "m", "response_format": response_format(TOOLS)}

    assert send_with_dialect("http://127.0.0.1:1/v1", None, request, send) == "answered"
    assert send_with_dialect("http://127.0.0.1:1/v1", None, request, send) == "answered"
    assert [format_["type"] for format_ in sent] == ["json_schema", "json_object", "json_object"]
    assert sent[1] == {"type": "json_object", "schema": tool_call_schema(TOOLS)}
    assert dialect_for("http://127.0.0.1:1/v1") == "json_object"
    assert dialect_for("http://127.0.0.1:2/v1") == "json_schema"


async def test_a_configured_dialect_is_not_retried_and_other_errors_are_raised():
    async def refuse(request: dict) -> str:
        raise Refused("no")

    async def fail(request: dict) -> str:
        raise Unrelated("the model does not exist")

    request = {"model": "m", "response_format": response_format(TOOLS)}

    with pytest.raises(Refused):
        await a_send_with_dialect("http://127.0.0.1:3/v1", "json_schema", request, refuse)
    with pytest.raises(Unrelated):
        await a_send_with_dialect("http://127.0.0.1:3/v1", None, request, fail)
    assert await a_send_with_dialect("http://127.0.0.1:3/v1", None, {"model": "m"}, _answer) == "plain"


async def _answer(request: dict) -> str:
    assert "response_format" not in request
    return "plain"
