"""AG2 code runs unchanged: group chat idioms of AG2 0.13.4 and its users, run against parley.

Each expected value is what AG2 0.13.4 gives for the same code (run with a scripted reply function in
place of the model, as AG2's own tests do), unless the test says where parley deliberately differs.
"""

from __future__ import annotations

import builtins
from typing import Any

import pytest

from conftest import human
from parley import (
    Agent,
    AgentNameConflictError,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    ScriptedModel,
    StopKind,
)


def quiet(name: str, **kwargs: Any) -> ConversableAgent:
    return ConversableAgent(
        name, llm_config=False, human_input_mode="NEVER", default_auto_reply=f"{name} here", **kwargs
    )


def names(groupchat: GroupChat) -> list[str]:
    return [message["name"] for message in groupchat.messages]


# manual selection ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answers", "agents", "chosen"),
    [
        (["2"], None, "c"),
        ([""], None, None),
        (["q"], None, None),
        (["x", "9", "1"], None, None),
        (["1"], "c", "c"),
    ],
)
def test_manual_select_speaker_asks_at_the_console(monkeypatch, answers, agents, chosen):
    b, c = quiet("b"), quiet("c")
    groupchat = GroupChat([b, c], messages=[])
    replies = iter(answers)
    monkeypatch.setattr(builtins, "input", lambda prompt="": next(replies))

    picked = groupchat.manual_select_speaker(None if agents is None else [c])

    assert (picked.name if picked is not None else None) == chosen


def test_a_group_chat_subclass_can_change_manual_selection():
    a, b, c = quiet("a"), quiet("b"), quiet("c")

    class AlwaysC(GroupChat):
        def manual_select_speaker(self, agents: Any = None) -> Any:
            return c

    groupchat = AlwaysC([a, b, c], messages=[], max_round=3, speaker_selection_method="manual")
    a.initiate_chat(GroupChatManager(groupchat, llm_config=False), "go", silent=True)

    assert names(groupchat) == ["a", "c", "c"]


def test_manual_selection_in_a_running_chat_asks_the_managers_human():
    a, b = quiet("a"), quiet("b")
    groupchat = GroupChat([a, b], messages=[], max_round=2)
    manager = GroupChatManager(groupchat, llm_config=False)
    the_human = human(manager, "2")
    picked: list[Any] = []

    def select(last_speaker: Agent, group: GroupChat) -> Any:
        picked.append(group.manual_select_speaker())
        return picked[-1]

    groupchat.speaker_selection_method = select
    result = a.initiate_chat(manager, "go", silent=True)

    assert picked == [b]
    assert result.human_input == ["2"]
    assert "Enter the number of the next speaker" in the_human.prompts[0]


# nested groups --------------------------------------------------------------------------------------------


def test_agent_by_name_recursive_and_nested_agents():
    inner_a, inner_b, outer_a = quiet("ia"), quiet("ib"), quiet("oa")
    inner = GroupChatManager(GroupChat([inner_a, inner_b], messages=[]), name="inner", llm_config=False)
    outer = GroupChat([outer_a, inner], messages=[])

    assert [agent.name for agent in outer.nested_agents()] == ["oa", "inner", "ia", "ib"]
    assert outer.agent_by_name("ia") is None
    assert outer.agent_by_name("ia", recursive=True) is inner_a
    assert outer.agent_by_name("nobody", recursive=True) is None


def test_agent_by_name_can_refuse_a_name_that_is_not_unique():
    outer_a = quiet("oa")
    twin = GroupChatManager(GroupChat([quiet("oa"), quiet("z")], messages=[]), name="twin", llm_config=False)
    outer = GroupChat([outer_a, twin], messages=[])

    assert outer.agent_by_name("oa", recursive=True) is outer_a
    with pytest.raises(AgentNameConflictError, match="multiple agents"):
        outer.agent_by_name("oa", recursive=True, raise_on_name_conflict=True)
    assert isinstance(AgentNameConflictError("x"), ValueError)


# groups of one, and a manager talking to itself ---------------------------------------------------------


def test_a_group_chat_of_one_agent_runs_with_a_selection_function():
    solo, user = quiet("solo"), quiet("user")
    groupchat = GroupChat([solo], messages=[], max_round=3, speaker_selection_method=lambda last, group: solo)

    user.initiate_chat(GroupChatManager(groupchat, llm_config=False), message="hi", silent=True)

    assert names(groupchat) == ["user", "solo", "solo"]


