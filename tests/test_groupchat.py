"""Group chats: the seed's examples with exact speaker sequences, every way they end, transition graphs,
resume, async runs, the console, and bad input."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import random
from typing import Any

import pytest

from conftest import contents, human, speakers
from parley import (
    Agent,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    ScriptedModel,
    StopKind,
    tool_call,
)
from parley.events import ConsolePrinter


@pytest.fixture
def abc(quiet_agent):
    """Three model-less agents a, b, c that reply "A-says", "B-says", "C-says"."""
    return [quiet_agent(name, f"{name.upper()}-says", description=f"Agent {name}") for name in "abc"]


def group(agents: list[ConversableAgent], **kwargs: Any) -> GroupChatManager:
    manager_kwargs = {key: kwargs.pop(key) for key in ("llm_config", "is_termination_msg") if key in kwargs}
    manager_kwargs.setdefault("llm_config", False)
    kwargs.setdefault("speaker_selection_method", "round_robin")
    return GroupChatManager(GroupChat(agents, messages=[], **kwargs), **manager_kwargs)


def names(manager: GroupChatManager) -> list[str]:
    """The speakers, in order, as the group chat's messages name them."""
    return [message["name"] for message in manager.groupchat.messages]


# 1. maximum rounds: the seed's example ---------------------------------------------------------------


