"""The newer group API: DefaultPattern, transition targets, OnCondition and ReplyResult."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import human
from parley import (
    AgentNameTarget,
    AgentTarget,
    ContextVariables,
    ConversableAgent,
    DefaultPattern,
    OnCondition,
    ReplyResult,
    RevertToUserTarget,
    ScriptedModel,
    StayTarget,
    StopKind,
    StringLLMCondition,
    TerminateTarget,
    UserProxyAgent,
    a_initiate_group_chat,
    initiate_group_chat,
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
    with pytest.raises(ValueError, match="must be an agent"):
        OnCondition(TerminateTarget(), "end")
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
    assert last is writer


def test_targets_and_conditions_of_the_wrong_kind_are_named_when_made():
    with pytest.raises(
        ValueError, match=r"AgentTarget needs an agent, not 'billing' \(for an agent's name, use"
    ):
        AgentTarget("billing")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a StringLLMCondition's prompt must be text, not 5"):
        StringLLMCondition(5)  # type: ignore[arg-type]
    assert AgentNameTarget("billing").display_name() == "billing"