@pytest.mark.parametrize("method", ["round_robin", "auto"])
def test_a_group_chat_of_one_agent_cannot_choose_by_method(method):
    groupchat = GroupChat([quiet("solo")], messages=[], max_round=3, speaker_selection_method=method)

    with pytest.raises(ValueError, match="GroupChat is underpopulated with 1 agents"):
        quiet("user").initiate_chat(GroupChatManager(groupchat, llm_config=False), message="hi", silent=True)


def test_a_group_chat_manager_can_start_its_own_group_chat():
    b, c = quiet("b"), quiet("c")
    groupchat = GroupChat([b, c], messages=[], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False)

    result = manager.initiate_chat(manager, message="self talk", silent=True)

    assert names(groupchat) == ["chat_manager", "b", "c"]
    assert result.stop_reason.kind is StopKind.MAX_ROUND
    assert result.chat_history[0] == {"content": "self talk", "role": "assistant", "name": "chat_manager"}


# "auto" selection options -----------------------------------------------------------------------------------


class Redact:
    """A message transform in the shape of AG2's ``TransformMessages``."""

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    def apply_transforms(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.seen.append(messages)
        return [{**message, "content": "[redacted]"} for message in messages]


def test_select_speaker_auto_llm_config_transform_messages_and_verbose(capsys):
    a, b = quiet("a"), quiet("b")
    selector, transform = ScriptedModel(["b"]), Redact()
    groupchat = GroupChat(
        [a, b],
        messages=[],
        max_round=2,
        select_speaker_auto_llm_config=selector,
        select_speaker_transform_messages=transform,
        select_speaker_auto_verbose=True,
    )
    manager = GroupChatManager(groupchat, llm_config=False)

    a.initiate_chat(manager, "secret plan")

    assert names(groupchat) == ["a", "b"]
    assert [m["content"] for m in selector.requests[0].messages[1:-1]] == ["[redacted]"]
    assert transform.seen[0][0]["content"] == "secret plan"
    assert "Speaker selection, attempt 1: 'b' (selected b)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"select_speaker_auto_verbose": None}, "select_speaker_auto_verbose must be a bool"),
        ({"select_speaker_transform_messages": 5}, "select_speaker_transform_messages must be None or"),
        (
            {"select_speaker_auto_model_client_cls": object},
            "select_speaker_auto_model_client_cls is not supported",
        ),
        ({"enable_clear_history": "yes"}, "enable_clear_history must be a bool"),
    ],
)
def test_bad_auto_selection_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GroupChat([quiet("a"), quiet("b")], messages=[], **kwargs)


# clear history ----------------------------------------------------------------------------------------------


def clearing_group(command: str) -> tuple[ConversableAgent, ConversableAgent, GroupChat, Any]:
    a = ConversableAgent("a", llm_config=ScriptedModel(["a1", "a2", "a3"]), human_input_mode="NEVER")
    b = quiet("b")
    b.register_reply([Agent, None], lambda recipient, messages, sender, config: (True, {"content": command}))
    c = ConversableAgent("c", llm_config=ScriptedModel(["c1", "c2"]), human_input_mode="NEVER")
    groupchat = GroupChat(
        [a, b, c], messages=[], max_round=5, speaker_selection_method="round_robin", enable_clear_history=True
    )
    result = a.initiate_chat(GroupChatManager(groupchat, llm_config=False), message="start", silent=True)
    return a, c, groupchat, result


def test_clear_history_makes_every_agents_model_forget_and_is_cut_from_the_reply():
    a, c, groupchat, result = clearing_group("clear history now go on")

    assert c.client.requests[0].messages[1:] == [{"content": "now go on", "role": "user", "name": "b"}]
    assert [m["content"] for m in a.client.requests[0].messages[1:]] == ["now go on", "c1"]
    # AG2 empties the history too; parley keeps every message said
    assert [m["content"] for m in groupchat.messages] == ["start", "now go on", "c1", "a1", "now go on"]
    assert len(result.chat_history) == 5


def test_clear_history_of_one_agent_keeping_its_last_messages():
    a, c, groupchat, _ = clearing_group("clear history a 1 and go")

    assert [m["content"] for m in a.client.requests[0].messages[1:]] == ["start", "and go", "c1"]
    assert [m["content"] for m in c.client.requests[0].messages[1:]] == ["start", "and go"]
    assert [m["content"] for m in groupchat.messages][:2] == ["start", "and go"]


def test_without_enable_clear_history_the_phrase_is_just_text():
    a = ConversableAgent("a", llm_config=ScriptedModel(["a1"]), human_input_mode="NEVER")
    b = quiet("b")
    b.register_reply(
        [Agent, None], lambda recipient, messages, sender, config: (True, {"content": "clear history"})
    )
    groupchat = GroupChat([a, b], messages=[], max_round=3, speaker_selection_method="round_robin")

    a.initiate_chat(GroupChatManager(groupchat, llm_config=False), message="start", silent=True)

    assert [m["content"] for m in a.client.requests[0].messages[1:]] == ["start", "clear history"]


