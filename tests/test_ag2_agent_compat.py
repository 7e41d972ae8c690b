"""AG2 code runs unchanged: agent and tool idioms of AG2 0.13.4 and its users, run against parley.

Each expected value is what AG2 0.13.4 gives for the same code (run with a scripted reply function in
place of the model, as AG2's own tests do), unless the test says where parley deliberately differs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from conftest import human
from parley import (
    Agent,
    AssistantAgent,
    ConversableAgent,
    FunctionModel,
    InvalidCarryOverTypeError,
    ScriptedModel,
    StopKind,
    Tool,
    UserProxyAgent,
)


def add(a: int, b: int = 2) -> int:
    """Add two."""
    return a + b


def boom() -> str:
    raise RuntimeError("bad")


def quiet(name: str, reply: str = "auto", **kwargs: Any) -> ConversableAgent:
    return ConversableAgent(
        name, llm_config=False, human_input_mode="NEVER", default_auto_reply=reply, **kwargs
    )


# execute_function and legacy function calls ---------------------------------------------------------------


@pytest.fixture
def executor() -> ConversableAgent:
    return quiet("ex", function_map={"add": add, "boom": boom})


def test_execute_function_returns_success_and_a_function_message(executor):
    call = {"name": "add", "arguments": json.dumps({"a": 1, "b": 2})}

    assert executor.execute_function(call) == (True, {"name": "add", "role": "function", "content": 3})
    assert executor.execute_function(call, call_id="c1") == (
        True,
        {"name": "add", "role": "function", "content": 3},
    )
    assert asyncio.run(executor.a_execute_function(call)) == (
        True,
        {"name": "add", "role": "function", "content": 3},
    )


async def _sleepy_add(a: int, b: int = 2) -> int:
    await asyncio.sleep(0.01)
    return a + b


def test_execute_function_runs_an_async_function_to_its_end_inside_and_outside_an_event_loop():
    executor = quiet("ex", function_map={"add": _sleepy_add})
    call = {"name": "add", "arguments": json.dumps({"a": 1, "b": 2})}

    assert executor.execute_function(call) == (True, {"name": "add", "role": "function", "content": 3})

    async def from_a_running_loop() -> Any:
        return executor.execute_function(call)

    assert asyncio.run(from_a_running_loop()) == (True, {"name": "add", "role": "function", "content": 3})
    assert asyncio.run(executor.a_execute_function(call))[1]["content"] == 3


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ({"name": "nope", "arguments": "{}"}, "Error: Function nope not found."),
        ({"name": "boom", "arguments": "{}"}, "Error: bad"),
        ({"name": "add", "arguments": "{bad"}, "Error: the arguments are not valid JSON"),
        ({"name": "add", "arguments": json.dumps({"b": 1})}, "Error: a: Field required"),
    ],
)
def test_execute_function_reports_failures_in_the_function_message(executor, call, expected):
    success, message = executor.execute_function(call)

    assert success is False
    assert message["name"] == call["name"]
    assert message["role"] == "function"
    assert message["content"].startswith(expected)


def test_an_async_function_is_awaited():
    async def fetch(key: str) -> str:
        return f"got {key}"

    agent = quiet("ex", function_map={"fetch": fetch})
    call = {"name": "fetch", "arguments": json.dumps({"key": "k"})}

    assert agent.execute_function(call) == (True, {"name": "fetch", "role": "function", "content": "got k"})
    assert asyncio.run(agent.a_execute_function(call))[1]["content"] == "got k"


def test_a_legacy_function_call_is_executed_and_answered_with_a_function_message():
    def add_text(a: int, b: int) -> str:
        return str(a + b)

    ex = quiet("ex", function_map={"add": add_text})
    caller = ConversableAgent("caller", llm_config=ScriptedModel(["done"]), human_input_mode="NEVER")

    def calls_a_function_first(recipient, messages, sender, config):
        if messages[-1]["role"] == "function":
            return False, None
        return True, {"content": None, "function_call": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}

    caller.register_reply([Agent, None], calls_a_function_first)

    result = ex.initiate_chat(caller, message="go", max_turns=2, silent=True)

    assert [(m["role"], m.get("name"), m["content"]) for m in result.chat_history] == [
        ("assistant", "ex", "go"),
        ("assistant", "caller", None),
        ("function", "add", "5"),
        ("user", "caller", "done"),
    ]
    assert result.chat_history[1]["function_call"] == {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    assert caller.client.requests[0].messages[-1] == {"content": "5", "name": "add", "role": "function"}


def test_generate_function_call_reply_only_answers_a_function_call(executor):
    assert executor.generate_function_call_reply([{"content": "hi"}]) == (False, None)
    assert executor.generate_function_call_reply(
        [{"content": None, "function_call": {"name": "add", "arguments": '{"a": 1}'}}]
    ) == (True, {"name": "add", "role": "function", "content": "3"})


# the first message ----------------------------------------------------------------------------------------


def test_generate_init_message_adds_the_carryover():
    agent = quiet("a")

    assert agent.generate_init_message("hello") == "hello"
    assert agent.generate_init_message("hello", carryover="prev") == "hello\nContext: \nprev"
    assert agent.generate_init_message("hello", carryover=["p1", "p2"]) == "hello\nContext: \np1\np2"
    assert agent.generate_init_message({"content": "hi", "role": "user"}, carryover="prev") == {
        "content": "hi\nContext: \nprev",
        "role": "user",
    }
    assert agent.generate_init_message("hello", other=1) == "hello"
    assert asyncio.run(agent.a_generate_init_message("hello", carryover="c")) == "hello\nContext: \nc"
    with pytest.raises(InvalidCarryOverTypeError, match="carryover must be a string or a list"):
        agent.generate_init_message("x", carryover=5)


def test_generate_init_message_without_a_message_asks_the_human():
    agent = quiet("a")
    the_human = human(agent, "typed")

    assert agent.generate_init_message(None) == "typed"
    assert the_human.prompts == [">"]


def test_initiate_chat_starts_with_what_generate_init_message_makes():
    class Briefing(ConversableAgent):
        def generate_init_message(self, message: Any = None, **kwargs: Any) -> Any:
            return f"[brief] {super().generate_init_message(message, **kwargs)}"

    result = Briefing("b", llm_config=False, human_input_mode="NEVER").initiate_chat(
        quiet("r"), message="go", max_turns=1, silent=True
    )

    assert result.chat_history[0]["content"] == "[brief] go"


# run -------------------------------------------------------------------------------------------------------


def test_run_without_a_recipient_chats_with_a_user_agent_and_process_prints_it(capsys):
    agent = ConversableAgent("a", llm_config=ScriptedModel(["hello there TERMINATE"]))

    response = agent.run(message="hi", max_turns=2)
    response.process()

    printed = capsys.readouterr().out
    assert "user (to a):\n\nhi" in printed
    assert "a (to user):\n\nhello there TERMINATE" in printed
    assert response.messages == [
        {"content": "hi", "role": "assistant", "name": "user"},
        {"content": "hello there TERMINATE", "role": "user", "name": "a"},
    ]
    assert response.summary == "hello there "
    assert response.last_speaker == "a"
    assert response.context_variables is None
    assert response.cost["usage_including_cached_inference"]["total_cost"] == 0


def test_run_with_a_recipient_is_its_chat():
    b = quiet("b", "bye")
    a = ConversableAgent("a", llm_config=ScriptedModel(["one", "two"]), human_input_mode="NEVER")

    response = a.run(b, message="start", max_turns=2)

    assert [(m["name"], m["content"]) for m in response.messages] == [
        ("a", "start"),
        ("b", "bye"),
        ("a", "one"),
        ("b", "bye"),
    ]
    assert response.summary == "bye"
    assert response.last_speaker == "b"
    assert response.chat_result.stop_reason.kind is StopKind.MAX_TURNS


def test_run_with_tools_lets_the_user_agent_execute_them_and_offers_them_for_the_run():
    tool = Tool(func_or_tool=add)
    model = ScriptedModel(
        [
            [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}],
            "3 TERMINATE",
        ]
    )
    agent = ConversableAgent("a", llm_config={"config_list": [{"model": "m", "api_key": "k"}]})
    agent.client = model

    response = agent.run(message="add 1 and 2", tools=tool, max_turns=3)

    assert [m["content"] for m in response.messages] == ["add 1 and 2", None, "3", "3 TERMINATE"]
    assert model.requests[0].tool_names == ["add"]
    assert "tools" not in agent.llm_config or agent.llm_config["tools"] == []


def test_run_reraises_what_ended_the_chat():
    agent = ConversableAgent("a", llm_config=ScriptedModel([]))

    response = agent.run(message="hi")

    with pytest.raises(Exception, match="script"):
        response.process()


def test_a_run_is_awaited():
    async def main() -> tuple[Any, Any, Any]:
        agent = ConversableAgent("a", llm_config=ScriptedModel(["x TERMINATE"]))
        response = await agent.a_run(message="hi")
        await response.process()
        return await response.summary, await response.last_speaker, await response.messages

    summary, last, messages = asyncio.run(main())

    assert (summary, last) == ("x ", "a")
    assert [m["content"] for m in messages] == ["hi", "x TERMINATE"]


# tools in llm_config ------------------------------------------------------------------------------------


LLM = {"config_list": [{"model": "gpt-4o-mini", "api_key": "sk-test"}]}


def scripted(agent: ConversableAgent, *replies: Any) -> ScriptedModel:
    agent.client = ScriptedModel(list(replies))
    return agent.client


def test_register_for_llm_fills_llm_config_tools_and_the_model_is_offered_them():
    agent = ConversableAgent("a", llm_config=dict(LLM))

    tool = agent.register_for_llm(description="Adds")(add)
    agent.register_for_llm(name="plus")(add)

    assert isinstance(tool, Tool)
    assert agent.llm_config["tools"][0] == {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Adds",
            "parameters": tool.parameters,
        },
    }
    assert [t["function"]["name"] for t in agent.llm_config["tools"]] == ["add", "plus"]
    model = scripted(agent, "ok")
    agent.generate_reply([{"role": "user", "content": "hi"}])
    assert model.requests[0].tool_names == ["add", "plus"]


def test_register_for_llm_in_the_legacy_function_style_fills_llm_config_functions():
    agent = ConversableAgent("a", llm_config=dict(LLM))

    agent.register_for_llm(api_style="function")(boom)

    assert agent.llm_config["functions"] == [Tool(boom).schema["function"]]
    assert "tools" not in agent.llm_config


def test_tools_and_functions_in_an_llm_config_are_offered_to_the_model():
    signature = {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}
    tool_schema = {"type": "function", "function": {**signature, "name": "g"}}
    agent = ConversableAgent("a", llm_config={**LLM, "tools": [tool_schema], "functions": [signature]})
    model = scripted(agent, "ok")

    agent.generate_reply([{"role": "user", "content": "hi"}])

    assert model.requests[0].tools == [tool_schema, {"type": "function", "function": signature}]


def test_update_function_signature_and_update_tool_signature():
    agent = ConversableAgent("a", llm_config=dict(LLM))
    signature = {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}}}

    agent.update_function_signature(signature, is_remove=False)
    assert agent.llm_config["functions"] == [signature]
    with pytest.warns(UserWarning, match="Function 'f' is being overridden."):
        agent.update_function_signature({**signature, "description": "d2"}, is_remove=False)
    assert agent.llm_config["functions"] == [{**signature, "description": "d2"}]
    agent.update_tool_signature({"type": "function", "function": {**signature, "name": "g"}}, is_remove=False)
    model = scripted(agent, "ok")
    agent.generate_reply([{"role": "user", "content": "hi"}])
    assert model.requests[0].tool_names == ["f", "g"]

    agent.update_function_signature("f", is_remove=True)
    agent.update_tool_signature("g", is_remove=True)
    assert agent.llm_config["functions"] == []
    assert agent.llm_config["tools"] == []
    with pytest.raises(ValueError, match="offers no function named 'f'"):
        agent.update_function_signature("f", is_remove=True)
    with pytest.raises(ValueError, match="must have a 'name' key"):
        agent.update_function_signature({"x": 1}, is_remove=False)
    with pytest.raises(RuntimeError, match="has no model"):
        quiet("b").update_function_signature(signature, is_remove=False)


# Tool ----------------------------------------------------------------------------------------------------


def test_tool_takes_ag2s_arguments_and_has_its_attributes():
    tool = Tool(func_or_tool=add)

    assert (tool.name, tool.description) == ("add", "Add two.")
    assert tool.tool_schema == {"type": "function", "function": tool.function_schema}
    assert tool.function_schema["name"] == "add"
    assert tool.function_schema["parameters"]["required"] == ["a"]
    assert tool.realtime_tool_schema == {"type": "function", **tool.function_schema}
    assert tool(1, b=3) == 4
    renamed = Tool(name="plus", description="P", func_or_tool=tool)
    assert (renamed.name, renamed.description, renamed.func) == ("plus", "P", add)
    assert Tool(func_or_tool=renamed).name == "plus"


def test_tool_parameters_json_schema_is_what_the_model_sees():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}

    assert (
        Tool(func_or_tool=add, parameters_json_schema=schema).tool_schema["function"]["parameters"] == schema
    )


def test_tool_registers_itself_with_agents():
    tool = Tool(func_or_tool=add)
    caller, executor, both = (
        ConversableAgent("caller", llm_config=dict(LLM)),
        quiet("ex"),
        ConversableAgent("both", llm_config=dict(LLM)),
    )

    tool.register_for_llm(caller)
    tool.register_for_execution(executor)
    tool.register_tool(both)

    assert caller.llm_config["tools"][0]["function"]["name"] == "add"
    assert list(executor.function_map) == ["add"]
    assert list(both.function_map) == ["add"]
    assert len(both.llm_config["tools"]) == 1


def test_a_bad_func_or_tool_is_an_error():
    with pytest.raises(TypeError, match="a tool must be callable"):
        Tool(func_or_tool=5)


# send hooks ------------------------------------------------------------------------------------------------


def test_send_runs_the_process_message_before_send_hooks_with_the_real_silent():
    sender, receiver = quiet("s"), quiet("r")
    seen: list[tuple[str, Any, str, Any]] = []

    def hook(sender: Agent, message: Any, recipient: Agent, silent: Any) -> Any:
        seen.append((sender.name, message, recipient.name, silent))
        return message.upper() if isinstance(message, str) else message

    sender.register_hook("process_message_before_send", hook)
    sender.send("hello", receiver, request_reply=False, silent=True)
    sender.send("hello2", receiver, request_reply=False)

    assert seen == [("s", "hello", "r", True), ("s", "hello2", "r", False)]
    assert [m["content"] for m in receiver.chat_messages[sender]] == ["HELLO", "HELLO2"]


@pytest.mark.parametrize("silent", [True, False])
def test_initiate_chat_runs_the_hooks_on_the_first_message_and_the_replies(silent):
    sender, receiver = quiet("s", ""), quiet("r")
    seen: list[tuple[str, Any, str, Any]] = []
    sender.register_hook(
        "process_message_before_send",
        lambda sender, message, recipient, silent: (
            seen.append((sender.name, message, recipient.name, silent)) or message
        ),
    )

    sender.initiate_chat(receiver, message="init", max_turns=2, silent=silent)

    assert seen == [("s", "init", "r", silent), ("s", "", "r", silent)]


# summaries ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "summary"),
    [
        ({"content": "dict summary"}, "dict summary"),
        ({"x": 1}, ""),
        (None, ""),
        (5, "5"),
        (["a", "b"], "['a', 'b']"),
        ("str", "str"),
    ],
)
def test_a_summary_is_always_text(value, summary):
    result = quiet("s").initiate_chat(
        quiet("r"), message="m", max_turns=1, summary_method=lambda a, b, c: value, silent=True
    )

    assert result.summary == summary


def test_no_summary_method_gives_an_empty_summary():
    assert (
        quiet("s")
        .initiate_chat(quiet("r"), message="m", max_turns=1, summary_method=None, silent=True)
        .summary
        == ""
    )


# names --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a b", "a\tb", "a\nb", " "])
def test_an_agent_with_a_model_cannot_have_whitespace_in_its_name(name):
    with pytest.raises(ValueError, match="cannot contain whitespace"):
        ConversableAgent(name, llm_config=dict(LLM))
    with pytest.raises(ValueError, match="cannot contain whitespace"):
        AssistantAgent(name, llm_config=FunctionModel(lambda request: "hi"))


def test_an_agent_without_a_model_may_have_whitespace_in_its_name():
    assert ConversableAgent("a b", llm_config=False).name == "a b"


# agents that implement only AG2's Agent protocol ------------------------------------------------------------


class Echo(Agent):
    """An agent written against AG2's ``Agent`` protocol only: it never calls ``Agent.__init__``."""

    def __init__(self, name: str) -> None:
        self._label = name
        self.received: list[Any] = []

    @property
    def name(self) -> str:
        return self._label

    @property
    def description(self) -> str:
        return "echoes"

    def send(
        self, message: Any, recipient: Any, request_reply: bool | None = None, silent: bool = False
    ) -> None:
        recipient.receive(message, self, request_reply, silent)

    def receive(
        self, message: Any, sender: Any, request_reply: bool | None = None, silent: bool = False
    ) -> None:
        self.received.append(message)
        if request_reply is not False:
            content = message if isinstance(message, str) else message.get("content")
            reply = self.generate_reply([{"content": content}], sender)
            if reply is not None:
                self.send(reply, sender, request_reply=True)

    def generate_reply(self, messages: Any = None, sender: Any = None, **kwargs: Any) -> Any:
        content = messages[-1]["content"]
        return None if content == "stop" else f"echo: {content}"


