"""Classic swarms: handoffs, after-work, context variables, SwarmResult, state updates and limits."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest

from conftest import human
from parley import (
    AFTER_WORK,
    ON_CONDITION,
    UPDATE_SYSTEM_MESSAGE,
    AfterWorkOption,
    ChatResult,
    ContextVariables,
    ScriptedModel,
    StopKind,
    SwarmAgent,
    SwarmResult,
    UserProxyAgent,
    a_initiate_swarm_chat,
    initiate_swarm_chat,
    register_hand_off,
    tool_call,
)


def agent(name: str, *replies: Any, **kwargs: Any) -> SwarmAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    return SwarmAgent(
        name, system_message=f"You are {name}.", llm_config=ScriptedModel(list(replies)), **kwargs
    )


def turns(result: ChatResult) -> list[str]:
    """Who spoke, one entry per round (an agent's tool results belong to its round)."""
    return [message.get("name") for message in result.chat_history if message["role"] != "tool"]


def transfer(target: str) -> list[dict[str, Any]]:
    return [tool_call(f"transfer_to_{target}")]


# the seed's example: max_rounds ------------------------------------------------------------------------


def test_max_rounds_with_after_work_handoffs_counts_the_first_message():
    a, b, c = agent("agent_a", "a1", "a2"), agent("agent_b", "b1"), agent("agent_c", "c1")
    register_hand_off(a, AFTER_WORK(b))
    register_hand_off(b, AFTER_WORK(c))
    register_hand_off(c, AFTER_WORK(a))

    result, context, last = initiate_swarm_chat(
        initial_agent=a, agents=[a, b, c], max_rounds=5, messages="first message", silent=True
    )

    # 1. user with "first message" > 2. agent_a > 3. agent_b > 4. agent_c > 5. agent_a > end
    assert turns(result) == [None, "agent_a", "agent_b", "agent_c", "agent_a"]
    assert [m["content"] for m in result.chat_history] == ["first message", "a1", "b1", "c1", "a2"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND
    assert last is a
    assert context == {}


@pytest.mark.parametrize("entry", ["initiate_swarm_chat", "a_initiate_swarm_chat"])
def test_the_chat_ending_documents_max_round_spelling_limits_a_swarm_the_same_way(entry: str):
    a, b, c = agent("agent_a", "a1", "a2"), agent("agent_b", "b1"), agent("agent_c", "c1")
    register_hand_off(a, AFTER_WORK(b))
    register_hand_off(b, AFTER_WORK(c))
    register_hand_off(c, AFTER_WORK(a))
    kwargs = {"agents": [a, b, c], "max_round": 5, "messages": "first message", "silent": True}

    if entry == "initiate_swarm_chat":
        result, _, last = initiate_swarm_chat(initial_agent=a, **kwargs)
    else:
        result, _, last = asyncio.run(a_initiate_swarm_chat(initial_agent=a, **kwargs))
    assert last is a

    # 1. User with "first message" > 2. agent_a > 3. agent_b > 4. agent_c > 5. agent_a > end
    assert [m["content"] for m in result.chat_history] == ["first message", "a1", "b1", "c1", "a2"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_max_round_and_max_rounds_that_disagree_are_an_error():
    a = agent("agent_a", "a1")
    with pytest.raises(ValueError, match="max_round=3 and max_rounds=5 are the same limit"):
        initiate_swarm_chat(a, "hi", [a], max_rounds=5, max_round=3, silent=True)


def test_max_rounds_with_tool_call_handoffs_counts_an_agents_tool_results_in_its_round():
    a = agent("agent_a", transfer("agent_b"), transfer("agent_b"))
    b, c = agent("agent_b", transfer("agent_c")), agent("agent_c", transfer("agent_a"))
    a.register_hand_off(ON_CONDITION(b, "go to b"))
    b.register_hand_off(ON_CONDITION(c, "go to c"))
    c.register_hand_off(ON_CONDITION(a, "go to a"))

    result, _, last = initiate_swarm_chat(a, "first message", [a, b, c], max_rounds=5, silent=True)

    assert turns(result) == [None, "agent_a", "agent_b", "agent_c", "agent_a"]
    call_id = result.chat_history[1]["tool_calls"][0]["id"]
    assert result.chat_history[2] == {
        "role": "tool",
        "content": "Transferred to agent_b.",
        "tool_responses": [{"role": "tool", "content": "Transferred to agent_b.", "tool_call_id": call_id}],
        "name": "agent_a",
    }
    assert result.stop_reason.kind is StopKind.MAX_ROUND
    assert last is a


def test_the_model_sees_a_transfer_tool_described_by_the_condition():
    b = agent("billing", "I can help with that.")
    triage = agent("triage", transfer("billing"))
    triage.register_hand_off([ON_CONDITION(b, "The customer has a question about an invoice.")])

    result, _, _ = initiate_swarm_chat(triage, "My invoice is wrong", [triage, b], silent=True)

    request = triage.client.requests[0]
    assert request.tools == [
        {
            "type": "function",
            "function": {
                "name": "transfer_to_billing",
                "description": "The customer has a question about an invoice.",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    assert request.messages == [
        {"content": "You are triage.", "role": "system"},
        {"content": "My invoice is wrong", "role": "user", "name": "_User"},
    ]
    assert turns(result) == [None, "triage", "billing"]
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert result.stop_reason.agent == "billing"


# after-work ---------------------------------------------------------------------------------------


def test_terminate_after_work_ends_when_an_agent_replies_without_handing_off():
    a = agent("a", "done")

    result, _, last = initiate_swarm_chat(a, "hi", [a], silent=True)

    assert turns(result) == [None, "a"]
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert last is a


def test_revert_to_user_asks_the_users_human_and_returns_to_the_agent():
    a = agent("a", "Which order?", "Refund issued.")
    user = UserProxyAgent("user")
    the_human = human(user, "order 42", "exit")

    result, _, _ = initiate_swarm_chat(
        a,
        "I want a refund",
        [a],
        user_agent=user,
        after_work=AFTER_WORK(AfterWorkOption.REVERT_TO_USER),
        silent=True,
    )

    assert turns(result) == ["user", "a", "user", "a"]
    assert [m["content"] for m in result.chat_history] == [
        "I want a refund",
        "Which order?",
        "order 42",
        "Refund issued.",
    ]
    assert the_human.prompts[0] == (
        "Replying as user. Provide feedback to chat_manager. Press enter to skip and use auto-reply, "
        "or type 'exit' to end the conversation: "
    )
    assert result.human_input == ["order 42", "exit"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT


def test_revert_to_user_without_a_user_agent_ends_the_chat():
    a = agent("a", "over to you")

    result, _, _ = initiate_swarm_chat(a, "hi", [a], after_work=AFTER_WORK("REVERT_TO_USER"), silent=True)

    assert turns(result) == [None, "a"]
    assert result.stop_reason.kind is StopKind.NO_USER_TO_REVERT_TO
    assert result.stop_reason.agent == "a"


def test_stay_lets_the_same_agent_speak_until_the_limit():
    a = agent("a", "one", "two", "three")

    result, _, _ = initiate_swarm_chat(
        a, "hi", [a], max_rounds=4, after_work=AFTER_WORK(AfterWorkOption.STAY), silent=True
    )

    assert turns(result) == [None, "a", "a", "a"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_agent_level_after_work_overrides_the_chat_level():
    a, b = agent("a", "a1"), agent("b", "b1", "b2")
    a.register_hand_off(AFTER_WORK(b))

    result, _, _ = initiate_swarm_chat(
        a, "hi", [a, b], max_rounds=4, after_work=AFTER_WORK("STAY"), silent=True
    )

    assert turns(result) == [None, "a", "b", "b"]


def test_after_work_function_gets_the_seeds_four_arguments():
    a, b = agent("a", "a1"), agent("b", "b1")
    seen: list[Any] = []

    def route(last_speaker, messages, groupchat, context_variables):
        seen.append((last_speaker.name, len(messages), groupchat.agent_names, dict(context_variables)))
        return b if last_speaker is a else None

    result, _, _ = initiate_swarm_chat(
        a, "hi", [a, b], context_variables={"k": 1}, after_work=route, silent=True
    )

    assert turns(result) == [None, "a", "b"]
    assert seen == [("a", 2, ["a", "b"], {"k": 1}), ("b", 3, ["a", "b"], {"k": 1})]
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET  # "return None to terminate"
    assert "route returned None" in result.stop_reason.detail


def test_after_work_function_in_ag2_s_three_argument_form_and_returning_options():
    a = agent("a", "a1", "a2")

    def route(last_speaker, messages, groupchat):
        return AfterWorkOption.STAY if len(messages) < 3 else "TERMINATE"

    result, _, _ = initiate_swarm_chat(a, "hi", [a], after_work=AFTER_WORK(route), silent=True)

    assert turns(result) == [None, "a", "a"]
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET


def test_after_work_function_returning_nonsense_is_a_clear_error():
    a = agent("a", "a1")

    with pytest.raises(ValueError, match="returned 42; it must return an agent"):
        initiate_swarm_chat(a, "hi", [a], after_work=lambda *args: 42, silent=True)


def test_after_work_string_must_be_an_option():
    with pytest.raises(ValueError, match="a string must name an option"):
        AFTER_WORK("somewhere")


# tools, SwarmResult and context variables -------------------------------------------------------------


def record_order(
    order_id: Annotated[str, "The order number"], context_variables: dict[str, Any]
) -> SwarmResult:
    """Record the customer's order number."""
    return SwarmResult(
        values=f"Order {order_id} recorded for {context_variables['customer']}.",
        agent="refunds",
        context_variables={"order_id": order_id},
    )


def test_swarm_result_updates_context_and_hands_off():
    triage = agent("triage", [tool_call("record_order", {"order_id": "A7"})], functions=[record_order])
    refunds = agent("refunds", "Refund for A7 started.")
    context = ContextVariables({"customer": "Ada"})

    result, returned, last = initiate_swarm_chat(
        triage, "refund please", [triage, refunds], context_variables=context, silent=True
    )

    assert turns(result) == [None, "triage", "refunds"]
    assert result.chat_history[2]["content"] == "Order A7 recorded for Ada."
    assert returned is context
    assert context == {"customer": "Ada", "order_id": "A7"}
    assert last is refunds
    assert triage.client.requests[0].tools[0]["function"]["parameters"] == {
        "type": "object",
        "properties": {"order_id": {"type": "string", "description": "The order number"}},
        "required": ["order_id"],
    }
    assert triage.get_context("order_id") == "A7"


def test_a_plain_dict_of_context_variables_is_not_changed_in_place():
    triage = agent("triage", [tool_call("record_order", {"order_id": "B1"})], functions=[record_order])
    refunds = agent("refunds", "ok")
    starting = {"customer": "Bob"}

    _, returned, _ = initiate_swarm_chat(
        triage, "hi", [triage, refunds], context_variables=starting, silent=True
    )

    assert starting == {"customer": "Bob"}
    assert returned == {"customer": "Bob", "order_id": "B1"}


def test_after_tool_results_without_a_handoff_the_same_agent_speaks_again():
    def lookup(city: str) -> str:
        return f"{city}: sunny"

    a = agent("a", [tool_call("lookup", {"city": "Oslo"})], "It is sunny in Oslo.", functions=[lookup])

    result, _, _ = initiate_swarm_chat(a, "weather?", [a], silent=True)

    assert turns(result) == [None, "a", "a"]
    assert [m["content"] for m in result.chat_history][2:] == ["Oslo: sunny", "It is sunny in Oslo."]
    assert a.client.requests[1].messages[-1] == {
        "role": "tool",
        "content": "Oslo: sunny",
        "tool_call_id": result.chat_history[1]["tool_calls"][0]["id"],
    }


def test_several_handoffs_in_one_message_first_wins_and_the_others_are_told():
    a = agent("a", [*transfer("b"), *transfer("c")])
    b, c = agent("b", "b here"), agent("c", "c here")
    a.register_hand_off([ON_CONDITION(b, "to b"), ON_CONDITION(c, "to c")])

    result, _, last = initiate_swarm_chat(a, "hi", [a, b, c], silent=True)

    responses = result.chat_history[2]["tool_responses"]
    assert responses[0]["content"] == "Transferred to b."
    assert responses[1]["content"] == (
        "Not transferred to c: an earlier call in the same message (transfer_to_b) already handed off to b."
    )
    assert turns(result) == [None, "a", "b"]
    assert last is b


def test_an_after_work_option_given_as_text_is_refused_with_the_option_to_give_instead():
    a, b = agent("a", "done"), agent("b", "done")

    with pytest.raises(
        ValueError,
        match=r"not an agent of this chat \(a, b\); for the option, give AfterWorkOption.TERMINATE",
    ):
        initiate_swarm_chat(a, "help", [a, b], after_work="TERMINATE", silent=True)


def test_a_swarm_result_naming_an_unknown_agent_ends_the_chat_with_an_error_as_in_ag2():
    def escalate(team: str) -> SwarmResult:
        return SwarmResult(values="escalating", agent=team)

    a = agent("a", [tool_call("escalate", {"team": "legal"})], functions=[escalate])
    b = agent("b", "b took over")

    with pytest.raises(
        ValueError, match=r"handoff to 'legal', which is not an agent of this chat \(a, b\)"
    ) as caught:
        initiate_swarm_chat(a, "help", [a, b], silent=True)

    partial = caught.value.chat_result
    assert [m.get("name") for m in partial.chat_history] == [None, "a", "a"]  # the tool's result is kept
    assert partial.chat_history[-1]["content"] == "escalating"
    assert partial.stop_reason.kind is StopKind.ERROR


def test_a_transfer_tool_the_model_invents_is_answered_with_a_tool_message():
    a = agent("a", transfer("legal"), "sorry, I stay")

    result, _, _ = initiate_swarm_chat(a, "help", [a], silent=True)

    assert result.chat_history[2]["content"].startswith("Error: Function transfer_to_legal not found.")
    assert turns(result) == [None, "a", "a"]


def test_swarm_result_can_terminate():
    def finish() -> SwarmResult:
        return SwarmResult(values="bye", agent=AfterWorkOption.TERMINATE)

    a = agent("a", [tool_call("finish")], functions=[finish])

    result, _, _ = initiate_swarm_chat(
        a, "done?", [a], after_work=AFTER_WORK(AfterWorkOption.STAY), silent=True
    )

    assert turns(result) == [None, "a"]
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert "handoff" in result.stop_reason.detail


# availability and state updates -----------------------------------------------------------------------


def test_on_condition_available_switches_the_transfer_tool():
    vip = agent("vip", "hello vip")
    gate = agent("gate", "checking", [tool_call("set_vip")], transfer("vip"))

    def set_vip(context_variables: dict[str, Any]) -> SwarmResult:
        return SwarmResult(values="vip now", context_variables={"is_vip": True})

    gate.add_single_function(set_vip, description="Mark the customer as VIP.")
    gate.register_hand_off([ON_CONDITION(vip, "VIP customers", available="is_vip"), AFTER_WORK("STAY")])

    result, _, _ = initiate_swarm_chat(
        gate, "hi", [gate, vip], context_variables={"is_vip": False}, silent=True
    )

    offered = [request.tool_names for request in gate.client.requests]
    assert offered == [["set_vip"], ["set_vip"], ["set_vip", "transfer_to_vip"]]
    assert turns(result)[-1] == "vip"


def test_on_condition_available_may_be_a_function_of_agent_and_messages():
    b = agent("b", "b")
    a = agent("a", "one", "two")
    a.register_hand_off(
        [ON_CONDITION(b, "to b", available=lambda agent, messages: len(messages) >= 2), AFTER_WORK("STAY")]
    )

    initiate_swarm_chat(a, "hi", [a, b], max_rounds=3, silent=True)

    assert [request.tool_names for request in a.client.requests] == [[], ["transfer_to_b"]]


def test_update_system_message_template_is_filled_before_each_reply():
    a = agent(
        "a",
        "first",
        "second",
        update_agent_state_before_reply=[UPDATE_SYSTEM_MESSAGE("Help {customer} with {issue}.")],
    )
    a.register_hand_off(AFTER_WORK("STAY"))

    def change_issue(agent, messages):
        agent.set_context("issue", f"issue after {len(messages)} messages")

    a.register_update_agent_state_before_reply([change_issue])

    initiate_swarm_chat(
        a, "hi", [a], max_rounds=3, context_variables={"customer": "Ada", "issue": "billing"}, silent=True
    )

    assert [request.system_message for request in a.client.requests] == [
        "Help Ada with billing.",
        "Help Ada with issue after 1 messages.",
    ]


def test_update_system_message_function_and_missing_variable():
    a = agent(
        "a",
        "x",
        update_agent_state_before_reply=UPDATE_SYSTEM_MESSAGE(
            lambda agent, messages: f"{len(messages)} so far"
        ),
    )
    initiate_swarm_chat(a, "hi", [a], silent=True)
    assert a.client.requests[0].system_message == "1 so far"

    b = agent("b", "x", update_agent_state_before_reply=[UPDATE_SYSTEM_MESSAGE("Hello {name}")])
    with pytest.raises(KeyError, match="uses the context variable 'name', which is not set"):
        initiate_swarm_chat(b, "hi", [b], silent=True)


# resuming, async, bad input ---------------------------------------------------------------------------


def test_a_list_of_messages_resumes_the_conversation_with_the_initial_agent():
    a, b = agent("a", "a resumed"), agent("b")
    history = [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "name": "a", "content": "a-prev"},
        {"role": "user", "name": "b", "content": "b-prev"},
    ]

    result, _, _ = initiate_swarm_chat(a, history, [a, b], max_rounds=2, silent=True)

    assert [(m.get("name"), m["content"]) for m in result.chat_history] == [
        (None, "hello"),
        ("a", "a-prev"),
        ("b", "b-prev"),
        ("a", "a resumed"),
    ]
    assert a.client.requests[0].messages[1:] == [
        {"content": "hello", "role": "user", "name": "_User"},
        {"content": "a-prev", "role": "assistant", "name": "a"},
        {"content": "b-prev", "role": "user", "name": "b"},
    ]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_a_single_message_said_by_an_agent_of_the_swarm_goes_on_with_the_initial_agent():
    a, b = agent("a", "a answers"), agent("b", "b answers")
    register_hand_off(a, AFTER_WORK(b))

    result, _, last = initiate_swarm_chat(
        a, [{"role": "user", "name": "b", "content": "from b"}], [a, b], silent=True
    )

    assert [(m.get("name"), m["content"]) for m in result.chat_history] == [
        ("b", "from b"),
        ("a", "a answers"),
        ("b", "b answers"),
    ]
    assert last is b


async def test_async_swarm_runs_async_tools():
    async def fetch(key: str, context_variables: dict[str, Any]) -> SwarmResult:
        return SwarmResult(values=f"fetched {key}", context_variables={"last": key})

    a = agent("a", [tool_call("fetch", {"key": "k1"})], "done", functions=[fetch])

    result, context, _ = await a_initiate_swarm_chat(a, "go", [a], silent=True)

    assert [m["content"] for m in result.chat_history] == ["go", None, "fetched k1", "done"]
    assert context == {"last": "k1"}


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"agents": []}, ValueError, "non-empty list"),
        ({"agents": ["a"]}, ValueError, "ConversableAgents"),
        ({"initial_agent": "a"}, ValueError, "initial_agent must be a ConversableAgent"),
        ({"user_agent": "u"}, ValueError, "user_agent must be a ConversableAgent"),
        ({"after_work": 5}, ValueError, "after_work must be an agent"),
        ({"context_variables": 5}, ValueError, "context_variables must be a dict"),
        ({"context_variables": {1: "one"}}, ValueError, r"keys must be strings, not 1 \(int\)"),
        ({"max_rounds": {"llm_config": False}}, ValueError, "pass swarm_manager_args by keyword"),
        ({"swarm_manager_args": {"groupchat": 1}}, ValueError, "'groupchat' cannot be specified"),
        ({"max_rounds": 0}, ValueError, "max_rounds"),
        ({"messages": 5}, TypeError, "messages must be a string"),
        ({"messages": [{"name": "ghost", "content": "boo"}]}, ValueError, "named 'ghost'"),
    ],
)
def test_bad_swarm_arguments(kwargs, error, match):
    a = agent("a")
    arguments = {"initial_agent": a, "messages": "hi", "agents": [a], "silent": True, **kwargs}

    with pytest.raises(error, match=match):
        initiate_swarm_chat(**arguments)


def test_initial_agent_must_be_in_the_swarm_and_names_unique():
    a, other, twin = agent("a"), agent("other"), agent("a")

    with pytest.raises(ValueError, match="initial_agent 'other' is not in agents"):
        initiate_swarm_chat(other, "hi", [a], silent=True)
    with pytest.raises(ValueError, match=r"repeated: \['a'\]"):
        initiate_swarm_chat(a, "hi", [a, twin], silent=True)


def test_handoff_to_an_agent_outside_the_swarm_fails_before_the_chat_starts():
    a, outsider = agent("a", "x"), agent("outsider")
    a.register_hand_off(ON_CONDITION(outsider, "go outside"))

    with pytest.raises(
        ValueError, match="a's handoff: handoff to 'outsider', which is not an agent of this chat"
    ):
        initiate_swarm_chat(a, "hi", [a], silent=True)
    assert a.client.requests == []


def test_console_shows_handoffs_and_the_stop_reason(capsys):
    a, b = agent("a", transfer("b")), agent("b", "b here")
    a.register_hand_off(ON_CONDITION(b, "to b"))

    initiate_swarm_chat(a, "hi", [a, b])

    printed = capsys.readouterr().out
    assert "_User (to chat_manager):" in printed
    assert ">>>>>>>> handoff: a -> b" in printed
    assert "CHAT STOPPED: b replied without handing off; the chat's after-work ends the chat" in printed


def test_the_stop_reason_says_whose_after_work_ended_the_chat():
    own = agent("own", "done")
    own.register_hand_off(AFTER_WORK("TERMINATE"))
    result, _, _ = initiate_swarm_chat(own, "hi", [own], silent=True)
    assert str(result.stop_reason) == "own's after-work ends the chat"

    plain = agent("plain", "done")
    result, _, _ = initiate_swarm_chat(plain, "hi", [plain], after_work=AFTER_WORK("TERMINATE"), silent=True)
    assert str(result.stop_reason) == "plain replied without handing off; the chat's after-work ends the chat"
    assert result.stop_reason.agent == "plain"


def test_agents_remember_only_their_latest_swarm():
    a = agent("a", "one", "two", "three")

    first, _, _ = initiate_swarm_chat(a, "first", [a], silent=True)
    initiate_swarm_chat(a, "second", [a], silent=True)
    initiate_swarm_chat(a, "third", [a], silent=True)

    assert len(a.chat_messages) == 1
    assert [m["content"] for m in next(iter(a.chat_messages.values()))] == ["third", "three"]
    assert [m["content"] for m in first.chat_history] == ["first", "one"]


def test_state_update_functions_may_take_no_arguments():
    calls: list[str] = []
    a = agent("a", "one")
    a.register_update_agent_state_before_reply(lambda: calls.append("updated"))

    initiate_swarm_chat(a, "hi", [a], silent=True)

    assert calls == ["updated"]


# the answer to a handoff does not depend on who listens ------------------------------------------------


def _ring_with_odd_calls() -> list[SwarmAgent]:
    a = agent("a", transfer("b"), "a again")
    b = agent("b", [tool_call("transfer_to_c", {"urgent": True})], transfer("c"))
    c = agent("c", [tool_call("transfer_to_a", "")], "c done")
    register_hand_off(a, ON_CONDITION(b, "to b"))
    register_hand_off(b, ON_CONDITION(c, "to c"))
    register_hand_off(c, ON_CONDITION(a, "to a"))
    return [a, b, c]


def test_a_handoff_is_answered_the_same_whether_or_not_anyone_listens_sync_or_async():
    heard: list[Any] = []
    agents = _ring_with_odd_calls()
    quiet, _, _ = initiate_swarm_chat(agents[0], "go", agents, silent=True)
    agents = _ring_with_odd_calls()
    listened, _, _ = initiate_swarm_chat(agents[0], "go", agents, silent=True, listeners=[heard.append])

    def said(result: ChatResult) -> list[tuple[Any, ...]]:
        return [
            (m["role"], m.get("name"), m.get("content"), [c["function"] for c in m.get("tool_calls") or ()])
            for m in result.chat_history
        ]

    agents = _ring_with_odd_calls()
    awaited, _, _ = asyncio.run(a_initiate_swarm_chat(agents[0], "go", agents, silent=True))

    assert heard
    assert said(quiet) == said(listened) == said(awaited)
    answers = [m["content"] for m in quiet.chat_history if m["role"] == "tool"]
    assert answers[0] == "Transferred to b."
    assert answers[1].startswith("Error: invalid arguments for transfer_to_c: unexpected arguments 'urgent'")
    assert answers[2:] == ["Transferred to c.", "Transferred to a."]
    assert turns(quiet) == [None, "a", "b", "b", "c", "a"]


def test_a_transfer_tool_replaced_by_hand_runs_the_replacement():
    a, b, c = agent("a", transfer("b"), "a done"), agent("b", "b here"), agent("c", "c here")
    register_hand_off(a, ON_CONDITION(b, "to b"))
    a.handoffs.tools_by_name["transfer_to_b"].func = lambda: c

    result, _, last = initiate_swarm_chat(a, "go", [a, b, c], silent=True)

    assert result.chat_history[2]["content"] == "Transferred to c."
    assert last is c


def test_a_handoff_added_after_a_first_swarm_is_taken_by_the_next():
    a, b, c = agent("a", transfer("b"), transfer("c")), agent("b", "b here"), agent("c", "c here")
    register_hand_off(a, ON_CONDITION(b, "to b"))
    first, _, _ = initiate_swarm_chat(a, "go", [a, b, c], silent=True)
    register_hand_off(a, ON_CONDITION(c, "to c"))
    second, _, last = initiate_swarm_chat(a, "go", [a, b, c], silent=True)

    assert turns(first) == [None, "a", "b"]
    assert turns(second) == [None, "a", "c"]
    assert last is c


def test_a_handoff_to_an_agent_left_out_of_the_next_swarm_fails_before_it_starts():
    a, b, c = agent("a", "a1", "a2"), agent("b", "b1"), agent("c", "c1")
    register_hand_off(a, ON_CONDITION(b, "to b"))
    initiate_swarm_chat(a, "go", [a, b], silent=True)

    with pytest.raises(ValueError, match=r"a's handoff: handoff to 'b', which is not an agent of this chat"):
        initiate_swarm_chat(a, "go", [a, c], silent=True)


def test_the_swarm_managers_group_chat_is_a_default_group_chat_of_the_members():
    from parley import GroupChat

    a, b = agent("a", "a1"), agent("b", "b1")
    user = UserProxyAgent("user", human_input_mode="NEVER")
    register_hand_off(a, AFTER_WORK(AfterWorkOption.TERMINATE))

    initiate_swarm_chat(a, "go", [a, b], user_agent=user, max_rounds=7, silent=True)

    groupchat = a._last_chat.host.groupchat
    expected = GroupChat([a, b, user], messages=list(groupchat.messages), max_round=7)
    assert vars(groupchat) == vars(expected)
    assert groupchat.allowed_speaker_transitions_dict[a] is not groupchat.allowed_speaker_transitions_dict[b]


def test_a_handoff_to_an_agent_built_again_under_the_same_name_says_so():
    old_billing = SwarmAgent("billing", llm_config=ScriptedModel([]))
    billing = SwarmAgent("billing", llm_config=ScriptedModel([]))
    triage = SwarmAgent("triage", llm_config=ScriptedModel([tool_call("transfer_to_billing")]))
    triage.register_hand_off(ON_CONDITION(old_billing, "Billing questions."))

    with pytest.raises(ValueError, match="not this chat's 'billing' but another object of the same name"):
        initiate_swarm_chat(triage, "refund?", [triage, billing], silent=True)


# handoff tool names -------------------------------------------------------------------------------------


def test_handoff_tools_to_long_names_that_share_a_start_stay_apart():
    long = "x" * 60
    b, c = agent(f"{long}_b", "I am b", "I am b"), agent(f"{long}_c", "I am c")
    offering = agent("a")
    offering.register_hand_off([ON_CONDITION(b, "to b"), ON_CONDITION(c, "to c")])
    names = list(offering.handoffs.tools_by_name)

    assert len(set(names)) == 2
    assert all(len(name) <= 64 for name in names)
    for name, target in zip(names, (b, c), strict=True):
        a = agent("a", [tool_call(name)])
        a.register_hand_off([ON_CONDITION(b, "to b"), ON_CONDITION(c, "to c")])
        _, _, last = initiate_swarm_chat(a, "hi", [a, b, c], silent=True)
        assert last is target


def test_a_handoff_to_an_agent_whose_name_a_model_api_would_refuse_gets_a_name_it_takes():
    b = agent("Ünï.support", "hello")
    a = agent("a", [tool_call("transfer_to__n__support")])
    a.register_hand_off(ON_CONDITION(b, "to b"))

    _, _, last = initiate_swarm_chat(a, "hi", [a, b], silent=True)

    assert a.client.requests[0].tool_names == ["transfer_to__n__support"]
    assert last is b


def test_state_functions_given_to_the_constructor_may_take_no_arguments():
    calls = []
    a = SwarmAgent(
        "a",
        llm_config=ScriptedModel(["done"]),
        human_input_mode="NEVER",
        update_agent_state_before_reply=[
            lambda: calls.append("nothing"),
            lambda agent, messages: calls.append(agent.name),
        ],
    )

    initiate_swarm_chat(a, "hi", [a], silent=True)

    assert calls == ["nothing", "a"]
    with pytest.raises(TypeError, match="update_agent_state_before_reply takes callables, not 'x'"):
        SwarmAgent("b", llm_config=False, update_agent_state_before_reply=["x"])


def test_the_results_of_every_call_are_kept_when_one_hands_off_to_an_unknown_agent():
    charged: list[int] = []

    def charge(amount: int) -> str:
        charged.append(amount)
        return f"charged {amount}"

    def escalate(team: str) -> SwarmResult:
        return SwarmResult(values="escalating", agent=team)

    calls = [tool_call("charge", {"amount": 5}, id="c1"), tool_call("escalate", {"team": "legal"}, id="c2")]
    a = agent("a", calls, functions=[charge, escalate])

    with pytest.raises(ValueError, match="handoff to 'legal'") as caught:
        initiate_swarm_chat(a, "help", [a], silent=True)

    assert charged == [5]
    last = caught.value.chat_result.chat_history[-1]
    assert [r["content"] for r in last["tool_responses"]] == ["charged 5", "escalating"]
