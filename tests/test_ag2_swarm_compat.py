"""AG2 code runs unchanged: swarm idioms of AG2 0.13.4 and its users, run against parley.

Each expected value is what AG2 0.13.4 gives for the same code (run with a scripted reply function in
place of the model, as AG2's own tests do), unless the test says where parley deliberately differs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    AfterWorkOption,
    Agent,
    ContextExpression,
    ContextStr,
    ContextVariables,
    ConversableAgent,
    GroupChatManager,
    OnContextCondition,
    ScriptedModel,
    StopKind,
    SwarmAgent,
    SwarmResult,
    UserProxyAgent,
    a_initiate_swarm_chat,
    a_run_swarm,
    initiate_swarm_chat,
    register_hand_off,
    run_swarm,
    tool_call,
)
from parley.group.results import ReplyResult
from parley.store import MemoryStore


def agent(name: str, *replies: Any, **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    return ConversableAgent(name, llm_config=ScriptedModel(list(replies)), **kwargs)


def contents(result: Any) -> list[Any]:
    return [(message.get("name"), message["content"]) for message in result.chat_history]


# the swarm's manager -----------------------------------------------------------------------------------


@pytest.mark.parametrize("trigger", [[ConversableAgent, None], GroupChatManager, [Agent, None]])
def test_a_reply_function_registered_for_conversable_agents_fires_in_a_swarm(trigger):
    a = agent("a", "the real model")
    senders: list[str] = []

    def mocked(recipient, messages, sender, config):
        senders.append(type(sender).__name__)
        return True, "mocked"

    a.register_reply(trigger, mocked)
    result, _, _ = initiate_swarm_chat(initial_agent=a, messages="hi", agents=[a], silent=True)

    assert senders == ["GroupChatManager"]
    assert result.chat_history == [
        {"content": "hi", "role": "assistant"},
        {"content": "mocked", "role": "user", "name": "a"},
    ]
    assert a.client.requests == []


def test_swarm_manager_args_make_the_manager_whose_termination_check_ends_the_swarm():
    a, b = agent("a", "stop here", "more"), agent("b", "b")
    register_hand_off(a, AFTER_WORK(b))

    result, _, last = initiate_swarm_chat(
        a,
        "hi",
        [a, b],
        swarm_manager_args={"name": "boss", "is_termination_msg": lambda m: "stop" in (m["content"] or "")},
        silent=True,
    )

    assert [m["content"] for m in result.chat_history] == ["hi", "stop here"]
    assert last is a
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG
    assert result.stop_reason.agent == "boss"


def test_the_managers_default_termination_check_ends_a_swarm_on_terminate():
    a, b = agent("a", "TERMINATE"), agent("b", "b")
    register_hand_off(a, AFTER_WORK(b))

    result, _, _ = initiate_swarm_chat(a, "hi", [a, b], silent=True)

    assert [m["content"] for m in result.chat_history] == ["hi", "TERMINATE"]
    assert result.summary == ""
    assert b.client.requests == []


def test_swarm_manager_args_may_not_carry_a_groupchat():
    a = agent("a")

    with pytest.raises(ValueError, match="'groupchat' cannot be specified in swarm_manager_args"):
        initiate_swarm_chat(a, "hi", [a], swarm_manager_args={"groupchat": None}, silent=True)


# max_rounds ends every swarm ------------------------------------------------------------------------------


def test_a_reply_named_after_someone_else_is_logged_under_the_speaker_and_max_rounds_ends_the_swarm():
    def foo() -> str:
        return "foo done"

    calls = [{"content": None, "name": "zzz", "tool_calls": [tool_call("foo")]} for _ in range(30)]
    a = ConversableAgent("a", llm_config=ScriptedModel(calls), human_input_mode="NEVER")
    a.register_for_llm()(foo)

    result, _, _ = initiate_swarm_chat(a, "hi", [a], max_rounds=5, silent=True)

    names = [m.get("name") for m in result.chat_history]
    assert names == [None] + ["a"] * 8
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_max_rounds_ends_a_swarm_whose_agent_only_ever_says_tool_messages():
    a = agent("a")
    a.register_reply(
        [Agent, None], lambda r, messages, sender, config: (True, {"role": "tool", "content": "x"})
    )

    result, _, _ = initiate_swarm_chat(a, "hi", [a], max_rounds=3, silent=True)

    assert result.stop_reason.kind is StopKind.MAX_ROUND
    assert len(result.chat_history) <= 2 * 3


# transit messages --------------------------------------------------------------------------------------


def handed_over(**kwargs: Any) -> ConversableAgent:
    a, b = agent("a", [tool_call("transfer_to_b", id="t1")]), agent("b", "b answers")
    register_hand_off(a, [ON_CONDITION(b, "go b")])
    initiate_swarm_chat(a, "hi", [a, b], silent=True, **kwargs)
    return b


def test_handoff_calls_and_their_results_are_left_out_of_what_the_models_see_by_default():
    b = handed_over()

    assert b.client.requests[0].messages[1:] == [{"content": "hi", "role": "user", "name": "_User"}]
    assert [m.get("tool_calls") is not None for m in next(iter(b.chat_messages.values()))] == [
        False,
        True,
        False,
        False,
    ]


def test_exclude_transit_message_false_shows_the_handoff_to_the_models():
    b = handed_over(exclude_transit_message=False)

    assert [m["role"] for m in b.client.requests[0].messages[1:]] == ["user", "assistant", "tool"]
    assert b.client.requests[0].messages[-1]["tool_call_id"] == "t1"


def test_a_message_mixing_a_handoff_and_another_call_keeps_the_other_call_and_its_result():
    def look_up(city: str) -> str:
        return f"Sunny in {city}."

    a = agent(
        "a",
        [tool_call("look_up", {"city": "Oslo"}, id="w1"), tool_call("transfer_to_b", id="t1")],
        functions=[look_up],
    )
    b = agent("b", "b answers")
    register_hand_off(a, [ON_CONDITION(b, "go b")])

    initiate_swarm_chat(a, "hi", [a, b], silent=True)

    seen = b.client.requests[0].messages[1:]
    assert [call["id"] for call in seen[1]["tool_calls"]] == ["w1"]
    assert seen[2:] == [{"role": "tool", "content": "Sunny in Oslo.", "tool_call_id": "w1"}]


# the first message -------------------------------------------------------------------------------------


def test_the_first_message_of_a_swarm_without_a_user_agent_has_no_name_in_the_history():
    a = agent("a", "hello")

    result, _, _ = initiate_swarm_chat(a, "hi", [a], silent=True)

    assert result.chat_history[0] == {"content": "hi", "role": "assistant"}
    assert all(m.get("name") != "_User" for m in result.chat_history)
    assert a.client.requests[0].messages[-1] == {"content": "hi", "role": "user", "name": "_User"}


@pytest.mark.parametrize("where", ["agents", "user_agent"])
def test_an_agent_may_not_be_called__User(where):
    a, user = agent("a"), UserProxyAgent("_User")
    named = agent("_User")
    kwargs = {"agents": [a, named]} if where == "agents" else {"agents": [a], "user_agent": user}

    with pytest.raises(ValueError, match="'_User' is the name a swarm gives"):
        initiate_swarm_chat(initial_agent=a, messages="hi", silent=True, **kwargs)


def test_after_the_user_agent_speaks_the_agent_that_reverted_to_it_goes_on():
    a, b = agent("a", "a1", "a2"), agent("b", "b1", "b2")
    user = UserProxyAgent("u")
    user.get_human_input = lambda prompt, **kwargs: "user says"
    register_hand_off(a, AFTER_WORK(b))
    register_hand_off(b, AFTER_WORK(AfterWorkOption.REVERT_TO_USER))

    result, _, _ = initiate_swarm_chat(a, "hi", [a, b], user_agent=user, max_rounds=6, silent=True)

    assert contents(result) == [
        ("u", "hi"),
        ("a", "a1"),
        ("b", "b1"),
        ("u", "user says"),
        ("b", "b2"),
        ("u", "user says"),
    ]


# SwarmResult -------------------------------------------------------------------------------------------


def test_swarm_result_is_a_pydantic_model_with_empty_context_variables_by_default():
    result = SwarmResult(values="x")

    assert result.context_variables == ContextVariables()
    assert isinstance(result.context_variables, ContextVariables)
    assert result.model_dump_json() == '{"values":"x","agent":null,"context_variables":{"data":{}}}'
    assert result.model_dump() == {"values": "x", "agent": None, "context_variables": {"data": {}}}
    assert str(result) == "x"
    assert SwarmResult(values="x") == SwarmResult(values="x")


def test_swarm_result_serializes_its_agent_by_name():
    a = agent("a")

    dumped = json.loads(SwarmResult(values="x", agent=a).model_dump_json())

    assert dumped["agent"] == "a"


def test_swarm_result_keeps_the_context_variables_of_a_dict():
    # AG2 0.13.4 validates a dict into an empty ContextVariables (its data is lost); parley keeps it.
    assert SwarmResult(values="x", context_variables={"a": 1}).context_variables == {"a": 1}


@pytest.mark.parametrize("kwargs", [{"values": "x", "agent": 5}, {"values": 5}])
def test_swarm_result_validates_its_fields(kwargs):
    with pytest.raises(ValueError, match="validation error for SwarmResult"):
        SwarmResult(**kwargs)


class _SubclassedSwarmResult(SwarmResult):
    pass


class _SubclassedReplyResult(ReplyResult):
    pass


def _made(kind: type, fields: dict[str, Any]) -> Any:
    """What ``kind(**fields)`` makes, as data, or the error it raises."""
    try:
        result = kind(**fields)
    except ValidationError as error:
        return error.errors(include_context=False), str(error).split("\n", 1)[1]  # without the title
    dumps = result.model_dump(), result.model_dump_json(), result.model_dump(mode="json")
    return result.__getstate__(), dumps, result.model_fields_set


_A = agent("a")
_CONTEXT = ContextVariables(data={"k": 1})


@pytest.mark.parametrize(
    "fields",
    [
        {"values": "x"},
        {"values": "x", "context_variables": {"k": 1}},
        {"values": "x", "agent": "a", "context_variables": _CONTEXT},
        {"values": "x", "agent": _A, "context_variables": None},
        {"values": "x", "agent": AfterWorkOption.TERMINATE, "unknown": 1},
        {"values": 5},
        {"values": "x", "agent": 5},
        {"values": "x", "context_variables": 5},
        {"values": "x", "context_variables": [("k", 1)]},
    ],
)
def test_a_swarm_result_is_made_as_pydantic_makes_a_subclass(fields):
    # a SwarmResult's validator is called directly; a subclass's goes through BaseModel.__init__
    assert _made(SwarmResult, fields) == _made(_SubclassedSwarmResult, fields)
    if isinstance(fields.get("context_variables"), ContextVariables):
        assert SwarmResult(**fields).context_variables is fields["context_variables"]
    if type(fields.get("context_variables")) is dict:
        assert SwarmResult(**fields).context_variables is not fields["context_variables"]


@pytest.mark.parametrize(
    "fields",
    [
        {"message": "m"},
        {"message": "m", "target": _A, "context_variables": {"k": 1}},
        {"message": "m", "context_variables": _CONTEXT},
        {"message": 5},
        {"message": "m", "target": 5},
        {"message": "m", "context_variables": "k"},
    ],
)
def test_a_reply_result_is_made_as_pydantic_makes_a_subclass(fields):
    assert _made(ReplyResult, fields) == _made(_SubclassedReplyResult, fields)


def test_reply_result_is_a_pydantic_model_too():
    result = ReplyResult(message="m")

    assert result.context_variables is None
    assert result.model_dump() == {"message": "m", "target": None, "context_variables": None}


# context variables -------------------------------------------------------------------------------------


def test_agents_context_variables_attribute():
    assert ConversableAgent("a", llm_config=False).context_variables == ContextVariables()
    assert isinstance(ConversableAgent("a", llm_config=False).context_variables, ContextVariables)
    given = ContextVariables(data={"k": 1})
    assert ConversableAgent("a", llm_config=False, context_variables=given).context_variables is given
    assert ConversableAgent("a", llm_config=False, context_variables={"k": 1}).context_variables == {"k": 1}


def test_after_a_swarm_its_agents_share_the_context_variables_it_returned():
    a = agent("a", "done")
    context = ContextVariables(data={"c": 1})

    _, returned, _ = initiate_swarm_chat(a, "hi", [a], context_variables=context, silent=True)

    assert returned is context
    assert a.context_variables is context


def test_generate_swarm_tool_reply_runs_the_calls_of_the_last_message_given_even_without_a_name():
    def add(a: int, b: int, context_variables: dict[str, Any]) -> SwarmResult:
        return SwarmResult(values=str(a + b), context_variables={"sum": a + b})

    swarm_agent = SwarmAgent("calc", llm_config=ScriptedModel([]), functions=[add])
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [tool_call("add", {"a": 1, "b": 2}, id="c1")],
    }

    final, reply = swarm_agent.generate_swarm_tool_reply(messages=[message])

    assert final is True
    assert reply["tool_responses"] == [{"role": "tool", "content": "3", "tool_call_id": "c1"}]
    assert swarm_agent.context_variables == {"sum": 3}
    assert swarm_agent.generate_swarm_tool_reply(messages=[{"content": "no calls"}]) == (False, None)


# handoffs without a model, and the swarm manager's model ----------------------------------------------


def test_on_context_condition_hands_off_before_the_model_is_asked():
    a, b = agent("a", "never asked"), agent("b", "b here")
    register_hand_off(a, [OnContextCondition(b, ContextExpression("${n} > 2"))])

    result, _, last = initiate_swarm_chat(
        a, "hi", [a, b], context_variables=ContextVariables(data={"n": 3}), silent=True
    )

    assert result.chat_history == [
        {"content": "hi", "role": "assistant"},
        {"content": "[Handing off to b]", "role": "user", "name": "a"},
        {"content": "b here", "role": "user", "name": "b"},
    ]
    assert last is b
    assert a.client.requests == []


def test_on_context_condition_on_a_variable_name_and_when_it_does_not_hold():
    a, b = agent("a", "a answers"), agent("b", "b here")
    register_hand_off(a, [OnContextCondition(b, "escalate")])

    result, _, last = initiate_swarm_chat(a, "hi", [a, b], context_variables={"escalate": False}, silent=True)

    assert contents(result) == [(None, "hi"), ("a", "a answers")]
    assert last is a


def test_context_expression_follows_ag2s_grammar():
    context = ContextVariables(data={"a": True, "b": 3, "tier": "gold", "items": [1, 2], "n": None})
    expected = {
        "${a}": True,
        "not ${a}": False,
        "${a} and ${b} > 2": True,
        '${tier} == "gold"': True,
        "${tier} == 'gold'": True,
        "len(${items}) == 2": True,
        "${a} & ${b}": 3,
        "${n} == None": True,
        "True": True,
        "${a} and not(${b} < 2)": True,
        "${b} != 3": False,
        "!${a} | ${b} >= 3": True,
        "${b} > -1": True,
        "-${b} == -3": True,
        "${b} >= -0.5 and +${b} == 3": True,
    }

    assert {text: ContextExpression(text).evaluate(context) for text in expected} == expected
    with pytest.raises(KeyError, match="x"):
        ContextExpression("${b} >= 3 or ${x}").evaluate(context)
    with pytest.raises(ValueError, match="BinOp is not allowed"):
        ContextExpression("${b} + 1 > 2")
    with pytest.raises(ValueError, match="only len"):
        ContextExpression("print(${b})")


def test_context_str_fills_in_the_context_variables():
    template = ContextStr(template="Hi {name}")

    assert template.format(ContextVariables(data={"name": "Ada"})) == "Hi Ada"
    assert template.format(ContextVariables()) == "Hi {name}"
    with pytest.raises(KeyError):
        template.format(ContextVariables(data={"x": 1}))
    assert str(template) == "ContextStr, unformatted: Hi {name}"


def test_an_on_condition_described_by_a_context_str_and_available_by_expression():
    b = agent("b", "b here")
    a = agent("a", [tool_call("transfer_to_b")])
    register_hand_off(
        a, ON_CONDITION(b, ContextStr("Transfer for {customer}"), available=ContextExpression("${vip}"))
    )

    initiate_swarm_chat(a, "hi", [a, b], context_variables={"customer": "Ada", "vip": True}, silent=True)

    assert [tool["function"]["description"] for tool in a.client.requests[0].tools] == ["Transfer for Ada"]


def test_swarm_manager_after_work_lets_the_managers_model_choose():
    a, b = agent("a", "a done"), agent("b", "b done")
    register_hand_off(
        a, AFTER_WORK(AfterWorkOption.SWARM_MANAGER, next_agent_selection_msg="Pick from {agentlist}.")
    )
    selector = ScriptedModel(["b"])

    result, _, last = initiate_swarm_chat(
        a, "hi", [a, b], swarm_manager_args={"llm_config": selector}, silent=True
    )

    assert contents(result) == [(None, "hi"), ("a", "a done"), ("b", "b done")]
    assert last is b
    assert selector.requests[0].messages[-1]["content"] == "Pick from ['a', 'b']."


def test_swarm_manager_after_work_needs_the_managers_model():
    a, b = agent("a", "a done"), agent("b")
    register_hand_off(a, AFTER_WORK(AfterWorkOption.SWARM_MANAGER))

    with pytest.raises(ValueError, match="SWARM_MANAGER, which needs the swarm manager's model"):
        initiate_swarm_chat(a, "hi", [a, b], silent=True)


def test_next_agent_selection_msg_is_only_for_swarm_manager():
    with pytest.warns(UserWarning, match="only to AfterWorkOption.SWARM_MANAGER"):
        after_work = AFTER_WORK(AfterWorkOption.TERMINATE, next_agent_selection_msg="pick")

    assert after_work.next_agent_selection_msg is None


# bad input is a ValueError, as in AG2 ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda a: initiate_swarm_chat(initial_agent="x", messages="hi", agents=[a]),
            "initial_agent must be",
        ),
        (lambda a: initiate_swarm_chat(initial_agent=a, messages="hi", agents=[a, "y"]), "ConversableAgents"),
        (lambda a: register_hand_off(a, "nope"), "hand_to must be a list"),
        (lambda a: register_hand_off(a, ["nope"]), "invalid hand off condition"),
        (lambda a: ON_CONDITION(5, "c"), "must be an agent"),
        (lambda a: ON_CONDITION(a, ""), "non-empty condition"),
        (lambda a: ON_CONDITION(a, 5), "condition must be text"),
        (lambda a: AFTER_WORK("bogus"), "a string must name an option"),
        (lambda a: AFTER_WORK(5), "must be an agent"),
        (lambda a: OnContextCondition(a, 5), "context-variable name or a ContextExpression"),
    ],
)
def test_invalid_targets_and_agent_lists_are_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call(agent("a"))


def test_a_handoff_target_outside_the_swarm_is_a_value_error_before_it_starts():
    a, outsider = agent("a"), agent("outsider")
    register_hand_off(a, AFTER_WORK(outsider))

    with pytest.raises(ValueError, match="not an agent of this chat"):
        initiate_swarm_chat(a, "hi", [a], silent=True)


@pytest.mark.parametrize("handoff", ["nobody", "outsider"])
def test_a_swarm_result_handing_off_to_an_unknown_agent_ends_the_swarm_with_a_value_error(handoff):
    outsider = agent("outsider")

    def go() -> SwarmResult:
        return SwarmResult(values="gone", agent=outsider if handoff == "outsider" else handoff)

    g = agent("g", [tool_call("go")], "after", functions=[go])

    with pytest.raises(ValueError, match=f"handoff to '{handoff}', which is not an agent of this chat"):
        initiate_swarm_chat(g, "hi", [g], silent=True)


# async swarms and durable swarms take the new handoffs too -----------------------------------------------


async def test_an_async_swarm_takes_context_handoffs_and_lets_the_manager_choose():
    a, b, c = agent("a", "never asked"), agent("b", "b done"), agent("c", "c done")
    register_hand_off(a, [OnContextCondition(b, "go")])
    register_hand_off(b, AFTER_WORK(AfterWorkOption.SWARM_MANAGER))
    selector = ScriptedModel(["c"])

    result, _, last = await a_initiate_swarm_chat(
        a,
        "hi",
        [a, b, c],
        context_variables={"go": True},
        swarm_manager_args={"llm_config": selector},
        silent=True,
    )

    assert contents(result) == [(None, "hi"), ("a", "[Handing off to b]"), ("b", "b done"), ("c", "c done")]
    assert last is c
    assert len(selector.requests) == 1


def test_a_durable_swarm_resumes_a_context_handoff_after_a_crash():
    def swarm(store: MemoryStore) -> Any:
        a, b = agent("a", "never asked"), agent("b", "b here")
        register_hand_off(a, [OnContextCondition(b, "go")])
        return initiate_swarm_chat(
            a, "hi", [a, b], context_variables={"go": True}, store=store, chat_id="s", silent=True
        )

    full = MemoryStore()
    result, _, _ = swarm(full)
    records = full.load("s")
    handed = next(i for i, record in enumerate(records) if "Handing off" in record.data) + 1

    crashed = MemoryStore()
    log = crashed.open("s")
    log.append(records[:handed])
    log.close()
    resumed, _, last = swarm(crashed)

    assert resumed.chat_history == result.chat_history
    assert last.name == "b"


# AG2's run API for swarms ------------------------------------------------------------------------------


def test_run_swarm_returns_a_response_with_the_swarms_results(capsys):
    a, b = agent("a", [tool_call("transfer_to_b")]), agent("b", "b answers")
    register_hand_off(a, ON_CONDITION(b, "go b"))
    context = ContextVariables(data={"k": 1})

    response = run_swarm(a, "hi", [a, b], None, None, 5, context)
    response.process()

    assert "b (to chat_manager):\n\nb answers" in capsys.readouterr().out
    assert [m.get("name") for m in response.messages] == [None, "a", "a", "b"]
    assert response.summary == "b answers"
    assert response.last_speaker == "b"
    assert response.context_variables is context


async def test_a_run_swarm_is_awaited():
    a = agent("a", "done")

    response = await a_run_swarm(a, "hi", [a])

    assert await response.summary == "done"
    assert await response.last_speaker == "a"


def test_run_swarm_takes_stop_conditions_and_listeners_too():
    from parley.limits import MaxModelCalls

    a, b = agent("a", [tool_call("transfer_to_b")]), agent("b", "b answers")
    register_hand_off(a, ON_CONDITION(b, "go b"))
    heard: list[Any] = []

    response = run_swarm(a, "hi", [a, b], stop_when=MaxModelCalls(1), listeners=[heard.append])
    response.process()

    assert [m.get("name") for m in response.messages] == [None, "a", "a"], "b's model call is refused"
    assert response.last_speaker == "a"
    assert heard


def test_the_results_of_several_tool_calls_in_one_swarm_message_are_joined_by_a_newline():
    def note(x: int) -> str:
        return f"x={x}"

    a = agent("a", [tool_call("note", {"x": 1}), tool_call("note", {"x": 2})], "done", functions=[note])

    result, _, _ = initiate_swarm_chat(a, "go", [a], silent=True)

    assert result.chat_history[2]["content"] == "x=1\nx=2"  # AG2's swarm tool executor's separator
    assert [r["content"] for r in result.chat_history[2]["tool_responses"]] == ["x=1", "x=2"]


def test_on_context_condition_on_a_variable_the_context_lacks_stops_the_chat_naming_it():
    a, b = agent("a", "a answers"), agent("b", "b here")
    register_hand_off(a, [OnContextCondition(b, "escalate")])

    with pytest.raises(KeyError, match=r"Missing context variable: 'escalate'.*a's OnContextCondition to b"):
        initiate_swarm_chat(a, "hi", [a, b], context_variables={"tier": "gold"}, silent=True)
    assert a.client.requests == []
