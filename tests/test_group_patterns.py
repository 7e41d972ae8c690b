"""The newer group API: DefaultPattern, transition targets, OnCondition and ReplyResult."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conftest import human
from parley import (
    AgentNameTarget,
    AgentTarget,
    AutoPattern,
    ContextVariables,
    ConversableAgent,
    DefaultPattern,
    ManualPattern,
    OnCondition,
    RandomPattern,
    ReplyResult,
    RevertToUserTarget,
    RoundRobinPattern,
    ScriptedModel,
    StayTarget,
    StopKind,
    StringLLMCondition,
    TerminateTarget,
    UserProxyAgent,
    a_initiate_group_chat,
    a_run_group_chat,
    initiate_group_chat,
    run_group_chat,
    tool_call,
)


def agent(name: str, *replies: Any, **kwargs: Any) -> ConversableAgent:
    return ConversableAgent(name, llm_config=ScriptedModel(list(replies)), human_input_mode="NEVER", **kwargs)


def names(result: Any) -> list[str]:
    return [m.get("name") for m in result.chat_history if m["role"] != "tool"]


def test_after_work_handoff_then_group_terminate():
    a, b = agent("a", "a1"), agent("b", "b1")
    a.handoffs.set_after_work(AgentTarget(b))
    pattern = DefaultPattern(initial_agent=a, agents=[a, b], group_after_work=TerminateTarget())

    result, context, last = initiate_group_chat(pattern=pattern, messages="start", max_rounds=10, silent=True)

    assert names(result) == [None, "a", "b"]
    assert result.summary == "b1"
    assert isinstance(context, ContextVariables)
    assert last is b
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert result.stop_reason.agent == "b"


def test_default_group_after_work_terminates():
    a = agent("a", "a1")

    result, _, _ = initiate_group_chat(DefaultPattern(a, [a]), "start", silent=True)

    assert names(result) == [None, "a"]
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET


def test_revert_to_user_target_without_a_user_ends_the_chat():
    a = agent("a", "a1")
    pattern = DefaultPattern(a, [a], group_after_work=RevertToUserTarget())

    result, _, _ = initiate_group_chat(pattern, "start", silent=True)

    assert names(result) == [None, "a"]
    assert result.stop_reason.kind is StopKind.NO_USER_TO_REVERT_TO


def test_revert_to_user_target_with_a_user():
    a = agent("a", "which one?", "done")
    user = UserProxyAgent("user")
    human(user, "the blue one", "exit")
    pattern = DefaultPattern(a, [a], user_agent=user, group_after_work=RevertToUserTarget())

    result, _, _ = initiate_group_chat(pattern, "start", silent=True)

    assert names(result) == ["user", "a", "user", "a"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT


def test_stay_target_and_agent_name_target():
    a, b = agent("a", "a1", "a2"), agent("b", "b1")
    a.handoffs.set_after_work(StayTarget())
    b.handoffs.set_after_work(AgentNameTarget("a"))

    result, _, _ = initiate_group_chat(DefaultPattern(a, [a, b]), "start", max_rounds=3, silent=True)

    assert names(result) == [None, "a", "a"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_llm_condition_handoff_and_reply_result():
    def assess(context_variables: ContextVariables) -> ReplyResult:
        context_variables.set("assessed", True)
        return ReplyResult(
            message="assessed", target=AgentTarget(specialist), context_variables={"priority": "high"}
        )

    specialist = agent("specialist", "On it.")
    router = agent("router", [tool_call("transfer_to_specialist")], functions=[assess])
    router.handoffs.add_llm_condition(
        OnCondition(
            target=AgentTarget(specialist), condition=StringLLMCondition(prompt="Needs a specialist.")
        )
    )
    intake = agent("intake", [tool_call("assess")], functions=[assess])
    intake.handoffs.set_after_work(AgentTarget(router))
    pattern = DefaultPattern(
        intake, [intake, router, specialist], context_variables=ContextVariables({"n": 1})
    )

    result, context, last = initiate_group_chat(pattern, "help", silent=True)

    assert names(result) == [None, "intake", "specialist"]
    assert context.to_dict() == {"n": 1, "assessed": True, "priority": "high"}
    assert last is specialist


def test_llm_condition_tool_is_offered_to_the_model():
    b = agent("b", "b1")
    a = agent("a", [tool_call("transfer_to_b")])
    a.handoffs.add_llm_conditions([OnCondition(AgentTarget(b), StringLLMCondition("Go to b."))])

    result, _, _ = initiate_group_chat(DefaultPattern(a, [a, b]), "start", silent=True)

    assert a.client.requests[0].tools[0]["function"]["name"] == "transfer_to_b"
    assert a.client.requests[0].tools[0]["function"]["description"] == "Go to b."
    assert names(result) == [None, "a", "b"]


async def test_async_group_chat():
    a, b = agent("a", "a1"), agent("b", "b1")
    a.handoffs.set_after_work(AgentTarget(b))

    result, _, last = await a_initiate_group_chat(DefaultPattern(a, [a, b]), "start", silent=True)

    assert names(result) == [None, "a", "b"]
    assert last is b


def test_context_variables_behave_like_ag2s():
    context = ContextVariables({"a": 1})
    context.set("b", 2)
    assert context.get("b") == 2
    assert context.remove("a") is True
    assert context.remove("a") is False
    assert context.contains("b")
    assert context.to_dict() == {"b": 2}
    assert ContextVariables.from_dict({"x": 1}) == {"x": 1}


def test_bad_targets_and_conditions():
    a = agent("a")
    with pytest.raises(ValueError, match="after-work target"):
        a.handoffs.set_after_work(42)
    with pytest.raises(ValueError, match="non-empty condition"):
        OnCondition(AgentTarget(a), StringLLMCondition(""))
    with pytest.raises(ValueError, match="an OnCondition's target must be an agent, an agent's name"):
        OnCondition(42, "end")
    with pytest.raises(TypeError, match="DefaultPattern"):
        initiate_group_chat("pattern", "hi")


def test_group_manager_args_make_the_groups_manager():
    writer = ConversableAgent("writer", llm_config=ScriptedModel(["done, stop"]), human_input_mode="NEVER")
    editor = ConversableAgent("editor", llm_config=ScriptedModel(["never"]), human_input_mode="NEVER")
    writer.handoffs.set_after_work(AgentTarget(editor))
    pattern = DefaultPattern(
        initial_agent=writer,
        agents=[writer, editor],
        group_manager_args={"is_termination_msg": lambda message: "stop" in (message["content"] or "")},
    )

    result, _, last = initiate_group_chat(pattern, "Write.", silent=True)

    assert names(result) == [None, "writer"]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG
    assert (
        str(result.stop_reason) == "The group manager chat_manager received a termination message from writer"
    )
    assert last is writer


def test_targets_and_conditions_of_the_wrong_kind_are_named_when_made():
    with pytest.raises(
        ValueError, match=r"AgentTarget needs an agent, not 'billing' \(for an agent's name, use"
    ):
        AgentTarget("billing")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a StringLLMCondition's prompt must be text, not 5"):
        StringLLMCondition(5)  # type: ignore[arg-type]
    assert AgentNameTarget("billing").display_name() == "billing"


# AG2's Pattern parameters, run API and errors ------------------------------------------------------------


def _handing_off() -> tuple[ConversableAgent, ConversableAgent]:
    a = agent("a", [tool_call("transfer_to_b", id="t1")])
    b = agent("b", "b answers")
    a.handoffs.add_llm_conditions(
        [OnCondition(target=AgentTarget(b), condition=StringLLMCondition("b's turn"))]
    )
    return a, b


@pytest.mark.parametrize("exclude", [True, False])
def test_handoff_calls_are_kept_from_the_models_unless_told_otherwise(exclude):
    a, b = _handing_off()
    pattern = DefaultPattern(a, [a, b], exclude_transit_message=exclude)
    if exclude:
        pattern = DefaultPattern(a, [a, b])  # AG2's default

    result, _, last = initiate_group_chat(pattern, "start", silent=True)

    assert last is b and result.summary == "b answers"
    sent = b.client.requests[0].messages[1:]
    assert [m.get("content") for m in sent if m.get("role") != "tool"] == (
        ["start"] if exclude else ["start", None]
    )
    assert any(m.get("role") == "tool" for m in sent) is not exclude


@pytest.mark.parametrize(
    ("summary_method", "summary"),
    [
        ("last_msg", "b answers"),
        (None, ""),
        (
            lambda sender, manager, summary_args: f"{sender.name} asked {manager.name}",
            "_User asked chat_manager",
        ),
    ],
)
def test_a_patterns_summary_method(summary_method, summary):
    a, b = _handing_off()

    result, _, _ = initiate_group_chat(
        DefaultPattern(a, [a, b], summary_method=summary_method), "go", silent=True
    )

    assert result.summary == summary


def test_a_reflection_summary_uses_the_managers_model_and_without_one_is_empty_with_a_warning():
    a, b = _handing_off()
    manager_model = ScriptedModel(["they talked"])
    pattern = DefaultPattern(
        a, [a, b], summary_method="reflection_with_llm", group_manager_args={"llm_config": manager_model}
    )

    assert initiate_group_chat(pattern, "go", silent=True)[0].summary == "they talked"

    a, b = _handing_off()
    with pytest.warns(UserWarning, match="could not summarize"):
        result, _, _ = initiate_group_chat(
            DefaultPattern(a, [a, b], summary_method="reflection_with_llm"), "go", silent=True
        )
    assert result.summary == ""


def test_a_pattern_refuses_what_it_does_not_take():
    a = agent("a", "a1")
    with pytest.raises(TypeError, match="unexpected keyword argument 'sumary_method'"):
        DefaultPattern(a, [a], sumary_method="last_msg")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="summary_method must be one of"):
        DefaultPattern(a, [a], summary_method="everything")  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="parley has no safeguards: leave safeguard_policy out"):
        initiate_group_chat(DefaultPattern(a, [a]), "go", safeguard_policy={"rules": []})
    with pytest.raises(ValueError, match="group_manager_args must be a dict"):
        initiate_group_chat(DefaultPattern(a, [a], group_manager_args=["x"]), "go")  # type: ignore[arg-type]

    result, _, _ = initiate_group_chat(DefaultPattern(a, [a]), "go", safeguard_policy=None, silent=True)
    assert result.summary == "a1"


def test_run_group_chat_runs_the_pattern_and_tells_its_outcome():
    a, b = _handing_off()

    response = run_group_chat(DefaultPattern(a, [a, b]), "start")
    response.process()

    assert response.summary == "b answers"
    assert response.last_speaker == "b"
    assert [m.get("content") for m in response.messages][-1] == "b answers"


async def test_a_run_group_chat_is_its_async_twin():
    a, b = _handing_off()

    response = await a_run_group_chat(DefaultPattern(a, [a, b]), "start")
    await response.process()

    assert await response.summary == "b answers"


def test_the_run_apis_take_a_store_a_chat_id_listeners_and_stop_conditions(tmp_path):
    from parley.limits import MaxModelCalls

    a, b = _handing_off()
    heard: list[Any] = []
    store = f"sqlite:///{tmp_path}/chats.db"

    response = run_group_chat(
        DefaultPattern(a, [a, b]),
        "start",
        store=store,
        chat_id="run-1",
        listeners=[heard.append],
        stop_when=MaxModelCalls(1),
    )
    response.process()
    again, _, _ = initiate_group_chat(DefaultPattern(a, [a, b]), "start", store=store, chat_id="run-1")

    assert str(again.stop_reason) == "the limit of 1 model calls is reached"
    assert [m.get("name") for m in response.messages] == [m.get("name") for m in again.chat_history]
    assert heard, "the listener heard the chat's events"


def test_round_robin_pattern_goes_around_the_agents_then_the_user():
    a, b, c = agent("a", "a1", "a2"), agent("b", "b1"), agent("c", "c1")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="u1")

    result, _, last = initiate_group_chat(
        RoundRobinPattern(initial_agent=a, agents=[b, a, c], user_agent=user), "go", max_rounds=6, silent=True
    )

    assert names(result) == ["user", "a", "b", "c", "user", "a"]  # the user agent says the first message
    assert last is a
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_random_pattern_never_picks_the_agent_that_just_spoke():
    a, b, c = (agent(name, *[f"{name}{n}" for n in range(20)]) for name in "abc")

    result, _, _ = initiate_group_chat(RandomPattern(a, [a, b, c]), "go", max_rounds=20, silent=True)

    spoken = names(result)[1:]
    assert len(spoken) == 19 and set(spoken) == {"a", "b", "c"}
    assert all(first != second for first, second in itertools.pairwise(spoken))


def test_auto_pattern_lets_the_managers_model_choose():
    a, b = agent("a", "a1", "a2"), agent("b", "b1")
    selector = ScriptedModel(["b", "a"])

    result, _, _ = initiate_group_chat(
        AutoPattern(a, [a, b], group_manager_args={"llm_config": selector}), "go", max_rounds=4, silent=True
    )

    assert names(result) == [None, "a", "b", "a"]
    assert len(selector.requests) == 2
    with pytest.raises(ValueError, match="GroupManagerTarget, which needs the group manager's model"):
        initiate_group_chat(AutoPattern(a, [a, b]), "go", silent=True)


def test_the_user_agent_hands_over_by_its_own_after_work_else_back_to_who_spoke_before():
    a, b = agent("a", "a1", "a2"), agent("b", "b1")
    a.handoffs.set_after_work(RevertToUserTarget())
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="u1")

    result, _, _ = initiate_group_chat(
        DefaultPattern(a, [a, b], user_agent=user), "go", max_rounds=4, silent=True
    )
    assert names(result) == ["user", "a", "user", "a"]

    a, b = agent("a", "a1"), agent("b", "b1")
    a.handoffs.set_after_work(RevertToUserTarget())
    user.handoffs.set_after_work(AgentTarget(b))
    result, _, _ = initiate_group_chat(
        DefaultPattern(a, [a, b], user_agent=user), "go", max_rounds=4, silent=True
    )
    assert names(result) == ["user", "a", "user", "b"]


def test_bad_conditions_and_system_message_updaters_raise_what_ag2_raises():
    from parley import UpdateSystemMessage

    a = agent("a")
    with pytest.raises(TypeError, match="expected an OnCondition, not 'x'"):
        a.handoffs.add_llm_condition("x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected an OnContextCondition"):
        a.handoffs.add_context_condition(OnCondition(AgentTarget(a), StringLLMCondition("c")))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a template string or a function, not 42"):
        UpdateSystemMessage(42)  # type: ignore[arg-type]


def test_a_condition_can_end_the_chat_or_keep_the_agent_not_only_hand_to_another():
    a = agent("a", [tool_call("transfer_to_terminate", id="t1")])
    a.handoffs.add_llm_conditions(
        [OnCondition(TerminateTarget(), StringLLMCondition("the customer is done"))]
    )

    result, _, _ = initiate_group_chat(DefaultPattern(a, [a]), "bye", silent=True)

    assert a.client.requests[0].tools[0]["function"]["name"] == "transfer_to_terminate"
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert [m["content"] for m in result.chat_history][-1] == "Transferred to TERMINATE."

    a = agent("a", [tool_call("transfer_to_stay", id="t1")], "a again")
    a.handoffs.add_llm_conditions([OnCondition(StayTarget(), StringLLMCondition("more to say"))])
    result, _, _ = initiate_group_chat(DefaultPattern(a, [a]), "go", silent=True)
    assert [m["content"] for m in result.chat_history][-1] == "a again"
    with pytest.raises(ValueError, match="must be an agent or a transition target, not a function"):
        OnCondition(lambda *args: None, StringLLMCondition("x"))


def test_manual_pattern_asks_the_human_who_speaks_next(monkeypatch):
    import builtins

    a, b, c = agent("a", "a1"), agent("b", "b1"), agent("c", "c1")
    answers = iter(["3", "b", "exit"])
    prompts: list[str] = []

    def answer(prompt: str = "") -> str:
        prompts.append(prompt)
        return next(answers)

    monkeypatch.setattr(builtins, "input", answer)

    result, _, last = initiate_group_chat(ManualPattern(a, [a, b, c]), "go", silent=True)

    assert names(result) == [None, "a", "c", "b"]
    assert last is b
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT
    assert "Choose the next speaker:\n1: a\n2: b\n3: c" in prompts[0]


@pytest.mark.parametrize("pattern", [RoundRobinPattern, RandomPattern])
def test_turn_patterns_take_ag2s_group_after_work_and_say_they_do_not_use_it(pattern: Any):
    a, b = agent("a", "a1"), agent("b", "b1")

    with pytest.warns(UserWarning, match=f"{pattern.__name__} chooses who speaks next itself"):
        made = pattern(a, [a, b], None, None, None, TerminateTarget(), True, "last_msg")
    result, _, _ = initiate_group_chat(made, "go", max_rounds=3, silent=True)

    assert [m["content"] for m in result.chat_history] == ["go", "a1", "b1"]  # not ended by the target
    assert result.stop_reason.kind is StopKind.MAX_ROUND
