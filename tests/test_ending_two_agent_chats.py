"""Every way a two-agent chat ends (sections 1-4 and 7 of "Ending a chat"), with exact speaker order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from conftest import contents, human, speakers
from parley import Agent, ConversableAgent, ScriptedModel, StopKind


def done_detector(message: dict[str, Any]) -> bool:
    return "DONE!" in (message.get("content", "") or "").upper()


# 1. maximum turns -----------------------------------------------------------------------------------


def test_max_turns_counts_both_agents_and_the_initial_message(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    result = agent_a.initiate_chat(recipient=agent_b, max_turns=2, message="first message", silent=True)

    assert speakers(result) == ["agent_a", "agent_b", "agent_a", "agent_b"]
    assert result.chat_history[0]["content"] == "first message"
    assert result.stop_reason.kind is StopKind.MAX_TURNS
    assert result.stop_reason.agent == "agent_b"
    assert "2" in result.stop_reason.detail


def test_max_turns_zero_sends_nothing(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    result = agent_a.initiate_chat(agent_b, "never sent", max_turns=0, silent=True)

    assert result.chat_history == []
    assert result.stop_reason.kind is StopKind.MAX_TURNS


def test_without_max_turns_a_chat_runs_until_another_rule_ends_it(quiet_agent):
    agent_a = quiet_agent("agent_a", max_consecutive_auto_reply=3)
    agent_b = quiet_agent("agent_b")

    result = agent_a.initiate_chat(agent_b, "go", silent=True)

    assert speakers(result) == ["agent_a", "agent_b"] * 4
    assert result.stop_reason.kind is StopKind.MAX_CONSECUTIVE_AUTO_REPLY


# 2. terminating message -----------------------------------------------------------------------------


def test_termination_message_ends_the_chat_before_the_receiver_replies(quiet_agent):
    agent_a = ConversableAgent(
        "agent_a",
        system_message="You're a helpful AI assistant, end your responses with 'DONE!'",
        llm_config=ScriptedModel(["All sorted. DONE!"]),
        human_input_mode="NEVER",
    )
    agent_b = quiet_agent("agent_b", is_termination_msg=done_detector)

    result = agent_b.initiate_chat(agent_a, "please sort this", silent=True)

    assert speakers(result) == ["agent_b", "agent_a"]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG
    assert result.stop_reason.agent == "agent_b"
    assert result.summary == "All sorted. DONE!"


def test_termination_check_is_on_the_receiver_not_the_sender(quiet_agent):
    # The sender's own is_termination_msg does not look at what it sends.
    agent_a = quiet_agent(
        "agent_a", reply="DONE!", is_termination_msg=done_detector, max_consecutive_auto_reply=2
    )
    agent_b = quiet_agent("agent_b", reply="ok")

    result = agent_a.initiate_chat(agent_b, "DONE!", silent=True)

    assert speakers(result) == ["agent_a", "agent_b", "agent_a", "agent_b", "agent_a", "agent_b"]
    assert result.stop_reason.kind is StopKind.MAX_CONSECUTIVE_AUTO_REPLY


def test_termination_message_in_terminate_mode_asks_the_human_who_can_end_it(quiet_agent):
    agent_a = quiet_agent("agent_a", reply="DONE!")
    agent_b = quiet_agent("agent_b", is_termination_msg=done_detector, human_input_mode="TERMINATE")
    the_human = human(agent_b, "")

    result = agent_b.initiate_chat(agent_a, "start", silent=True)

    assert speakers(result) == ["agent_b", "agent_a"]
    assert the_human.prompts == [
        "Please give feedback to agent_a. Press enter or type 'exit' to stop the conversation: "
    ]
    assert result.human_input == [""]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG


def test_termination_message_in_terminate_mode_goes_on_when_the_human_answers(quiet_agent):
    agent_a = ConversableAgent(
        "agent_a", llm_config=ScriptedModel(["DONE!", "really DONE!"]), human_input_mode="NEVER"
    )
    agent_b = quiet_agent("agent_b", is_termination_msg=done_detector, human_input_mode="TERMINATE")
    human(agent_b, "one more thing", "exit")

    result = agent_b.initiate_chat(agent_a, "start", silent=True)

    assert speakers(result) == ["agent_b", "agent_a", "agent_b", "agent_a"]
    assert contents(result) == ["start", "DONE!", "one more thing", "really DONE!"]
    assert result.human_input == ["one more thing", "exit"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT


def test_termination_message_in_always_mode_ends_on_empty_input(quiet_agent):
    agent_a = quiet_agent("agent_a", reply="DONE!")
    agent_b = quiet_agent("agent_b", is_termination_msg=done_detector, human_input_mode="ALWAYS")
    the_human = human(agent_b, "")

    result = agent_b.initiate_chat(agent_a, "start", silent=True)

    assert speakers(result) == ["agent_b", "agent_a"]
    assert the_human.prompts == [
        "Replying as agent_b. Provide feedback to agent_a. Press enter to skip and use auto-reply, "
        "or type 'exit' to end the conversation: "
    ]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG


def test_default_termination_message_is_exactly_terminate(quiet_agent):
    agent_a = ConversableAgent(
        "agent_a", llm_config=ScriptedModel(["TERMINATE now", "TERMINATE"]), human_input_mode="NEVER"
    )
    agent_b = quiet_agent("agent_b")

    result = agent_b.initiate_chat(agent_a, "start", silent=True)

    assert contents(result) == ["start", "TERMINATE now", "agent_b says hi", "TERMINATE"]
    assert result.stop_reason.kind is StopKind.TERMINATION_MSG
    assert result.summary == ""


# 3. number of automatic replies ---------------------------------------------------------------------


def test_max_consecutive_auto_reply_is_checked_when_it_is_next_the_agents_turn(quiet_agent):
    agent_a = quiet_agent("agent_a", max_consecutive_auto_reply=2)
    agent_b = quiet_agent("agent_b")

    result = agent_a.initiate_chat(agent_b, "first", silent=True)

    # agent_a > agent_b > agent_a (1st auto reply) > agent_b > agent_a (2nd) > agent_b > agent_a ends
    assert speakers(result) == ["agent_a", "agent_b", "agent_a", "agent_b", "agent_a", "agent_b"]
    assert result.stop_reason.kind is StopKind.MAX_CONSECUTIVE_AUTO_REPLY
    assert result.stop_reason.agent == "agent_a"


def test_max_consecutive_auto_reply_in_terminate_mode_asks_the_human(quiet_agent):
    agent_a = quiet_agent("agent_a", max_consecutive_auto_reply=1, human_input_mode="TERMINATE")
    agent_b = quiet_agent("agent_b")
    the_human = human(agent_a, "exit")

    result = agent_a.initiate_chat(agent_b, "first", silent=True)

    assert speakers(result) == ["agent_a", "agent_b", "agent_a", "agent_b"]
    assert the_human.prompts == [
        "Please give feedback to agent_b. Press enter to skip and use auto-reply, or type 'exit' to stop "
        "the conversation: "
    ]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT


def test_empty_input_at_the_auto_reply_limit_keeps_auto_replying(quiet_agent):
    agent_a = quiet_agent("agent_a", max_consecutive_auto_reply=1, human_input_mode="TERMINATE")
    agent_b = quiet_agent("agent_b")
    human(agent_a, "", "exit")

    result = agent_a.initiate_chat(agent_b, "first", silent=True)

    assert speakers(result) == ["agent_a", "agent_b"] * 3
    assert result.human_input == ["", "exit"]


def test_a_human_reply_resets_the_auto_reply_counter(quiet_agent):
    agent_a = quiet_agent("agent_a", max_consecutive_auto_reply=1, human_input_mode="TERMINATE")
    agent_b = quiet_agent("agent_b")
    human(agent_a, "try again", "exit")

    result = agent_a.initiate_chat(agent_b, "first", silent=True)

    assert contents(result) == [
        "first",
        "agent_b says hi",
        "agent_a says hi",
        "agent_b says hi",
        "try again",
        "agent_b says hi",
        "agent_a says hi",
        "agent_b says hi",
    ]


def test_max_consecutive_auto_reply_zero_never_auto_replies(quiet_agent):
    agent_a = quiet_agent("agent_a")
    agent_b = quiet_agent("agent_b", max_consecutive_auto_reply=0)

    result = agent_a.initiate_chat(agent_b, "hello", silent=True)

    assert speakers(result) == ["agent_a"]
    assert result.stop_reason.kind is StopKind.MAX_CONSECUTIVE_AUTO_REPLY
    assert result.stop_reason.agent == "agent_b"


# 4. a human replies exit ----------------------------------------------------------------------------


def test_human_typing_exit_ends_the_chat(quiet_agent):
    agent_a = quiet_agent("agent_a", human_input_mode="ALWAYS")
    agent_b = quiet_agent("agent_b")
    the_human = human(agent_a, "tell me more", "", "exit")

    result = agent_a.initiate_chat(agent_b, "hello", silent=True)

    assert contents(result) == [
        "hello",
        "agent_b says hi",
        "tell me more",
        "agent_b says hi",
        "agent_a says hi",
        "agent_b says hi",
    ]
    assert len(the_human.prompts) == 3
    assert result.human_input == ["tell me more", "", "exit"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT
    assert result.stop_reason.agent == "agent_a"


def test_user_proxy_asks_the_human_by_default():
    from parley import AssistantAgent, UserProxyAgent

    user = UserProxyAgent("user")
    assistant = AssistantAgent("assistant", llm_config=ScriptedModel(["Paris.", "You're welcome."]))
    the_human = human(user, "thanks", "exit")

    result = user.initiate_chat(assistant, "Capital of France?", silent=True)

    assert contents(result) == ["Capital of France?", "Paris.", "thanks", "You're welcome."]
    assert the_human.prompts[0].startswith("Replying as user. Provide feedback to assistant.")
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT


# 7. reply functions ---------------------------------------------------------------------------------


def end_chat(recipient, messages=None, sender=None, config=None):
    return True, None


def test_final_none_reply_function_ends_the_chat_without_sending(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_a.register_reply(trigger=[Agent, None], reply_func=end_chat, position=0)

    result = agent_a.initiate_chat(agent_b, "first", silent=True)

    # agent_a > agent_b > agent_a ends with its first custom reply function
    assert speakers(result) == ["agent_a", "agent_b"]
    assert result.stop_reason.kind is StopKind.REPLY_FUNC_FINAL_NONE
    assert result.stop_reason.agent == "agent_a"
    assert "end_chat" in result.stop_reason.detail


def test_custom_reply_function_runs_before_the_termination_check(quiet_agent):
    calls = []

    def answer(recipient, messages=None, sender=None, config=None):
        calls.append(messages[-1]["content"])
        return True, f"answer {len(calls)}"

    agent_a = quiet_agent("agent_a", max_consecutive_auto_reply=0)
    agent_a.register_reply([Agent, None], answer)
    agent_b = quiet_agent("agent_b", max_consecutive_auto_reply=2)

    result = agent_a.initiate_chat(agent_b, "first", silent=True)

    assert contents(result) == ["first", "agent_b says hi", "answer 1", "agent_b says hi", "answer 2"]
    assert result.stop_reason.agent == "agent_b"


def test_non_final_reply_function_passes_to_the_next_one(quiet_agent):
    seen = []

    def observe(recipient, messages=None, sender=None, config=None):
        seen.append((recipient.name, sender.name, config))
        return False, "ignored"

    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_b.register_reply(ConversableAgent, observe, config={"k": 1})

    result = agent_a.initiate_chat(agent_b, "first", max_turns=1, silent=True)

    assert contents(result) == ["first", "agent_b says hi"]
    assert seen == [("agent_b", "agent_a", {"k": 1})]


@pytest.mark.parametrize(
    ("trigger", "answers_agent_a"),
    [
        (ConversableAgent, True),
        (Agent, True),
        ("agent_a", True),
        ("someone_else", False),
        (lambda sender: sender.name.endswith("_a"), True),
        (lambda sender: False, False),
        (["nobody", "agent_a"], True),
        (None, False),
        ([None], False),
    ],
)
def test_triggers_select_the_senders_a_reply_function_answers(quiet_agent, trigger, answers_agent_a):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_b.register_reply(trigger, lambda recipient, messages, sender, config: (True, "custom"))

    result = agent_a.initiate_chat(agent_b, "first", max_turns=1, silent=True)

    assert (result.chat_history[1]["content"] == "custom") is answers_agent_a


def test_trigger_agent_instance_matches_only_that_agent(quiet_agent):
    agent_a, agent_b, agent_c = quiet_agent("agent_a"), quiet_agent("agent_b"), quiet_agent("agent_c")
    agent_b.register_reply(agent_c, lambda recipient, messages, sender, config: (True, "for c"))

    from_a = agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True)
    from_c = agent_c.initiate_chat(agent_b, "hi", max_turns=1, silent=True)

    assert from_a.chat_history[1]["content"] == "agent_b says hi"
    assert from_c.chat_history[1]["content"] == "for c"


def test_reply_function_position_orders_the_chain(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_b.register_reply([Agent, None], lambda r, messages, sender, config: (True, "first registered"))
    agent_b.register_reply(
        [Agent, None],
        lambda r, messages, sender, config: (True, "at the end"),
        position=len(agent_b._reply_func_list),
    )

    result = agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True)

    assert result.chat_history[1]["content"] == "first registered"


def test_generate_reply_with_no_sender_uses_none_triggers(quiet_agent):
    agent = quiet_agent("agent")
    agent.register_reply(None, lambda r, messages, sender, config: (True, "no sender"))

    assert agent.generate_reply(messages=[{"role": "user", "content": "hi"}]) == "no sender"


async def test_async_reply_function_works_in_a_initiate_chat(quiet_agent):
    async def slow_end(recipient, messages=None, sender=None, config=None):
        await asyncio.sleep(0)
        return (True, None) if len(messages) >= 3 else (True, "async reply")

    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_a.register_reply([Agent, None], slow_end)

    result = await agent_a.a_initiate_chat(agent_b, "first", silent=True)

    assert contents(result) == ["first", "agent_b says hi", "async reply", "agent_b says hi"]
    assert result.stop_reason.kind is StopKind.REPLY_FUNC_FINAL_NONE


def test_async_reply_function_in_a_sync_chat_is_an_error_unless_ignored(quiet_agent):
    async def reply(recipient, messages=None, sender=None, config=None):
        return True, "async"

    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_b.register_reply([Agent, None], reply)
    with pytest.raises(RuntimeError, match="a_initiate_chat"):
        agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True)

    agent_c = quiet_agent("agent_c")
    agent_c.register_reply([Agent, None], reply, ignore_async_in_sync_chat=True)
    result = agent_a.initiate_chat(agent_c, "hi", max_turns=1, silent=True)
    assert contents(result) == ["hi", "agent_c says hi"]


async def test_async_chat_ends_in_every_way_the_sync_chat_does(quiet_agent):
    agent_a = quiet_agent("agent_a", human_input_mode="ALWAYS")
    agent_b = quiet_agent("agent_b", max_consecutive_auto_reply=1)

    async def answer(prompt: str, **kwargs: Any) -> str:
        return ""

    agent_a.get_human_input = answer

    result = await agent_a.a_initiate_chat(agent_b, "hello", silent=True)

    assert speakers(result) == ["agent_a", "agent_b", "agent_a"]
    assert result.human_input == [""]
    assert result.stop_reason.kind is StopKind.MAX_CONSECUTIVE_AUTO_REPLY
    assert result.stop_reason.agent == "agent_b"


async def test_async_max_turns(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    result = await agent_a.a_initiate_chat(agent_b, "first message", max_turns=2, silent=True)

    assert speakers(result) == ["agent_a", "agent_b", "agent_a", "agent_b"]
    assert result.stop_reason.kind is StopKind.MAX_TURNS


@pytest.mark.parametrize("run_async", [False, True])
def test_exit_typed_for_the_first_message_ends_the_chat_before_anything_is_said(quiet_agent, run_async):
    agent_a = quiet_agent("agent_a", human_input_mode="ALWAYS")
    model = ScriptedModel(["never asked"])
    agent_b = ConversableAgent("agent_b", llm_config=model, human_input_mode="NEVER")
    the_human = human(agent_a, "exit")

    if run_async:
        result = asyncio.run(agent_a.a_initiate_chat(agent_b, silent=True))
    else:
        result = agent_a.initiate_chat(agent_b, silent=True)

    assert the_human.prompts == [">"]
    assert result.chat_history == []
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT
    assert result.stop_reason.agent == "agent_a"
    assert model.remaining == 1


@pytest.mark.parametrize("run_async", [False, True])
def test_a_scripted_human_running_out_of_answers_is_an_error_that_says_so(quiet_agent, run_async):
    answers = iter(["hello"])
    agent_a = quiet_agent("agent_a", human_input_mode="ALWAYS")
    agent_a.get_human_input = lambda prompt, **kwargs: next(answers)
    agent_b = quiet_agent("agent_b")

    with pytest.raises(RuntimeError, match="raised StopIteration \\(an iterator that ran out") as raised:
        if run_async:
            asyncio.run(agent_a.a_initiate_chat(agent_b, "hi", silent=True))
        else:
            agent_a.initiate_chat(agent_b, "hi", silent=True)

    assert contents(raised.value.chat_result)[:3] == ["hi", "agent_b says hi", "hello"]
    assert raised.value.chat_result.stop_reason.kind is StopKind.ERROR
