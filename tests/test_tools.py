"""Tools: schemas from signatures, context injection, execution, concurrency and every error path."""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from parley import (
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    ScriptedModel,
    StopKind,
    SwarmResult,
    Tool,
    initiate_swarm_chat,
    register_function,
    tool_call,
)
from parley.coroutines import run_sync
from parley.tool_calls import run_only_call, run_tool_calls
from parley.tools import ToolDefinitionError


def parameters(func: Any) -> dict[str, Any]:
    return Tool(func).schema["function"]["parameters"]


# schemas --------------------------------------------------------------------------------------------


def weather(city: Annotated[str, "The city"], days: int = 3) -> str:
    """Get the weather forecast.

    Args:
        days: How many days ahead.
    """
    return f"sunny in {city} for {days} days"


def test_schema_from_annotated_descriptions_defaults_and_docstring():
    assert Tool(weather).schema == {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Get the weather forecast.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city"},
                    "days": {"type": "integer", "default": 3, "description": "How many days ahead."},
                },
                "required": ["city"],
            },
        },
    }


def scalars(text: str, count: int, ratio: float, flag: bool) -> str:
    return ""


def test_schema_of_scalar_types():
    # as AG2: a parameter without a description of its own is described by its name
    assert parameters(scalars)["properties"] == {
        "text": {"type": "string", "description": "text"},
        "count": {"type": "integer", "description": "count"},
        "ratio": {"type": "number", "description": "ratio"},
        "flag": {"type": "boolean", "description": "flag"},
    }
    assert parameters(scalars)["required"] == ["text", "count", "ratio", "flag"]


def containers(names: list[str], scores: dict[str, int]) -> str:
    return ""


def test_schema_of_lists_and_dicts():
    assert parameters(containers)["properties"] == {
        "names": {"type": "array", "items": {"type": "string"}, "description": "names"},
        "scores": {"type": "object", "additionalProperties": {"type": "integer"}, "description": "scores"},
    }


class Color(Enum):
    RED = "red"
    BLUE = "blue"


def choices(unit: Literal["c", "f"], color: Color = Color.RED, note: str | None = None) -> str:
    return ""


def test_schema_of_literal_enum_and_optional():
    schema = parameters(choices)
    assert schema["properties"]["unit"] == {"type": "string", "enum": ["c", "f"], "description": "unit"}
    # as AG2 writes an enum: in place, with its title
    assert schema["properties"]["color"] == {
        "type": "string",
        "enum": ["red", "blue"],
        "title": "Color",
        "default": "red",
        "description": "color",
    }
    assert "$defs" not in schema
    assert schema["properties"]["note"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
        "description": "note",
    }
    assert schema["required"] == ["unit"]


class Address(BaseModel):
    street: str
    city: str = "Paris"


def ship(address: Address) -> str:
    return f"shipping to {address.street}, {address.city}"


def test_schema_of_a_pydantic_model_and_validation_into_it():
    schema = parameters(ship)
    assert schema["properties"]["address"] == {
        "type": "object",
        "title": "Address",
        "properties": {
            "street": {"title": "Street", "type": "string"},
            "city": {"default": "Paris", "title": "City", "type": "string"},
        },
        "required": ["street"],
        "description": "address",
    }
    arguments = Tool(ship).parse_arguments('{"address": {"street": "1 Main St"}}')
    assert arguments == {"address": Address(street="1 Main St", city="Paris")}


def test_future_annotations_resolve():
    # This module uses `from __future__ import annotations`: every annotation above is a string.
    assert Tool(weather).parameters["properties"]["city"]["type"] == "string"


def test_a_function_of_no_parameters_takes_no_arguments_and_a_wrapper_is_read_through():
    def ping() -> str:
        """Ping."""
        return "pong"

    def wrapper(*args: Any, **kwargs: Any) -> str:
        return weather(*args, **kwargs)

    plain_wrapper = functools.wraps(weather)(lambda: "wrapped")

    tool = Tool(ping)
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.schema["function"]["description"] == "Ping."
    assert tool.parse_arguments("{}") == {} and tool.parse_arguments(None) == {}
    with pytest.raises(ValueError, match="unexpected arguments 'x'"):
        tool.parse_arguments('{"x": 1}')
    assert Tool(wrapper).parameters == {"type": "object", "properties": {}}
    assert set(Tool(plain_wrapper, name="w").parameters["properties"]) == {"city", "days"}