def test_an_ag2_protocol_agent_is_sent_to_and_answers():
    echo = Echo("echo")
    user = quiet("u", "stop", max_consecutive_auto_reply=2)

    user.send("hi", echo)

    assert echo.received == ["hi", "stop"]
    assert [(m["role"], m["content"]) for m in user.chat_messages[echo]] == [
        ("assistant", "hi"),
        ("user", "echo: hi"),
        ("assistant", "stop"),
    ]
    assert repr(echo) == "Echo(name='echo')"


def test_an_ag2_protocol_agent_is_a_chat_peer():
    echo = Echo("e2")
    user = quiet("u2", "again")

    result = user.initiate_chat(echo, message="hi", max_turns=2, silent=True)

    assert [(m["name"], m["content"]) for m in result.chat_history] == [
        ("u2", "hi"),
        ("e2", "echo: hi"),
        ("u2", "again"),
        ("e2", "echo: again"),
    ]
    assert result.summary == "echo: again"
    assert user.chat_messages[echo] == result.chat_history


def test_something_that_is_not_an_agent_is_named_in_the_error():
    with pytest.raises(TypeError, match=r"recipient must be an agent.*int lacks a string name"):
        quiet("u").initiate_chat(5, message="hi")


def test_offering_a_tool_of_a_name_already_offered_warns_unless_told_not_to():
    import warnings

    agent = ConversableAgent("a", llm_config=dict(LLM))

    def lookup(city: str) -> str:
        return city

    agent.register_for_llm(name="lookup", description="Look a city up.")(lookup)
    with pytest.warns(UserWarning, match="Function 'lookup' is being overridden."):
        agent.register_for_llm(name="lookup", description="Find a city.")(lookup)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.register_for_llm(name="lookup", description="Again.", silent_override=True)(lookup)
        agent.update_tool_signature(
            {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}},
            is_remove=False,
            silent_override=True,
        )
    assert [tool["function"]["name"] for tool in agent.llm_config["tools"]] == ["lookup"]


