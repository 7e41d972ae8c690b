"""What enters a conversation is checked where it enters: message contents and tool-call arguments.

The property-based tests feed any JSON to both doors: each gives a result or a clear error, never an
uncaught exception of another kind or a hang.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from parley import (
    ConversableAgent,
    FunctionModel,
    GroupChat,
    ScriptedModel,
    json_text,
    register_function,
    tool_call,
)
from parley.messages import MESSAGE_KEYS, to_logged, to_message
from parley.tools import Tool

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
message_keys = st.sampled_from(
    [*MESSAGE_KEYS, "role", "override_role", "type", "text", "image_url"]
) | st.text(max_size=8)
content_parts = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image_url", "audio"])},
    optional={
        "text": json_values,
        "image_url": json_values | st.fixed_dictionaries({"url": st.text(max_size=20)}),
    },
)
message_dicts = st.dictionaries(
    message_keys, json_values | st.lists(content_parts, max_size=3), max_size=6
) | st.fixed_dictionaries(
    {"content": json_values | st.lists(content_parts, max_size=3)},
    optional={"tool_calls": json_values, "name": json_values, "role": json_values},
)


# messages -------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(message=message_dicts | json_values)
def test_any_message_gives_a_message_or_a_clear_error(message):
    try:
        logged = to_logged(message, "speaker")
    except (TypeError, ValueError) as error:
        assert str(error).startswith("the reply of speaker")
        return
    content = logged["content"]
    assert content is None or isinstance(content, str | list)
    if content is None:
        assert logged.get("tool_calls") or logged.get("function_call")
    if isinstance(content, list):
        assert all(part["type"] in ("text", "image_url") for part in content)
    assert isinstance(logged["name"], str)
    assert to_logged(logged, "speaker") == logged


@pytest.mark.parametrize(
    ("message", "error", "text"),
    [
        (
            {"content": 42},
            TypeError,
            "message['content'] must be a string, a list of content parts or None, not int: 42",
        ),
        (
            {"content": {"text": "hi"}},
            TypeError,
            "message['content'] must be a string, a list of content parts",
        ),
        ({"content": ["hi"]}, TypeError, "message['content'][0] must be a content part dict, not str: 'hi'"),
        (
            {"content": [{"type": "text", "text": "hi"}, {"type": "audio", "data": "..."}]},
            ValueError,
            "message['content'][1] has type 'audio'; content parts are of the types ['text', 'image_url']",
        ),
        (
            {"content": [{"type": "text"}]},
            ValueError,
            "message['content'][0] is a text part, so its 'text' must",
        ),
        (
            {"content": [{"type": "image_url", "image_url": {}}]},
            ValueError,
            "message['content'][0] is an image part",
        ),
        ({"content": "hi", "name": 7}, TypeError, "message['name'] must be a string, not int: 7"),
        (
            {"content": None, "tool_calls": "lookup"},
            TypeError,
            "message['tool_calls'] must be a list, not str",
        ),
        (
            {"content": None, "tool_calls": [{"name": "lookup"}]},
            ValueError,
            "message['tool_calls'][0] must be",
        ),
        ({"role": "user"}, ValueError, "message needs 'content' or 'tool_calls'; got keys ['role']"),
        (
            {"content": "hi", "override_role": ["system"]},
            TypeError,
            "message['override_role'] must be a string",
        ),
        (
            42,
            TypeError,
            "message must be a string or a message dict (or a list of content parts), not int: 42",
        ),
    ],
)
def test_bad_messages_are_errors_naming_what_is_wrong(message, error, text):
    with pytest.raises(error) as caught:
        to_message(message)

    assert str(caught.value).startswith(text)


def test_text_and_image_parts_are_a_message():
    parts = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]

    assert to_message({"content": parts, "name": "alice"}) == {"content": parts, "name": "alice"}
    assert to_message(parts) == {"content": parts}


def test_a_chat_refuses_a_message_whose_content_is_a_number():
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel([]), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(
        TypeError, match=r"message\['content'\] must be a string, a list of content parts or None"
    ):
        user.initiate_chat(assistant, message={"content": 42}, silent=True)


def test_a_reply_function_returning_bad_content_is_named():
    assistant = ConversableAgent("assistant", llm_config=False, human_input_mode="NEVER")
    assistant.register_reply([None, ConversableAgent], lambda *args, **kwargs: (True, {"content": 3.5}))
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(TypeError, match=r"the reply of assistant\['content'\] must be a string") as caught:
        user.initiate_chat(assistant, message="hi", max_turns=1, silent=True)

    assert [m["content"] for m in caught.value.chat_result.chat_history] == ["hi"]


# tool arguments -------------------------------------------------------------------------------------


class Unit(Enum):
    CELSIUS = "C"
    FAHRENHEIT = "F"


class Place(BaseModel):
    city: str
    country: str = "IT"


def weather(city: Annotated[str, "The city"], days: int = 1, unit: Unit = Unit.CELSIUS) -> str:
    return f"{city}: sunny for {days} days ({unit.value})"


def route(places: list[Place], mode: Literal["car", "train"] | None = None) -> str:
    return " -> ".join(place.city for place in places)


def ping() -> str:
    return "pong"


def tagged(name: str, **tags: Any) -> str:
    return f"{name} {sorted(tags)}"


TOOLS = [Tool(weather), Tool(route), Tool(ping), Tool(tagged)]


@settings(max_examples=300, deadline=None)
@given(tool=st.sampled_from(TOOLS), arguments=json_values | st.dictionaries(st.text(max_size=8), json_values))
def test_any_json_arguments_give_keyword_arguments_or_a_clear_error(tool, arguments):
    for encoded in (json.dumps(arguments), arguments if isinstance(arguments, dict) else None):
        try:
            parsed = tool.parse_arguments(encoded)
        except ValueError as error:
            assert str(error)
            continue
        assert isinstance(parsed, dict)
        assert tool.func(**parsed) is not None


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=50))
def test_any_text_as_arguments_gives_keyword_arguments_or_a_clear_error(text):
    try:
        parsed = Tool(weather).parse_arguments(text)
    except ValueError:
        return
    assert set(parsed) == {"city", "days", "unit"}


def _loads_or_error(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        return f"Error: {error}"


@settings(max_examples=300, deadline=None)
@given(
    value=json_values,
    before=st.sampled_from(["", " ", "\n", "\ufeff"]),
    after=st.sampled_from(["", " ", "\n\t", "x", "}", ","]),
    cut=st.integers(min_value=0, max_value=3),
)
def test_arguments_and_records_are_decoded_as_json_loads_decodes_them(value, before, after, cut):
    """Decoding (tool arguments, a durable chat's records) skips json.loads' whitespace scans when
    nothing surrounds the value; whatever surrounds it, the result and the error are json.loads'."""
    text = before + json.dumps(value) + after
    for candidate in (text, text[: len(text) - cut]):
        assert _loads_or_error(candidate) == _json_value_or_error(candidate)


def _json_value_or_error(text: str) -> Any:
    try:
        return json_text.loads(text)
    except ValueError as error:
        return f"Error: {error}"


def test_decoded_arguments_are_validated_into_fresh_keyword_arguments():
    tool = Tool(weather)
    first = tool.parse_arguments('{"unit": "F", "city": "Rome"}')
    second = tool.parse_arguments(' {"city": "Rome", "unit": "F"}\n')

    assert first == second == {"city": "Rome", "days": 1, "unit": Unit.FAHRENHEIT}
    assert list(first) == ["city", "days", "unit"]
    first["extra"] = 1
    assert tool.parse_arguments('{"city": "Rome", "unit": "F"}') == second
    with pytest.raises(ValueError, match=r"^the arguments are not valid JSON \(Extra data: "):
        tool.parse_arguments('{"city": "Rome"} x')


def test_deeply_nested_arguments_are_an_error_not_a_crash():
    with pytest.raises(ValueError, match="not valid JSON"):
        Tool(route).parse_arguments("[" * 100_000 + "]" * 100_000)


def test_extra_arguments_are_an_error_naming_them():
    with pytest.raises(ValueError) as caught:
        Tool(weather).parse_arguments({"city": "Rome", "country": "IT", "lang": "it"})

    assert str(caught.value) == "unexpected arguments 'country', 'lang' (weather takes city, days, unit)"


def test_extra_and_missing_arguments_are_named_together():
    with pytest.raises(ValueError) as caught:
        Tool(weather).parse_arguments('{"citty": "Rome"}')

    assert (
        str(caught.value)
        == "unexpected arguments 'citty' (weather takes city, days, unit); city: Field required"
    )


def test_a_tool_without_parameters_names_what_it_was_given():
    with pytest.raises(ValueError, match=r"^unexpected arguments 'loud' \(ping takes no arguments\)$"):
        Tool(ping).parse_arguments({"loud": True})


def test_a_function_with_kwargs_takes_extra_arguments():
    assert Tool(tagged).parse_arguments({"name": "a", "colour": "red"}) == {"name": "a", "colour": "red"}


def test_the_arguments_given_are_not_changed():
    arguments = {"city": "Rome", "lang": "it"}

    with pytest.raises(ValueError):
        Tool(weather).parse_arguments(arguments)
    assert arguments == {"city": "Rome", "lang": "it"}


def test_the_model_is_told_about_extra_arguments_and_the_tool_is_not_run():
    calls = []

    def lookup_order(order_id: int) -> str:
        calls.append(order_id)
        return "shipped"

    model = ScriptedModel(
        [[tool_call("lookup_order", {"order_id": 7, "verbose": True})], "Sorry, let me retry."]
    )
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    register_function(lookup_order, caller=assistant, executor=user, description="Find an order.")

    result = user.initiate_chat(assistant, "Where is order 7?", max_turns=2, silent=True)

    assert result.chat_history[2]["content"] == (
        "Error: invalid arguments for lookup_order: "
        "unexpected arguments 'verbose' (lookup_order takes order_id)"
    )
    assert calls == []
    assert model.requests[1].messages[-1]["content"].startswith("Error: invalid arguments for lookup_order")


@pytest.mark.parametrize(
    "calls",
    [
        "f()",
        ["f"],
        [{"id": "x", "type": "function", "function": "f"}],
        [{"id": "x", "function": {"name": 7}}],
    ],
)
def test_a_model_reply_with_malformed_tool_calls_is_a_model_error_naming_them(calls: Any):
    from parley.models import ModelResponse
    from parley.models.base import ModelError

    assistant = ConversableAgent(
        "assistant",
        llm_config=FunctionModel(
            lambda request: ModelResponse({"role": "assistant", "content": None, "tool_calls": calls})
        ),
        human_input_mode="NEVER",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(ModelError, match="replied with tool calls that are not a list of") as caught:
        user.initiate_chat(assistant, "go", max_turns=1, silent=True)

    assert [m["content"] for m in caught.value.chat_result.chat_history] == ["go"]


@pytest.mark.parametrize(
    ("context", "problem"),
    [
        ([1], "context_variables must be a dict or ContextVariables, not list"),
        ("abc", "context_variables must be a dict or ContextVariables, not str"),
        ({("a", 1): 2}, r"context_variables keys must be strings, not \('a', 1\) \(tuple\)"),
    ],
)
def test_an_agents_context_variables_must_be_a_dict_with_string_keys(context: Any, problem: str):
    with pytest.raises(TypeError, match=problem):
        ConversableAgent("user", llm_config=False, context_variables=context)

    agent = ConversableAgent("user", llm_config=False)
    with pytest.raises(TypeError, match=problem):
        agent.context_variables = context


def test_a_scripted_model_needs_a_list_of_replies():
    with pytest.raises(TypeError, match=r"for one reply write ScriptedModel\(\[reply\]\)"):
        ScriptedModel("Paris.")
    with pytest.raises(TypeError, match="takes a list of replies, not NoneType"):
        ScriptedModel(None)  # type: ignore[arg-type]


def test_register_for_execution_used_without_its_parentheses_says_so():
    agent = ConversableAgent("user", llm_config=False)

    def add(a: int, b: int) -> int:
        return a + b

    with pytest.raises(TypeError, match=r"needs its parentheses: @agent.register_for_execution\(\)"):
        agent.register_for_execution(add)  # type: ignore[arg-type]


def test_hooks_and_reply_functions_that_return_the_wrong_thing_are_named():
    from parley import GroupChat, GroupChatManager

    def quiet(name: str) -> ConversableAgent:
        return ConversableAgent(name, llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")

    with pytest.raises(TypeError, match="a hook must be callable"):
        quiet("a").register_hook("process_last_received_message", "upper")  # type: ignore[arg-type]

    def blank(content: Any) -> Any:
        return None

    listener = quiet("listener")
    listener.register_hook("process_last_received_message", blank)
    with pytest.raises(TypeError, match="blank must return the message's text"):
        quiet("speaker").initiate_chat(listener, "hi", max_turns=1, silent=True)

    def as_text(messages: Any) -> Any:
        return "joined"

    reader = quiet("reader")
    reader.register_hook("process_all_messages_before_reply", as_text)
    with pytest.raises(TypeError, match="as_text must return a list of message dicts"):
        quiet("speaker").initiate_chat(reader, "hi", max_turns=1, silent=True)

    def hello(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        return "hello"

    replier = quiet("replier")
    replier.register_reply([ConversableAgent, None], hello)
    with pytest.raises(TypeError, match=r"hello must return \(final, reply\)"):
        quiet("speaker").initiate_chat(replier, "hi", max_turns=1, silent=True)

    a, b = quiet("a"), quiet("b")
    manager = GroupChatManager(GroupChat([a, b], messages=[], max_round=3), llm_config=False)
    with pytest.raises(ValueError, match=r"start it from the agent, a.initiate_chat\(chat_manager"):
        manager.initiate_chat(a, message="hi", silent=True)

    with pytest.raises(ValueError, match="msg_to must be 'agent' or 'user', not 'assistant'"):
        quiet("c").run(message="hi", msg_to="assistant")


def test_queues_patterns_and_function_maps_of_the_wrong_shape_are_named():
    from parley import DefaultPattern, initiate_chats
    from parley.exceptions import InvalidCarryOverTypeError

    a = ConversableAgent("a", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")
    b = ConversableAgent("b", llm_config=False, human_input_mode="NEVER", default_auto_reply="ok")

    with pytest.raises(TypeError, match="chat_queue must be a list of chats"):
        initiate_chats({"sender": a, "recipient": b, "message": "hi"})  # type: ignore[arg-type]
    with pytest.raises(InvalidCarryOverTypeError, match=r"chat_queue\[0\]'s carryover must be a string"):
        initiate_chats([{"sender": a, "recipient": b, "message": "hi", "max_turns": 1, "carryover": 5}])
    with pytest.raises(TypeError, match="function_map must be a dict of functions by name, not list"):
        ConversableAgent("c", llm_config=False, function_map=[len])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="context_variables must be a dict or ContextVariables, not str"):
        DefaultPattern(initial_agent=a, agents=[a, b], context_variables="x")  # type: ignore[arg-type]


def test_a_single_condition_for_a_list_and_a_name_for_an_agent_are_named():
    from parley import OnCondition, SwarmAgent, Tool
    from parley.group.targets import AgentTarget

    a, b = SwarmAgent("a"), SwarmAgent("b")
    with pytest.raises(TypeError, match="add_llm_conditions takes a list of conditions, not OnCondition"):
        a.handoffs.add_llm_conditions(OnCondition(AgentTarget(b), "to b"))  # type: ignore[arg-type]

    def add(x: int) -> int:
        return x

    with pytest.raises(TypeError, match=r"Tool\.register_for_llm takes the agent to register the tool with"):
        Tool(add).register_for_llm("assistant")


@pytest.mark.parametrize(
    ("parameter", "value", "problem"),
    [
        ("system_message", 5, "system_message must be a string, a list of strings or None, not 5"),
        ("system_message", ["Be brief.", 5], "system_message[1] must be a string, not 5"),
        ("description", 5, "description must be a string or None, not 5"),
        ("default_auto_reply", 5, "default_auto_reply must be a string or a message dict, not 5"),
    ],
)
def test_an_agents_texts_of_the_wrong_type_are_named(parameter: str, value: Any, problem: str):
    with pytest.raises(TypeError) as raised:
        ConversableAgent("helper", llm_config=False, **{parameter: value})
    assert str(raised.value) == problem


def test_a_system_message_given_as_a_list_of_strings_is_one_per_line():
    agent = ConversableAgent("helper", system_message=["Be brief.", "Be kind."], llm_config=False)
    assert agent.system_message == "Be brief.\nBe kind."


@pytest.mark.parametrize(
    "parameter",
    ["func_call_filter", "send_introductions", "enable_clear_history", "select_speaker_auto_verbose"],
)
def test_a_group_chats_switches_must_be_bools(parameter: str):
    members = [ConversableAgent(name, llm_config=False) for name in ("a", "b")]
    with pytest.raises(ValueError) as raised:  # "no" would have switched it on
        GroupChat(members, messages=[], **{parameter: "no"})
    assert str(raised.value) == f"{parameter} must be a bool, not 'no'"