def test_round_robin_max_round_5_gives_a_b_c_a_b(abc):
    agent_a, agent_b, _ = abc
    manager = group(abc, max_round=5)

    result = agent_a.initiate_chat(manager, "first message", silent=True)

    assert speakers(result) == ["a", "b", "c", "a", "b"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND
    assert result.stop_reason.agent == "b"
    assert result.stop_reason.detail == "Maximum rounds (5) reached"
    assert result.summary == "B-says"
    assert manager.last_speaker is agent_b


def test_groupchat_messages_are_the_log_and_chat_history_is_the_initiators_view(abc):
    agent_a, agent_b, _ = abc
    manager = group(abc, max_round=3)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert manager.groupchat.messages == [
        {"content": "start", "role": "user", "name": "a"},
        {"content": "B-says", "role": "user", "name": "b"},
        {"content": "C-says", "role": "user", "name": "c"},
    ]
    assert result.chat_history == [
        {"content": "start", "role": "assistant", "name": "a"},
        {"content": "B-says", "role": "user", "name": "b"},
        {"content": "C-says", "role": "user", "name": "c"},
    ]
    assert agent_b.chat_messages[manager] == [
        {"content": "start", "role": "user", "name": "a"},
        {"content": "B-says", "role": "assistant", "name": "b"},
        {"content": "C-says", "role": "user", "name": "c"},
    ]


def test_round_robin_starts_after_the_initiator(abc):
    _, agent_b, _ = abc
    manager = group(abc, max_round=4)

    agent_b.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["b", "c", "a", "b"]


def test_an_outsider_initiator_is_followed_by_the_first_agent_and_sees_the_whole_chat(abc, quiet_agent):
    outsider = quiet_agent("u")
    manager = group(abc, max_round=4)

    result = outsider.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["u", "a", "b", "c"]
    assert speakers(result) == ["u", "a", "b", "c"]
    assert result.chat_history[0]["role"] == "assistant"


def test_max_round_1_sends_only_the_initial_message(abc):
    manager = group(abc, max_round=1)

    result = abc[0].initiate_chat(manager, "only me", silent=True)

    assert contents(result) == ["only me"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_max_turns_does_not_repeat_the_group_chat(abc):
    manager = group(abc, max_round=5)

    result = abc[0].initiate_chat(manager, "start", max_turns=2, silent=True)

    assert speakers(result) == ["a", "b", "c", "a", "b"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_max_turns_0_sends_nothing(abc):
    manager = group(abc, max_round=5)

    result = abc[0].initiate_chat(manager, "never sent", max_turns=0, silent=True)

    assert result.chat_history == []
    assert manager.groupchat.messages == []
    assert result.stop_reason.kind is StopKind.MAX_TURNS


def test_each_run_starts_afresh_unless_clear_history_is_false(abc):
    manager = group(abc, max_round=2)

    abc[0].initiate_chat(manager, "one", silent=True)
    abc[0].initiate_chat(manager, "two", silent=True)
    assert names(manager) == ["a", "b"]

    result = abc[0].initiate_chat(manager, "three", clear_history=False, silent=True)
    assert contents(result) == ["two", "B-says", "three", "B-says"]


# 2. termination messages -----------------------------------------------------------------------------


def test_the_managers_termination_check_ends_the_chat(abc, quiet_agent):
    agent_a, agent_b, _ = abc
    agent_c = quiet_agent("c", "DONE here")
    manager = group(
        [agent_a, agent_b, agent_c], max_round=10, is_termination_msg=lambda m: "DONE" in m["content"]
    )

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c"]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG
    assert result.stop_reason.agent == "chat_manager"
    assert "from c" in result.stop_reason.detail
    assert result.summary == "DONE here"


def test_the_managers_default_termination_message_is_TERMINATE(abc, quiet_agent):
    agent_a, agent_b, _ = abc
    manager = group([agent_a, agent_b, quiet_agent("c", "TERMINATE")], max_round=10)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c"]
    assert result.stop_reason.agent == "chat_manager"


def test_the_manager_checks_the_initial_message_too(abc):
    manager = group(abc, max_round=10)

    result = abc[0].initiate_chat(manager, "TERMINATE", silent=True)

    assert speakers(result) == ["a"]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG


def test_an_agents_own_termination_check_ends_the_group_chat(abc, quiet_agent):
    agent_a, _, agent_c = abc
    agent_b = quiet_agent("b", "B-says", is_termination_msg=lambda m: m["content"] == "A-says")
    manager = group([agent_a, agent_b, agent_c], max_round=8)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c", "a"]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG
    assert result.stop_reason.agent == "b"


def test_a_terminate_mode_agent_asks_its_human_who_may_go_on(abc):
    agent_a, _, agent_c = abc
    agent_b = ConversableAgent(
        "b",
        llm_config=False,
        default_auto_reply="B-says",
        human_input_mode="TERMINATE",
        is_termination_msg=lambda m: m["content"] == "A-says",
    )
    scripted = human(agent_b, "go on")
    manager = group([agent_a, agent_b, agent_c], max_round=6)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c", "a", "b", "c"]
    assert contents(result)[4] == "go on"
    assert scripted.prompts == [
        "Please give feedback to chat_manager. Press enter or type 'exit' to stop the conversation: "
    ]


# 3. consecutive auto replies -------------------------------------------------------------------------


def test_max_consecutive_auto_reply_ends_the_group_chat(abc, quiet_agent):
    agent_a, _, agent_c = abc
    agent_b = quiet_agent("b", "B-says", max_consecutive_auto_reply=1)
    manager = group([agent_a, agent_b, agent_c], max_round=10)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c", "a"]
    assert result.stop_reason.kind is StopKind.MAX_CONSECUTIVE_AUTO_REPLY
    assert result.stop_reason.agent == "b"


# 4. a human types exit ------------------------------------------------------------------------------


def test_a_human_in_the_group_can_reply_skip_and_exit(abc):
    agent_a, _, agent_c = abc
    agent_h = ConversableAgent("h", llm_config=False, default_auto_reply="H-auto", human_input_mode="ALWAYS")
    scripted = human(agent_h, "", "hello from human", "exit")
    manager = group([agent_a, agent_h, agent_c], max_round=20)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "h", "c", "a", "h", "c", "a"]
    assert contents(result) == ["start", "H-auto", "C-says", "A-says", "hello from human", "C-says", "A-says"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT
    assert result.stop_reason.agent == "h"
    assert scripted.prompts[0] == (
        "Replying as h. Provide feedback to chat_manager. Press enter to skip and use auto-reply, "
        "or type 'exit' to end the conversation: "
    )
    assert result.human_input == ["", "hello from human", "exit"]


# 5. no next speaker: a callable returns None --------------------------------------------------------


def test_a_selection_callable_returning_none_ends_the_chat(abc):
    agent_a, agent_b, agent_c = abc
    seen: list[str] = []

    def select(last_speaker: Agent, groupchat: GroupChat) -> Agent | None:
        seen.append(last_speaker.name)
        return {1: agent_b, 2: agent_c}.get(len(groupchat.messages))

    manager = group(abc, max_round=10, speaker_selection_method=select)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c"]
    assert seen == ["a", "b", "c"]
    assert result.stop_reason.kind is StopKind.NO_NEXT_SPEAKER
    assert result.stop_reason.agent == "c"
    assert "select" in result.stop_reason.detail


def test_a_selection_callable_may_name_a_method_for_the_step(abc):
    manager = group(
        abc,
        max_round=5,
        speaker_selection_method=lambda last, chat: (
            "ROUND_ROBIN" if len(chat.messages) % 2 else "round_robin"
        ),
    )

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b", "c", "a", "b"]


def test_a_selection_callable_may_repeat_the_last_speaker(abc):
    manager = group(abc, max_round=4, speaker_selection_method=lambda last, chat: last)

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "a", "a", "a"]


# 7. reply functions ---------------------------------------------------------------------------------


def test_a_final_none_reply_function_ends_the_group_chat(abc):
    agent_a, agent_b, _ = abc

    def end_here(recipient, messages=None, sender=None, config=None):
        return True, None

    agent_b.register_reply([Agent, None], end_here)
    manager = group(abc, max_round=5)

    result = agent_a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a"]
    assert result.stop_reason.kind is StopKind.REPLY_FUNC_FINAL_NONE
    assert result.stop_reason.agent == "b"


# models in the group ---------------------------------------------------------------------------------


def test_agents_models_see_the_whole_conversation_their_own_messages_as_assistant(abc):
    agent_a, _, agent_c = abc
    model = ScriptedModel(["b one", "b two"])
    agent_b = ConversableAgent("b", system_message="You are b.", llm_config=model, human_input_mode="NEVER")
    manager = group([agent_a, agent_b, agent_c], max_round=5)

    agent_a.initiate_chat(manager, "start", silent=True)

    assert model.requests[1].messages == [
        {"content": "You are b.", "role": "system"},
        {"content": "start", "role": "user", "name": "a"},
        {"content": "b one", "role": "assistant", "name": "b"},
        {"content": "C-says", "role": "user", "name": "c"},
        {"content": "A-says", "role": "user", "name": "a"},
    ]


def test_func_call_filter_gives_the_turn_to_the_agent_that_can_execute_the_call(quiet_agent):
    caller = ConversableAgent(
        "caller",
        llm_config=ScriptedModel([tool_call("add", {"x": 1, "y": 2}, id="call_1"), "three it is"]),
        human_input_mode="NEVER",
    )
    bystander = quiet_agent("bystander")
    executor = quiet_agent("executor")
    executor.register_function({"add": lambda x, y: x + y})
    manager = group([caller, bystander, executor], max_round=4)

    result = quiet_agent("user").initiate_chat(manager, "add 1 and 2", silent=True)

    # round robin alone would give the turn to the bystander after the call
    assert speakers(result) == ["user", "caller", "executor", "caller"]
    assert result.chat_history[2]["role"] == "tool"
    assert result.chat_history[2]["content"] == "3"


def test_a_tool_call_nobody_can_execute_is_a_clear_error(quiet_agent):
    caller = ConversableAgent(
        "caller", llm_config=ScriptedModel([tool_call("launch", {})]), human_input_mode="NEVER"
    )
    manager = group([caller, quiet_agent("other")], max_round=4)

    with pytest.raises(ValueError, match="no agent of the group chat can execute launch"):
        manager.groupchat.agents[1].initiate_chat(manager, "go", silent=True)


def test_send_introductions_tells_every_agent_who_is_there(quiet_agent):
    model = ScriptedModel(["hello"])
    agent_b = ConversableAgent("b", llm_config=model, human_input_mode="NEVER", description="Writes code.")
    agent_a = quiet_agent("a", description="Plans the work.")
    manager = group([agent_a, agent_b], max_round=2, send_introductions=True)

    agent_a.initiate_chat(manager, "start", silent=True)

    introduction = model.requests[0].messages[1]
    assert introduction["name"] == "chat_manager"
    assert "a: Plans the work.\nb: Writes code." in introduction["content"]
    assert names(manager) == ["a", "b"]
    # as AG2: the initiator, a member, hears the introduction after its own first message
    assert [m["name"] for m in agent_a.chat_messages[manager]] == ["a", "chat_manager", "b"]
    assert [m["name"] for m in agent_b.chat_messages[manager]] == ["chat_manager", "a", "b"]


# transition graphs -----------------------------------------------------------------------------------


def test_an_allowed_graph_constrains_round_robin(abc):
    a, b, c = abc
    manager = group(
        abc,
        max_round=6,
        allowed_or_disallowed_speaker_transitions={a: [c], c: [b], b: [a]},
        speaker_transitions_type="allowed",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c", "b", "a", "c", "b"]


def test_round_robin_takes_the_next_allowed_agent_in_list_order(abc):
    a, b, c = abc
    manager = group(
        abc,
        max_round=7,
        allowed_or_disallowed_speaker_transitions={a: [b, c], b: [a, c], c: [a]},
        speaker_transitions_type="allowed",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b", "c", "a", "b", "c", "a"]


def test_a_disallowed_graph_is_inverted_with_self_loops(abc):
    a, b, _ = abc
    manager = group(
        abc,
        max_round=6,
        allowed_or_disallowed_speaker_transitions={a: [b]},
        speaker_transitions_type="DISALLOWED",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert {
        k.name: [v.name for v in vs] for k, vs in manager.groupchat.allowed_speaker_transitions_dict.items()
    } == {
        "a": ["a", "c"],
        "b": ["a", "b", "c"],
        "c": ["a", "b", "c"],
    }
    assert names(manager) == ["a", "c", "a", "c", "a", "c"]


@pytest.mark.parametrize("sink", ["missing", "empty"])
def test_an_agent_without_allowed_successors_ends_the_chat(abc, sink):
    a, b, c = abc
    graph = {a: [b], b: [c]} if sink == "missing" else {a: [b], b: [c], c: []}
    manager = group(
        abc, max_round=6, allowed_or_disallowed_speaker_transitions=graph, speaker_transitions_type="allowed"
    )

    result = a.initiate_chat(manager, "start", silent=True)

    assert speakers(result) == ["a", "b", "c"]
    assert result.stop_reason.kind is StopKind.NO_NEXT_SPEAKER
    assert result.stop_reason.agent == "c"


def test_random_selection_keeps_to_the_graph_and_follows_the_random_seed(abc):
    a, b, c = abc
    # With random.seed(0) AG2 0.13.4 gives the same sequence for this graph.
    random.seed(0)
    manager = group(
        abc,
        max_round=8,
        speaker_selection_method="random",
        allowed_or_disallowed_speaker_transitions={a: [b, c], b: [c], c: [a]},
        speaker_transitions_type="allowed",
    )

    a.initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "c", "a", "c", "a", "b", "c", "a"]


def test_random_without_repeats_never_picks_the_last_speaker_twice(abc):
    random.seed(7)
    manager = group(abc, max_round=30, speaker_selection_method="random", allow_repeat_speaker=False)

    abc[0].initiate_chat(manager, "start", silent=True)

    sequence = names(manager)
    assert len(sequence) == 30
    assert all(first != second for first, second in itertools.pairwise(sequence))
    assert set(sequence) == {"a", "b", "c"}


def test_allow_repeat_speaker_as_a_list_lets_only_those_agents_repeat(abc):
    _, b, _ = abc
    groupchat = GroupChat(abc, allow_repeat_speaker=[b])

    allowed = {k.name: [v.name for v in vs] for k, vs in groupchat.allowed_speaker_transitions_dict.items()}
    assert allowed == {"a": ["b", "c"], "b": ["a", "b", "c"], "c": ["a", "b"]}


def test_a_callable_must_keep_to_the_graph(abc):
    a, b, c = abc
    manager = group(
        abc,
        speaker_selection_method=lambda last, chat: c,
        allowed_or_disallowed_speaker_transitions={a: [b], b: [a]},
        speaker_transitions_type="allowed",
    )

    with pytest.raises(ValueError, match="do not allow a -> c") as raised:
        a.initiate_chat(manager, "start", silent=True)
    assert raised.value.chat_result.stop_reason.kind is StopKind.ERROR


# resume ----------------------------------------------------------------------------------------------


def test_resume_continues_a_saved_group_chat(abc):
    a = abc[0]
    manager = group(abc, max_round=3)
    a.initiate_chat(manager, "start", silent=True)
    saved = json.loads(json.dumps(manager.groupchat.messages))

    fresh = [
        ConversableAgent(
            n, llm_config=False, human_input_mode="NEVER", default_auto_reply=f"{n.upper()}-says"
        )
        for n in "abc"
    ]
    manager2 = group(fresh, max_round=3)
    last_agent, last_message = manager2.resume(messages=saved, silent=True)

    assert last_agent is fresh[2]
    assert last_message == {"content": "C-says", "role": "user", "name": "c"}
    assert names(manager2) == ["a", "b"]
    assert fresh[1].chat_messages[manager2] == [
        {"content": "start", "role": "user", "name": "a"},
        {"content": "B-says", "role": "assistant", "name": "b"},
    ]

    result = last_agent.initiate_chat(manager2, message=last_message, clear_history=False, silent=True)

    assert names(manager2) == ["a", "b", "c", "a", "b"]
    assert result.chat_history == [
        {"content": "start", "role": "user", "name": "a"},
        {"content": "B-says", "role": "user", "name": "b"},
        {"content": "C-says", "role": "assistant", "name": "c"},
        {"content": "A-says", "role": "user", "name": "a"},
        {"content": "B-says", "role": "user", "name": "b"},
    ]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_resume_accepts_json_and_removes_a_termination_string(abc):
    manager = group(abc, max_round=3)
    saved = manager.messages_to_string(
        [{"content": "start", "role": "user", "name": "a"}, {"content": "done TERMINATE", "name": "b"}]
    )

    last_agent, last_message = manager.resume(saved, remove_termination_string="TERMINATE", silent=True)

    assert last_agent is abc[1]
    assert last_message["content"] == "done "
    result = last_agent.initiate_chat(manager, message=last_message, clear_history=False, silent=True)
    assert speakers(result) == ["a", "b", "c", "a"]


def test_resume_warns_when_the_last_message_would_end_the_chat_at_once(abc):
    manager = group(abc)

    with pytest.warns(UserWarning, match="termination message"):
        manager.resume([{"content": "TERMINATE", "name": "a"}], silent=True)


def test_resume_gives_an_unnamed_message_to_the_manager(abc):
    manager = group(abc)

    last_agent, last_message = manager.resume([{"content": "hello", "role": "user"}], silent=True)

    assert last_agent is manager
    assert last_message["name"] == "chat_manager"


def test_resume_prints_what_it_loaded(abc, capsys):
    manager = group(abc)

    manager.resume([{"content": "x", "name": "a"}, {"content": "y", "name": "b"}])

    assert "Prepared group chat with 2 messages, the last speaker is b" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("messages", "error", "match"),
    [
        ([], ValueError, "messages is empty"),
        ([{"content": "x", "name": "zzz"}], ValueError, "'zzz', which is not an agent"),
        ("not json", ValueError, "not valid JSON"),
        (5, TypeError, "list of message dicts"),
    ],
)
def test_resume_rejects_bad_messages(abc, messages, error, match):
    manager = group(abc)

    with pytest.raises(error, match=match):
        manager.resume(messages, silent=True)


# async ------------------------------------------------------------------------------------------------


def test_a_initiate_chat_runs_the_group_chat(abc):
    manager = group(abc, max_round=5)

    result = asyncio.run(abc[0].a_initiate_chat(manager, "start", silent=True))

    assert speakers(result) == ["a", "b", "c", "a", "b"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


def test_async_agents_and_async_selection_are_awaited(quiet_agent):
    async def reply(recipient, messages=None, sender=None, config=None):
        await asyncio.sleep(0)
        return True, "async reply"

    agent_a = quiet_agent("a")
    agent_b = quiet_agent("b")
    agent_b.register_reply([Agent, None], reply)
    model = ScriptedModel(["b", "a"])
    manager = group([agent_a, agent_b], max_round=3, speaker_selection_method="auto", llm_config=model)

    result = asyncio.run(agent_a.a_initiate_chat(manager, "start", silent=True))

    assert speakers(result) == ["a", "b", "a"]
    assert contents(result)[1] == "async reply"
    assert len(model.requests) == 2


# the console ------------------------------------------------------------------------------------------


def test_the_console_shows_each_message_and_the_next_speaker(abc, monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("parley.engine.ConsolePrinter", lambda **kw: ConsolePrinter(out, **kw))
    manager = group(abc, max_round=3)

    abc[0].initiate_chat(manager, "start")

    text = out.getvalue()
    assert text.startswith("a (to chat_manager):\n\nstart\n")
    assert "\nNext speaker: b\n\nb (to chat_manager):\n\nB-says\n" in text
    assert text.rstrip().endswith("CHAT STOPPED: Maximum rounds (3) reached")


def test_a_silent_manager_silences_the_group_chat(abc, capsys):
    groupchat = GroupChat(abc, max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False, silent=True)

    abc[0].initiate_chat(manager, "start")

    assert capsys.readouterr().out == ""


# bad input -------------------------------------------------------------------------------------------


def test_a_group_of_one_runs_with_a_selection_callable_as_in_ag2(quiet_agent):
    solo, user = quiet_agent("solo"), quiet_agent("user")
    groupchat = GroupChat([solo], max_round=3, speaker_selection_method=lambda last, group: solo)

    manager = GroupChatManager(groupchat, llm_config=False)
    result = user.initiate_chat(manager, "hi", silent=True)

    assert names(manager) == ["user", "solo", "solo"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND


@pytest.mark.parametrize("agents", [[], "one"])
def test_a_selection_method_by_name_needs_two_agents_when_the_chat_runs(quiet_agent, agents):
    agents = [quiet_agent("solo")] if agents == "one" else agents
    groupchat = GroupChat(agents, speaker_selection_method="round_robin")
    user = quiet_agent("user")

    with pytest.raises(ValueError, match=f"GroupChat is underpopulated with {len(agents)} agents"):
        user.initiate_chat(GroupChatManager(groupchat, llm_config=False), "hi", silent=True)


def test_duplicate_names_are_named(quiet_agent):
    with pytest.raises(ValueError, match=r"unique names.*\['a'\]"):
        GroupChat([quiet_agent("a"), quiet_agent("b"), quiet_agent("a")])


def test_agents_must_be_conversable_agents(quiet_agent):
    with pytest.raises(TypeError, match=r"agents\[1\] must be a ConversableAgent"):
        GroupChat([quiet_agent("a"), "b"])


def test_an_unknown_selection_method_is_rejected_at_construction(abc):
    with pytest.raises(
        ValueError, match="speaker_selection_method 'bogus' is not a speaker selection method"
    ):
        GroupChat(abc, speaker_selection_method="bogus")


def test_selection_method_names_ignore_case(abc):
    assert GroupChat(abc, speaker_selection_method="Round_Robin").speaker_selection_method == "Round_Robin"


def test_a_graph_naming_an_unknown_agent_is_rejected(abc, quiet_agent):
    a, b, _ = abc
    z = quiet_agent("z")
    for graph in ({z: [a]}, {a: [z]}):
        with pytest.raises(ValueError, match="names 'z', which is not an agent of this group chat"):
            GroupChat(
                abc, allowed_or_disallowed_speaker_transitions=graph, speaker_transitions_type="allowed"
            )
    with pytest.raises(ValueError, match="use the agent objects, not their names"):
        GroupChat(
            abc, allowed_or_disallowed_speaker_transitions={"a": [b]}, speaker_transitions_type="allowed"
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"allow_repeat_speaker": True, "allowed_or_disallowed_speaker_transitions": {}},
            "cannot both be given",
        ),
        ({"allowed_or_disallowed_speaker_transitions": {}}, "needs speaker_transitions_type"),
        ({"speaker_transitions_type": "bogus"}, "speaker_transitions_type must be 'allowed' or 'disallowed'"),
        ({"allow_repeat_speaker": "yes"}, "allow_repeat_speaker must be a bool or a list"),
        ({"max_retries_for_selecting_speaker": -1}, "max_retries_for_selecting_speaker must be"),
        ({"max_round": 0}, "max_round must be an int of at least 1"),
        ({"role_for_select_speaker_messages": ""}, "role_for_select_speaker_messages must be"),
        (
            {"select_speaker_message_template": "pick from {names}"},
            "select_speaker_message_template can only",
        ),
        ({"select_speaker_auto_none_template": ""}, "select_speaker_auto_none_template must be"),
    ],
)
def test_bad_settings_are_named(abc, kwargs, match):
    with pytest.raises(ValueError, match=match):
        GroupChat(abc, **kwargs)


def test_a_selection_callable_returning_an_outsider_is_named(abc, quiet_agent):
    z = quiet_agent("z")
    manager = group(abc, speaker_selection_method=lambda last, chat: z)

    with pytest.raises(ValueError, match="returned 'z', which is not an agent of this group chat"):
        abc[0].initiate_chat(manager, "start", silent=True)
    assert manager.groupchat.messages == [{"content": "start", "role": "user", "name": "a"}]


@pytest.mark.parametrize(("returned", "error"), [(5, ValueError), ("bogus", ValueError)])
def test_a_selection_callable_returning_nonsense_is_named(abc, returned, error):
    manager = group(abc, speaker_selection_method=lambda last, chat: returned)

    with pytest.raises(error, match=repr(returned)):
        abc[0].initiate_chat(manager, "start", silent=True)


def test_manager_checks(abc):
    groupchat = GroupChat(abc)
    with pytest.raises(TypeError, match="groupchat must be a GroupChat"):
        GroupChatManager(abc)
    with pytest.raises(ValueError, match="does not call tools"):
        GroupChatManager(groupchat, llm_config={"config_list": [{"model": "m"}], "tools": [{}]})
    with pytest.raises(ValueError, match="'a' is also the name of an agent"):
        GroupChatManager(groupchat, name="a")


def test_auto_without_a_model_is_named_when_it_is_needed(abc):
    manager = group(abc, speaker_selection_method="auto")

    with pytest.raises(ValueError, match="'auto' needs a model"):
        abc[0].initiate_chat(manager, "start", silent=True)


def test_an_outsider_with_a_members_name_is_rejected(abc, quiet_agent):
    manager = group(abc)

    with pytest.raises(ValueError, match="has the name of one of them"):
        quiet_agent("a").initiate_chat(manager, "start", silent=True)


# what changes between and during chats is seen --------------------------------------------------------


def test_a_selection_method_changed_during_the_chat_chooses_from_the_next_step(abc):
    manager = group(abc, max_round=5)

    def switch(recipient: ConversableAgent, messages: Any, sender: Any, config: Any) -> tuple[bool, str]:
        manager.groupchat.speaker_selection_method = lambda last, chat: abc[0]
        return True, "switching"

    abc[1].register_reply([Agent, None], switch)

    abc[0].initiate_chat(manager, "start", silent=True)

    assert names(manager) == ["a", "b", "a", "a", "a"]


def test_repeats_forbidden_after_a_first_chat_are_kept_by_the_next(abc):
    manager = group(abc, max_round=4, speaker_selection_method="random")
    abc[0].initiate_chat(manager, "start", silent=True)
    manager.groupchat.speaker_selection_method = "round_robin"
    manager.groupchat.allowed_speaker_transitions_dict = {
        agent: [other for other in abc if other is not abc[1]] for agent in abc
    }

    abc[0].initiate_chat(manager, "again", silent=True)

    assert names(manager) == ["a", "c", "a", "c"]


def test_an_agent_added_after_a_first_chat_takes_its_turn_in_the_next(abc, quiet_agent):
    manager = group(abc, max_round=3)
    abc[0].initiate_chat(manager, "start", silent=True)
    d = quiet_agent("d", "D-says")
    manager.groupchat.agents.insert(1, d)
    manager.groupchat.allowed_speaker_transitions_dict = {
        agent: list(manager.groupchat.agents) for agent in manager.groupchat.agents
    }

    abc[0].initiate_chat(manager, "again", silent=True)

    assert names(manager) == ["a", "d", "b"]


def test_the_first_message_is_logged_under_its_sender_whatever_name_it_carries(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=3)

    a.initiate_chat(manager, message={"content": "Please review the plan.", "name": "b"}, silent=True)

    assert [m["name"] for m in manager.groupchat.messages] == ["a", "b", "c"]
    assert b.chat_messages[manager][0]["name"] == "a"  # b's model must not think it said it


def test_run_chat_logs_the_last_message_under_its_sender(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=2)

    manager.run_chat([{"content": "Go.", "role": "user", "name": "c"}], sender=a)

    assert [m["name"] for m in manager.groupchat.messages] == ["a", "b"]


def test_a_message_sent_to_the_manager_after_a_group_chat_continues_it(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=3)
    a.initiate_chat(manager, message="first", silent=True)

    a.send("second", manager, silent=True)

    said = [(m["name"], m["content"]) for m in manager.groupchat.messages]
    assert said == [
        ("a", "first"),
        ("b", "B-says"),
        ("c", "C-says"),
        ("a", "second"),
        ("b", "B-says"),
        ("c", "C-says"),
    ]
    assert [m["content"] for m in b.chat_messages[manager]][-3:] == ["second", "B-says", "C-says"]


def test_a_message_sent_to_the_manager_without_asking_for_a_reply_is_only_kept(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=3)
    a.initiate_chat(manager, message="first", silent=True)

    a.send("a note", manager, request_reply=False, silent=True)

    assert [m["content"] for m in manager.groupchat.messages] == ["first", "B-says", "C-says"]
    assert a.chat_messages[manager][-1]["content"] == "a note"


def test_a_send_to_the_manager_continues_the_group_chat_too(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=2)

    async def talk() -> None:
        await a.a_initiate_chat(manager, message="first", silent=True)
        await a.a_send("second", manager, silent=True)

    asyncio.run(talk())

    assert [m["content"] for m in manager.groupchat.messages] == ["first", "B-says", "second", "B-says"]


def test_after_a_group_chat_of_max_turns_a_sent_message_is_only_kept(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=3)
    a.initiate_chat(manager, message="first", max_turns=1, silent=True)

    a.send("second", manager, silent=True)

    assert "second" not in [m["content"] for m in manager.groupchat.messages]


def test_resetting_the_manager_forgets_the_group_chats_messages(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=2)
    a.initiate_chat(manager, message="old topic", silent=True)

    manager.reset()
    a.initiate_chat(manager, message="new topic", clear_history=False, silent=True)

    assert [m["content"] for m in manager.groupchat.messages] == ["new topic", "B-says"]


def test_clearing_the_managers_history_forgets_its_conversations(abc):
    a, b, c = abc
    manager = group([a, b, c], max_round=2)
    a.initiate_chat(manager, message="hello", silent=True)

    manager.clear_history()

    assert dict(manager.chat_messages) == {}
    with pytest.raises(KeyError):
        manager.last_message(a)
    assert [m["content"] for m in manager.groupchat.messages] == ["hello", "B-says"]  # kept, as in AG2


def test_a_manager_cannot_be_a_member_of_another_group_chat(abc):
    a, b, c = abc
    inner = GroupChatManager(GroupChat([b, c], messages=[]), name="inner", llm_config=False)
    outer = group([a, inner], max_round=3)

    with pytest.raises(
        ValueError, match=r"agents\[1\] is the GroupChatManager 'inner'.*register_nested_chats"
    ):
        a.initiate_chat(outer, message="hello", silent=True)


def test_a_selection_function_returning_an_agents_name_is_told_to_return_the_agent(abc):
    a, b, c = abc
    manager = group([a, b, c], speaker_selection_method=lambda last, groupchat: "b")

    with pytest.raises(ValueError, match="returned 'b', the name of an agent: return the agent itself"):
        a.initiate_chat(manager, message="hello", silent=True)


def test_allow_repeat_speaker_set_after_the_group_chat_is_built_is_followed(abc):
    a, b, c = abc
    groupchat = GroupChat([a, b, c], messages=[], max_round=12, speaker_selection_method="random")

    groupchat.allow_repeat_speaker = False
    a.initiate_chat(GroupChatManager(groupchat, llm_config=False), message="hi", silent=True)

    said = [message["name"] for message in groupchat.messages]
    assert len(said) == 12
    assert all(first != second for first, second in itertools.pairwise(said))


def test_reply_functions_and_hooks_registered_on_a_manager_warn_that_the_group_chat_ignores_them(abc):
    manager = group(abc)

    def guard(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
        return True, "Refused."

    with pytest.warns(UserWarning, match="guard is registered on the GroupChatManager 'chat_manager'"):
        manager.register_reply([Agent, None], guard)
    with pytest.warns(UserWarning, match="process_message_before_send hook is registered on the Group"):
        manager.register_hook(
            "process_message_before_send", lambda sender, message, recipient, silent: message
        )