def test_name_and_description_can_be_overridden():
    tool = Tool(weather, name="forecast", description="Forecast.")
    assert (tool.schema["function"]["name"], tool.schema["function"]["description"]) == (
        "forecast",
        "Forecast.",
    )


def test_a_tool_is_still_callable_as_the_function():
    assert Tool(weather)("Oslo", days=1) == "sunny in Oslo for 1 days"


def test_unresolvable_annotations_are_a_clear_error():
    def broken(x: NoSuchType) -> str:  # noqa: F821
        return ""

    with pytest.raises(ToolDefinitionError, match="cannot resolve the type annotations of tool 'broken'"):
        Tool(broken)


def test_tool_names_must_suit_model_apis():
    with pytest.raises(ToolDefinitionError, match="tool name 'bad name'"):
        Tool(weather, name="bad name")


# context variables ----------------------------------------------------------------------------------


def remember(fact: str, context_variables: dict[str, Any]) -> str:
    context_variables.setdefault("facts", []).append(fact)
    return f"remembered {len(context_variables['facts'])} facts"


def test_context_variables_is_hidden_from_the_model_and_injected():
    tool = Tool(remember)
    assert list(tool.parameters["properties"]) == ["fact"]
    assert tool.injects_context

    model = ScriptedModel([[tool_call("remember", {"fact": "sky is blue"})], "ok"])
    assistant = ConversableAgent(
        "assistant", llm_config=model, human_input_mode="NEVER", functions=[remember]
    )
    start = {"facts": ["water is wet"]}
    user = ConversableAgent(
        "user",
        llm_config=False,
        human_input_mode="NEVER",
        function_map={"remember": remember},
        context_variables=start,
    )

    result = user.initiate_chat(assistant, "note this", max_turns=2, silent=True)

    assert result.chat_history[2]["content"] == "remembered 2 facts"
    assert user.context_variables == {"facts": ["water is wet", "sky is blue"]}
    assert user.get_context("facts") == ["water is wet", "sky is blue"]
    assert start == {"facts": ["water is wet"]}, "each chat starts from a copy of the agent's context"
    assert model.requests[0].tools[0]["function"]["parameters"]["properties"] == {
        "fact": {"type": "string", "description": "fact"}
    }


class _Incomparable:
    """A value that cannot be compared (as numpy arrays cannot be told equal as one bool)."""

    def __eq__(self, other: object) -> bool:
        raise ValueError("ambiguous")

    __hash__ = object.__hash__


def _edit(context_variables: dict[str, Any], edit: str) -> SwarmResult:
    if edit == "set":
        context_variables["b"] = 1
    elif edit == "remove":
        del context_variables["c"]
    elif edit == "same list":
        context_variables["items"] = [1, 2]
    return SwarmResult(values=edit, context_variables={"c": 5} if edit == "remove" else {"a": 2})


@pytest.mark.parametrize(
    ("edit", "context_set", "context_removed"),
    [
        ("nothing", {"a": 2}, []),
        ("set", {"b": 1, "a": 2}, []),
        ("remove", {"c": 5}, []),
        ("same list", {"a": 2}, []),
    ],
)
@pytest.mark.parametrize("only", [True, False])
def test_a_calls_context_changes_are_those_it_made_and_returned(edit, context_set, context_removed, only):
    tools = {"edit": Tool(lambda edit, context_variables: _edit(context_variables, edit), name="edit")}
    call = tool_call("edit", {"edit": "x"}, id="e1")
    call["function"]["arguments"] = json.dumps({"edit": edit})
    context = {"a": 1, "c": 3, "items": [1, 2]}

    if only:
        outcome = run_sync(run_only_call(call, tools, context, None, None, None, sync=True))
    else:
        (outcome,) = run_tool_calls([call], tools, context)

    assert (dict(outcome.context_set), list(outcome.context_removed)) == (context_set, context_removed)
    assert context == {"a": 1, "c": 3, "items": [1, 2]}