def test_register_function_names_a_caller_or_executor_that_is_no_agent_and_a_description_that_is_no_text():
    from parley import register_function
    from parley.tools import ToolDefinitionError

    agent = ConversableAgent("a", llm_config=dict(LLM))

    def lookup(city: str) -> str:
        return city

    with pytest.raises(TypeError, match="register_function's caller must be an agent, not None"):
        register_function(lookup, caller=None, executor=agent, description="d")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="register_function's executor must be an agent, not 'b'"):
        register_function(lookup, caller=agent, executor="b", description="d")  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="a tool's description must be a string, not 5"):
        register_function(lookup, caller=agent, executor=agent, description=5)  # type: ignore[arg-type]


def test_initiate_chats_names_a_queue_that_is_not_a_list_of_dicts():
    sender, recipient = quiet("s"), quiet("r")

    with pytest.raises(TypeError, match="chat_queue must be a list of chats \\(dicts\\), not dict"):
        sender.initiate_chats({"recipient": recipient, "message": "hi"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="chat_queue\\[1\\] must be a dict, not 'hi'"):
        sender.initiate_chats([{"recipient": recipient, "message": "x", "max_turns": 1}, "hi"])  # type: ignore[list-item]


def test_a_code_block_that_ag2_would_run_is_not_run_and_the_user_is_told_once():
    assistant = AssistantAgent(
        "assistant", llm_config=ScriptedModel(["```python\nprint(2)\n```", "```sh\nls\n```", "TERMINATE"])
    )
    # AG2's UserProxyAgent runs code blocks by default (code_execution_config={}), and so would this one
    user = UserProxyAgent("user_proxy", human_input_mode="NEVER", max_consecutive_auto_reply=2)
    notices: list[str] = []

    with pytest.warns(UserWarning, match="user_proxy received a code block and does not run it") as caught:
        result = user.initiate_chat(
            assistant, message="print two", silent=True, listeners=[lambda event: notices.append(str(event))]
        )

    assert len(caught) == 1, "told once per agent"
    assert caught[0].filename == __file__, "the warning points at the user's call"
    assert [m["content"] for m in result.chat_history if m["name"] == "user_proxy"] == ["print two", "", ""]
    assert sum("does not run it" in notice for notice in notices) == 1


@pytest.mark.parametrize("config", [False, {"work_dir": "coding"}])
def test_no_word_about_code_when_none_is_to_run_or_none_arrives(
    config: Any, recwarn: pytest.WarningsRecorder
):
    assistant = AssistantAgent(
        "assistant", llm_config=ScriptedModel(["```python\nprint(2)\n```" if config is False else "no code"])
    )
    user = UserProxyAgent(
        "user_proxy", code_execution_config=config, human_input_mode="NEVER", max_consecutive_auto_reply=0
    )

    user.initiate_chat(assistant, message="hello", silent=True)

    assert not [w for w in recwarn if "code block" in str(w.message)]


# send and receive after and between chats -----------------------------------------------------------------


def test_after_a_chat_of_max_turns_a_plain_send_gets_no_reply():
    alice = ConversableAgent("alice", llm_config=ScriptedModel(["a0"]), human_input_mode="NEVER")
    bob = ConversableAgent("bob", llm_config=ScriptedModel(["b0", "b1"]), human_input_mode="NEVER")
    alice.initiate_chat(bob, "start", max_turns=1, silent=True)

    assert bob.reply_at_receive[alice] is False and alice.reply_at_receive[bob] is False
    alice.send("more", bob, silent=True)

    assert len(bob.client.requests) == 1, "bob answers only inside the chat"
    assert alice.last_message(bob) == {"content": "more", "name": "alice", "role": "assistant"}


def test_auto_replies_are_counted_across_separate_receive_calls():
    alice = quiet("alice")
    bob = ConversableAgent(
        "bob",
        llm_config=ScriptedModel(["b0", "b1", "b2"]),
        human_input_mode="NEVER",
        max_consecutive_auto_reply=1,
    )

    for index in range(3):
        bob.receive(f"q{index}", alice, request_reply=True, silent=True)

    # AG2: the second message finds the limit reached, so bob ends instead (and counts from zero again)
    assert [m["content"] for m in bob.chat_messages[alice]] == ["q0", "b0", "q1", "q2", "b1"]
    bob.reset()
    bob.receive("q3", alice, request_reply=True, silent=True)
    assert bob.chat_messages[alice][-1]["content"] == "b2"


def test_a_tools_result_reaches_the_model_as_ag2_writes_it():
    from pydantic import BaseModel

    from parley import register_function, tool_call

    class Order(BaseModel):
        id: int

    returned = {"mapping": {"k": "v"}, "sequence": [1, "two"], "nothing": None, "order": Order(id=7)}
    model = ScriptedModel([[tool_call(name, id=name) for name in returned], "done"])
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
    user = quiet("user")
    for name, value in returned.items():
        register_function(
            lambda value=value: value, caller=assistant, executor=user, name=name, description=name
        )

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    responses = result.chat_history[2]["tool_responses"]
    assert [r["content"] for r in responses] == ["{'k': 'v'}", "[1, 'two']", "None", '{"id":7}']


def test_receive_prints_the_message_received_unless_silent(capsys):
    alice = quiet("alice")
    bob = ConversableAgent("bob", llm_config=ScriptedModel(["b0"]), human_input_mode="NEVER")

    bob.receive("q0", alice, request_reply=False)
    bob.receive("q1", alice, request_reply=False, silent=True)

    out = capsys.readouterr().out
    assert "alice (to bob):\n\nq0\n" in out
    assert "q1" not in out
    assert [m["content"] for m in bob.chat_messages[alice]] == ["q0", "q1"]


def test_a_last_received_message_hook_changes_what_the_model_is_sent_as_ag2_chooses_messages():
    bob = ConversableAgent(
        "bob", llm_config=ScriptedModel(["b1", "b2", "b3", "b4"]), human_input_mode="NEVER"
    )
    bob.register_hook("process_last_received_message", lambda content: _tagged(content))
    alice = quiet("alice")

    for message in ("hello", "exit", {"content": "with context", "context": {"k": 1}}):
        alice.send(message, bob, request_reply=True, silent=True)
    alice.send({"content": [{"type": "text", "text": "look"}]}, bob, request_reply=True, silent=True)

    sent = [request.messages[-1]["content"] for request in bob.client.requests]
    assert sent == ["hello [H]", "exit", "with context", [{"type": "text", "text": "look"}, "[H]"]]
    assert bob.chat_messages[alice][0]["content"] == "hello", "the conversation keeps what was said"


def _tagged(content: Any) -> Any:
    return content + " [H]" if isinstance(content, str) else [*content, "[H]"]


def test_usage_is_none_until_a_model_call_and_again_after_reset(capsys: pytest.CaptureFixture[str]):
    """Code that resets agents between tasks to cost each task gets each task's usage alone."""
    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel(["one", "two"], cost=0.5), human_input_mode="NEVER"
    )
    user = quiet("user")
    assert assistant.get_total_usage() is None and assistant.get_actual_usage() is None

    user.initiate_chat(assistant, "first task", max_turns=1, silent=True)
    assert assistant.get_total_usage()["total_cost"] == 0.5
    assistant.reset()
    assert assistant.get_total_usage() is None and assistant.get_actual_usage() is None
    assistant.print_usage_summary()
    assert "no model call" in capsys.readouterr().out

    user.initiate_chat(assistant, "second task", max_turns=1, silent=True)
    assert assistant.get_total_usage()["total_cost"] == 0.5