# names ------------------------------------------------------------------------------------------------------


def test_a_reply_named_after_someone_else_is_logged_under_its_speaker():
    a, b = quiet("a"), quiet("b")
    b.register_reply(
        [Agent, None], lambda recipient, messages, sender, config: (True, {"content": "hi", "name": "zzz"})
    )
    groupchat = GroupChat([a, b], messages=[], max_round=2, speaker_selection_method="round_robin")

    a.initiate_chat(GroupChatManager(groupchat, llm_config=False), message="start", silent=True)

    assert names(groupchat) == ["a", "b"]


# run_chat, the manager's reply function ------------------------------------------------------------------


def test_run_chat_runs_the_group_chat_from_the_last_message_and_returns_true_none():
    a, b, c = quiet("a"), quiet("b"), quiet("c")
    groupchat = GroupChat([a, b, c], messages=[], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False, silent=True)

    replied = manager.run_chat(
        messages=[{"role": "user", "content": "direct start", "name": "a"}], sender=a, config=groupchat
    )

    assert replied == (True, None)
    assert [(m["name"], m["content"]) for m in groupchat.messages] == [
        ("a", "direct start"),
        ("b", "b here"),
        ("c", "c here"),
    ]
    assert manager.last_speaker is c
    with pytest.raises(ValueError, match="own GroupChat"):
        manager.run_chat(messages=[{"content": "x"}], sender=a, config=GroupChat([a, b], messages=[]))
    with pytest.raises(ValueError, match="needs the agent that said the last message"):
        manager.run_chat(messages=[{"content": "x"}])


async def test_a_run_chat_is_its_async_twin():
    a, b = quiet("a"), quiet("b")
    groupchat = GroupChat([a, b], messages=[], max_round=2, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False, silent=True)

    assert await manager.a_run_chat([{"content": "go", "name": "a"}], a, groupchat) == (True, None)
    assert [m["content"] for m in groupchat.messages] == ["go", "b here"]


def test_a_selection_function_returning_something_else_than_an_agent_a_name_or_none_is_a_value_error():
    a, b = quiet("a"), quiet("b")
    groupchat = GroupChat(
        [a, b], messages=[], max_round=3, speaker_selection_method=lambda last, groupchat: 42
    )
    manager = GroupChatManager(groupchat, llm_config=False)

    with pytest.raises(ValueError, match=r"returned 42 \(int\); it must return an agent of the group chat"):
        a.initiate_chat(manager, "go", silent=True)


def test_the_managers_chat_messages_are_what_it_exchanged_with_each_agent():
    a, b = quiet("a"), quiet("b")
    user = quiet("user")
    groupchat = GroupChat([a, b], messages=[], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False)

    user.initiate_chat(manager, "hello group", silent=True)

    exchanged = {
        agent.name: [(m["role"], m["name"], m["content"]) for m in messages]
        for agent, messages in manager.chat_messages.items()
    }
    assert exchanged == {
        "user": [("user", "user", "hello group")],
        "a": [("assistant", "user", "hello group"), ("user", "a", "a here"), ("assistant", "b", "b here")],
        "b": [("assistant", "user", "hello group"), ("assistant", "a", "a here"), ("user", "b", "b here")],
    }
    assert list(exchanged) == ["user", "a", "b"]


def test_the_managers_last_message_with_each_agent_is_the_last_of_what_they_exchanged():
    a, b, user = quiet("a"), quiet("b"), quiet("user")
    groupchat = GroupChat([user, a, b], messages=[], max_round=3, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False)

    user.initiate_chat(manager, "hello group", silent=True)

    last = {agent.name: manager.last_message(agent) for agent in (user, a, b)}
    assert last == {
        "user": {"content": "b here", "role": "assistant", "name": "b"},
        "a": {"content": "b here", "role": "assistant", "name": "b"},
        "b": {"content": "b here", "role": "user", "name": "b"},
    }
    assert a.last_message(manager) == {"content": "b here", "role": "user", "name": "b"}
    with pytest.raises(ValueError, match="more than one conversation"):
        manager.last_message()
    with pytest.raises(KeyError, match="no conversation with outsider"):
        manager.last_message(quiet("outsider"))


# async reply functions in synchronous chats ------------------------------------------------------------


async def async_reply(recipient: Any, messages: Any = None, sender: Any = None, config: Any = None) -> Any:
    return True, f"{recipient.name} async"