def test_a_value_that_cannot_be_compared_counts_as_changed():
    def keep(context_variables: dict[str, Any]) -> str:
        return "kept"

    context = {"odd": _Incomparable(), "same": 1}
    (outcome,) = run_tool_calls([tool_call("keep", {})], {"keep": Tool(keep)}, context)

    assert list(outcome.context_set) == ["odd"]
    assert list(outcome.context_removed) == []


# registration ---------------------------------------------------------------------------------------


def make_pair(replies: list[Any]) -> tuple[ConversableAgent, ConversableAgent, ScriptedModel]:
    model = ScriptedModel(replies)
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="go on")
    return assistant, user, model


def test_register_for_llm_and_execution_decorators_end_to_end():
    assistant, user, model = make_pair([[tool_call("weather", {"city": "Rome"}, id="c1")], "It is sunny."])

    @user.register_for_execution()
    @assistant.register_for_llm(description="Weather for a city.")
    def weather(city: Annotated[str, "City"]) -> str:
        return f"sunny in {city}"

    assert isinstance(weather, Tool)

    result = user.initiate_chat(assistant, "Weather in Rome?", max_turns=2, silent=True)

    assert result.chat_history[1]["tool_calls"][0]["function"]["name"] == "weather"
    assert result.chat_history[2] == {
        "role": "tool",
        "content": "sunny in Rome",
        "tool_responses": [{"role": "tool", "content": "sunny in Rome", "tool_call_id": "c1"}],
        "name": "user",
    }
    assert result.chat_history[3]["content"] == "It is sunny."
    assert model.requests[1].messages[-1] == {
        "role": "tool",
        "content": "sunny in Rome",
        "tool_call_id": "c1",
    }
    assert model.requests[0].tool_names == ["weather"]


def test_register_function_wires_caller_and_executor():
    assistant, user, model = make_pair([[tool_call("forecast", {"city": "Oslo", "days": 2})], "Done."])

    register_function(weather, caller=assistant, executor=user, name="forecast", description="Forecast.")

    result = user.initiate_chat(assistant, "Oslo?", max_turns=2, silent=True)

    assert result.chat_history[2]["content"] == "sunny in Oslo for 2 days"
    assert model.requests[0].tools[0]["function"]["description"] == "Forecast."
    assert "forecast" not in assistant.function_map
    assert list(user.function_map) == ["forecast"]


def test_same_tool_name_on_two_agents_does_not_overwrite():
    llm_config = {"config_list": [{"model": "gpt-4o-mini", "api_key": "unused"}]}
    first = ConversableAgent("first", llm_config=llm_config)
    second = ConversableAgent("second", llm_config=llm_config)

    first.register_for_llm(name="lookup", description="first lookup")(weather)
    second.register_for_llm(name="lookup", description="second lookup")(ship)

    assert first.tools[0].description == "first lookup"
    assert second.tools[0].description == "second lookup"
    assert "tools" not in llm_config


def test_functions_in_the_constructor_are_offered_to_the_model_and_run_by_swarms_as_in_ag2():
    agent = ConversableAgent("agent", llm_config=ScriptedModel([]), functions=[weather, ship])

    assert [tool.name for tool in agent.tools] == ["weather", "ship"]
    assert agent.function_map == {}
    assert not agent.can_execute_function("weather")
    with pytest.raises(ValueError, match=r"has no model .*use function_map=\{name: function\}"):
        ConversableAgent("runner", llm_config=False, functions=[weather])

    caller = ConversableAgent(
        "caller",
        llm_config=ScriptedModel([[tool_call("weather", {"city": "Oslo"})], "Sunny, then."]),
        human_input_mode="NEVER",
        functions=[weather],
    )
    result, _, _ = initiate_swarm_chat(caller, "weather?", [caller], max_rounds=3)
    assert [m["content"] for m in result.chat_history][-2:] == ["sunny in Oslo for 3 days", "Sunny, then."]