def test_ag2_agent_class_constants_and_helpers_for_tools_and_handoffs():
    from parley import AgentTarget, OnCondition, OnContextCondition, StringLLMCondition

    assert ConversableAgent.MAX_CONSECUTIVE_AUTO_REPLY == 100
    assert ConversableAgent.DEFAULT_SUMMARY_METHOD == "last_msg"
    assert ConversableAgent.DEFAULT_CONFIG is False
    assert "Summarize" in ConversableAgent.DEFAULT_SUMMARY_PROMPT

    caller = ConversableAgent("caller", llm_config=dict(LLM), human_input_mode="NEVER")
    executor = quiet("executor")
    executor.register_for_execution()(add)
    assert executor.can_execute_function("add") and executor.can_execute_function(["add"])
    assert not executor.can_execute_function(["add", "boom"])

    tool = caller.register_for_llm(description="Adds")(add)
    caller.register_for_llm(name="plus")(add)
    caller.remove_tool_for_llm(tool)
    assert [t["function"]["name"] for t in caller.llm_config["tools"]] == ["plus"]
    model = scripted(caller, "ok")
    caller.generate_reply([{"role": "user", "content": "hi"}])
    assert model.requests[0].tool_names == ["plus"]
    with pytest.raises(ValueError, match="is not offered"):
        caller.remove_tool_for_llm(tool)

    other = quiet("other")
    caller.register_handoff(OnCondition(target=AgentTarget(other), condition=StringLLMCondition("Other.")))
    caller.register_handoffs([OnContextCondition(target=AgentTarget(other), condition="urgent")])
    assert len(caller.handoffs.llm_conditions) == 1 and len(caller.handoffs.context_conditions) == 1