def test_a_member_with_an_async_reply_function_cannot_speak_in_a_sync_group_chat():
    """As in AG2: the function cannot run there, and skipping it would make the member reply ''."""
    a, b = quiet("a"), quiet("b")
    b.register_reply([Agent, None], async_reply, position=0)
    manager = GroupChatManager(GroupChat([a, b], messages=[], speaker_selection_method="round_robin"))

    with pytest.raises(
        RuntimeError, match=r"b has async reply functions \['async_reply'\]: run the chat with"
    ):
        a.initiate_chat(manager, "group", silent=True)


async def test_the_async_twin_runs_it_and_the_sync_chat_can_be_told_to_skip_it():
    a, b = quiet("a"), quiet("b")
    b.register_reply([Agent, None], async_reply, position=0)
    groupchat = GroupChat([a, b], messages=[], speaker_selection_method="round_robin", max_round=2)
    await a.a_initiate_chat(GroupChatManager(groupchat), "group", silent=True)
    assert [m["content"] for m in groupchat.messages] == ["group", "b async"]

    c, d = quiet("c"), quiet("d")
    d.register_reply([Agent, None], async_reply, position=0, ignore_async_in_sync_chat=True)
    groupchat = GroupChat([c, d], messages=[], speaker_selection_method="round_robin", max_round=2)
    c.initiate_chat(GroupChatManager(groupchat), "group", silent=True)
    assert [m["content"] for m in groupchat.messages] == ["group", "d here"]


def test_an_async_reply_function_registered_after_a_sync_chat_is_refused_in_the_next():
    """The check each sync chat makes is kept with the agent's reply functions, and forgotten when
    they change, by any of the list's methods."""
    a, b = quiet("a"), quiet("b")
    assert a.initiate_chat(b, "first", max_turns=1, silent=True).chat_history[-1]["content"] == "b here"

    b.register_reply([Agent, None], async_reply, position=0)
    with pytest.raises(RuntimeError, match=r"b has async reply functions \['async_reply'\]"):
        a.initiate_chat(b, "second", max_turns=1, silent=True)

    b._reply_func_list.pop(0)
    assert a.initiate_chat(b, "third", max_turns=1, silent=True).chat_history[-1]["content"] == "b here"
    b._reply_func_list.insert(0, dict(b._reply_func_list[0], reply_func=async_reply, is_async=True))
    with pytest.raises(RuntimeError, match=r"b has async reply functions \['async_reply'\]"):
        a.initiate_chat(b, "fourth", max_turns=1, silent=True)


def test_a_swarm_agent_with_an_async_reply_function_cannot_run_in_a_sync_swarm():
    from parley import AFTER_WORK, SwarmAgent, initiate_swarm_chat

    agent = SwarmAgent("solo", llm_config=False, human_input_mode="NEVER")
    agent.register_reply([Agent, None], async_reply, position=0)
    agent.register_hand_off(AFTER_WORK("TERMINATE"))

    with pytest.raises(RuntimeError, match=r"solo has async reply functions \['async_reply'\]"):
        initiate_swarm_chat(agent, "go", [agent], silent=True)


def test_a_selection_function_may_repeat_a_speaker_though_allow_repeat_speaker_is_false():
    """As in AG2, allow_repeat_speaker limits parley's own choices, not a function's."""
    a, b, c = quiet("a"), quiet("b"), quiet("c")
    groupchat = GroupChat(
        [a, b, c],
        messages=[],
        speaker_selection_method=lambda last, group: b,
        max_round=4,
        allow_repeat_speaker=False,
    )

    a.initiate_chat(GroupChatManager(groupchat), "start", silent=True)

    assert names(groupchat) == ["a", "b", "b", "b"]


def test_a_selection_function_must_keep_to_a_graph_the_group_was_given():
    a, b = quiet("a"), quiet("b")
    groupchat = GroupChat(
        [a, b],
        messages=[],
        speaker_selection_method=lambda last, group: b,
        max_round=4,
        allowed_or_disallowed_speaker_transitions={a: [b], b: [a]},
        speaker_transitions_type="allowed",
    )

    with pytest.raises(ValueError, match="the speaker transitions do not allow b -> b"):
        a.initiate_chat(GroupChatManager(groupchat), "start", silent=True)


def test_append_names_the_message_after_its_speaker_as_ag2_does():
    a, b = quiet("a"), quiet("b")
    groupchat = GroupChat([a, b], messages=[])

    groupchat.append({"content": "hello", "role": "user", "name": "zzz"}, b)
    groupchat.append({"content": "42", "role": "function", "name": "lookup"}, b)
    groupchat.append("plain", a)

    assert [(m["name"], m["content"]) for m in groupchat.messages] == [
        ("b", "hello"),
        ("lookup", "42"),
        ("a", "plain"),
    ]