def test_in_an_auto_group_chat_a_tool_call_goes_to_the_one_agent_that_executes_it():
    """The caller only offers the tool (``functions=``): the selector model is not asked who runs it."""
    selector = ScriptedModel(["caller"])
    caller = ConversableAgent(
        "caller",
        llm_config=ScriptedModel([[tool_call("weather", {"city": "Oslo"})]]),
        human_input_mode="NEVER",
        functions=[weather],
    )
    runner = ConversableAgent(
        "runner", llm_config=False, human_input_mode="NEVER", function_map={"weather": weather}
    )
    groupchat = GroupChat([caller, runner], messages=[], max_round=3, speaker_selection_method="auto")
    manager = GroupChatManager(groupchat, llm_config=selector)

    runner.initiate_chat(manager, "weather?", silent=True)

    assert [m["name"] for m in groupchat.messages] == ["runner", "caller", "runner"]
    assert groupchat.messages[-1]["content"] == "sunny in Oslo for 3 days"
    assert len(selector.requests) == 1, "asked for the first speaker only"


def test_register_for_llm_without_a_model_is_an_error():
    with pytest.raises(RuntimeError, match="has no model"):
        ConversableAgent("agent", llm_config=False).register_for_llm()(weather)


# execution ------------------------------------------------------------------------------------------


def test_results_come_back_in_the_order_of_the_calls():
    assistant, user, _ = make_pair(
        [[tool_call("echo", {"text": t}, id=f"c{i}") for i, t in enumerate("abc")], "done"]
    )
    register_function(
        lambda text: text.upper(), caller=assistant, executor=user, name="echo", description="Echo."
    )

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert [r["tool_call_id"] for r in result.chat_history[2]["tool_responses"]] == ["c0", "c1", "c2"]
    assert result.chat_history[2]["content"] == "A\n\nB\n\nC"


async def test_async_tools_in_one_message_run_concurrently():
    arrived = 0
    both_arrived = asyncio.Event()

    async def meet(name: str) -> str:
        nonlocal arrived
        arrived += 1
        if arrived == 2:
            both_arrived.set()
        await asyncio.wait_for(both_arrived.wait(), timeout=5)
        return f"{name} met"

    assistant, user, _ = make_pair(
        [[tool_call("meet", {"name": "x"}), tool_call("meet", {"name": "y"})], "ok"]
    )
    register_function(meet, caller=assistant, executor=user, description="Meet.")

    result = await user.a_initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert result.chat_history[2]["content"] == "x met\n\ny met"


def test_async_tools_also_run_concurrently_in_a_sync_chat():
    started: list[str] = []

    async def meet(name: str) -> str:
        started.append(name)
        for _ in range(100):
            if len(started) == 2:
                return f"{name} met"
            await asyncio.sleep(0.01)
        return f"{name} waited alone"

    assistant, user, _ = make_pair(
        [[tool_call("meet", {"name": "x"}), tool_call("meet", {"name": "y"})], "ok"]
    )
    register_function(meet, caller=assistant, executor=user, description="Meet.")

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert result.chat_history[2]["content"] == "x met\n\ny met"


async def test_in_async_chats_sync_tools_run_in_a_worker_thread_unless_asked_not_to():
    threads: dict[str, str] = {}

    def here() -> str:
        threads["here"] = threading.current_thread().name
        return "here"

    def away() -> str:
        threads["away"] = threading.current_thread().name
        return "away"

    assistant, user, _ = make_pair([[tool_call("here"), tool_call("away")], "ok"])
    assistant.register_for_llm(description="Here.")(here)
    assistant.register_for_llm(description="Away.")(away)
    user.register_for_execution(in_thread=False)(here)
    user.register_for_execution()(away)

    await user.a_initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert threads["here"] == threading.current_thread().name
    assert threads["away"] != threading.current_thread().name