def test_the_hooks_run_before_a_reply_can_be_called_directly():
    agent = quiet("agent")
    seen: list[int] = []
    agent.register_hook("update_agent_state", lambda agent, messages: seen.append(len(messages)))
    agent.register_hook("process_last_received_message", lambda text: text.upper())
    agent.register_hook("process_all_messages_before_reply", lambda messages: messages[-1:])
    messages = [{"role": "user", "content": "first"}, {"role": "user", "content": "last"}]

    agent.update_agent_state_before_reply(messages)
    processed = agent.process_last_received_message(messages)
    assert seen == [2]
    assert [m["content"] for m in processed] == ["first", "LAST"]
    assert messages[-1]["content"] == "last", "the caller's messages are left as they were"
    assert agent.process_last_received_message([{"role": "user", "content": "exit"}])[0]["content"] == "exit"
    assert agent.process_all_messages_before_reply(processed) == [{"role": "user", "content": "LAST"}]


def test_get_chat_results_returns_the_last_queue_of_chats():
    sender = quiet("sender")
    first, second = quiet("first", reply="one"), quiet("second", reply="two")
    queue = [
        {"recipient": first, "message": "a", "max_turns": 1, "silent": True},
        {"recipient": second, "message": "b", "max_turns": 1, "silent": True},
    ]

    results = sender.initiate_chats(queue)

    assert sender.get_chat_results() is results
    assert sender.get_chat_results(1).summary == "two"


def test_print_usage_summary_takes_ag2s_mode(capsys: pytest.CaptureFixture[str]):
    assistant = ConversableAgent(
        "assistant", llm_config=ScriptedModel(["one"], cost=0.5), human_input_mode="NEVER"
    )
    quiet("user").initiate_chat(assistant, "task", max_turns=1, silent=True)

    assistant.print_usage_summary()
    both = capsys.readouterr().out
    assistant.print_usage_summary(mode="actual")
    actual = capsys.readouterr().out
    assistant.print_usage_summary(mode=["total"])
    total = capsys.readouterr().out

    assert "usage without the calls answered from a cache: cost 0.5" in both
    assert "usage with the calls answered from a cache: cost 0.5" in both
    assert "without the calls" in actual and "with the calls" not in actual
    assert "with the calls" in total and "without the calls" not in total
    with pytest.raises(ValueError, match="mode must be 'actual', 'total' or a list of them, not 'all'"):
        assistant.print_usage_summary(mode="all")


def test_a_reply_function_gets_a_copy_of_its_config_and_reset_makes_it_again():
    counted: list[int] = []

    def count(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        config["calls"] += 1
        counted.append(config["calls"])
        return False, None

    mine = {"calls": 0}
    assistant = quiet("assistant")
    assistant.register_reply([Agent, None], count, config=mine)
    user = quiet("user")

    user.initiate_chat(assistant, "one", max_turns=1, silent=True)
    user.initiate_chat(assistant, "two", max_turns=1, silent=True)
    assistant.reset()
    user.initiate_chat(assistant, "three", max_turns=1, silent=True)

    assert counted == [1, 2, 1]
    assert mine == {"calls": 0}  # as AG2: the caller's dict is not the one the chats change