def test_sync_chats_call_sync_tools_directly():
    threads: list[str] = []

    def here() -> str:
        threads.append(threading.current_thread().name)
        return "here"

    assistant, user, _ = make_pair([[tool_call("here")], "ok"])
    register_function(here, caller=assistant, executor=user, description="Here.")

    user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert threads == [threading.current_thread().name]


# errors go back to the model ------------------------------------------------------------------------


def explode(x: int) -> str:
    raise RuntimeError(f"cannot handle {x}")


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (tool_call("explode", {"x": 1}), "Error: explode raised RuntimeError: cannot handle 1"),
        (tool_call("missing", {}), "Error: Function missing not found. Available tools: explode, weather."),
        (
            tool_call("weather", "{not json"),
            "Error: invalid arguments for weather: the arguments are not valid JSON",
        ),
        (tool_call("weather", {"days": 2}), "Error: invalid arguments for weather: city: Field required"),
        (
            tool_call("weather", {"city": "Rome", "days": "many"}),
            "Error: invalid arguments for weather: days:",
        ),
        (
            tool_call("weather", "[1, 2]"),
            "Error: invalid arguments for weather: the arguments must be a JSON object",
        ),
    ],
)
def test_tool_errors_become_tool_messages_and_the_chat_goes_on(call, expected):
    assistant, user, model = make_pair([[call], "I will fix that."])
    register_function(explode, caller=assistant, executor=user, description="Explode.")
    register_function(weather, caller=assistant, executor=user)

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert result.chat_history[2]["content"].startswith(expected)
    assert result.chat_history[3]["content"] == "I will fix that."
    assert model.requests[1].messages[-1]["content"].startswith(expected)
    assert result.stop_reason.kind is StopKind.MAX_TURNS


def test_a_human_who_answers_pending_tool_calls_interrupts_them():
    assistant, user, _ = make_pair([[tool_call("weather", {"city": "Rome"}, id="c7")], "Understood."])
    user.human_input_mode = "ALWAYS"
    user.get_human_input = lambda prompt, **kwargs: "no tools please"
    register_function(weather, caller=assistant, executor=user)

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert result.chat_history[2] == {
        "content": "no tools please",
        "tool_responses": [{"role": "tool", "tool_call_id": "c7", "content": "USER INTERRUPTED"}],
        "role": "assistant",
        "name": "user",
    }
    assert assistant.client.requests[1].messages[-2:] == [
        {"role": "tool", "tool_call_id": "c7", "content": "USER INTERRUPTED"},
        {"content": "no tools please", "role": "user", "name": "user"},
    ]


def test_tool_calls_are_shown_on_the_console(capsys):
    assistant, user, _ = make_pair([[tool_call("weather", {"city": "Rome"}, id="c1")], "ok"])
    register_function(weather, caller=assistant, executor=user)

    user.initiate_chat(assistant, "go", max_turns=2)

    printed = capsys.readouterr().out
    assert "***** Suggested tool call (c1): weather *****" in printed
    assert ">>>>>>>> EXECUTING FUNCTION weather..." in printed
    assert "***** Response from calling tool (c1) *****\nsunny in Rome for 3 days" in printed


def bounded(note: Annotated[str, Field(max_length=20, description="A short note")], tag: str = "x") -> str:
    """Keep a note."""
    return note


def test_pydantic_field_metadata_keeps_its_description_and_constraints():
    schema = parameters(bounded)

    assert schema["properties"]["note"] == {"type": "string", "maxLength": 20, "description": "A short note"}
    with pytest.raises(ValueError, match="note"):
        Tool(bounded).parse_arguments('{"note": "' + "x" * 30 + '"}')


class Customer:
    """A plain class: pydantic can check an instance of it, but no JSON schema describes it."""


def test_a_parameter_type_with_no_json_schema_is_named_when_the_tool_is_made():
    from parley.tools import ToolDefinitionError

    def look_up(customer: Customer) -> str:
        return "found"

    with pytest.raises(
        ToolDefinitionError, match="tool 'look_up': its parameters cannot be described to a model as JSON"
    ):
        Tool(look_up)
