"""Two-agent chats: messages, summaries, cost, send/receive, console output, state and bad input."""

from __future__ import annotations

import io
import json
import warnings
from typing import Any

import pytest

from conftest import contents, human
from parley import ConversableAgent, FunctionModel, ModelRequest, ScriptedModel, StopKind, tool_call
from parley.events import ConsolePrinter
from parley.models import ModelResponse, ScriptExhaustedError, Usage


def scripted(name: str, replies: list[Any], **kwargs: Any) -> ConversableAgent:
    kwargs.setdefault("human_input_mode", "NEVER")
    return ConversableAgent(name, llm_config=ScriptedModel(replies), **kwargs)


# messages -------------------------------------------------------------------------------------------


def test_chat_history_is_the_initiators_view_named_by_speaker(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), scripted("agent_b", ["hi there"])

    result = agent_a.initiate_chat(agent_b, "hello", max_turns=1, silent=True)

    assert result.chat_history == [
        {"content": "hello", "role": "assistant", "name": "agent_a"},
        {"content": "hi there", "role": "user", "name": "agent_b"},
    ]
    assert agent_b.chat_messages[agent_a] == [
        {"content": "hello", "role": "user", "name": "agent_a"},
        {"content": "hi there", "role": "assistant", "name": "agent_b"},
    ]
    assert agent_a.last_message(agent_b)["content"] == "hi there"


def test_the_model_sees_the_system_message_verbatim_then_the_conversation(quiet_agent):
    model = ScriptedModel(["one", "two"])
    agent_b = ConversableAgent(
        "agent_b", system_message="Be brief.", llm_config=model, human_input_mode="NEVER"
    )
    agent_a = quiet_agent("agent_a")

    agent_a.initiate_chat(agent_b, "hello", max_turns=2, silent=True)

    assert model.requests[1].messages == [
        {"content": "Be brief.", "role": "system"},
        {"content": "hello", "role": "user", "name": "agent_a"},
        {"content": "one", "role": "assistant", "name": "agent_b"},
        {"content": "agent_a says hi", "role": "user", "name": "agent_a"},
    ]


def test_message_may_be_a_dict_or_a_callable(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    as_dict = agent_a.initiate_chat(
        agent_b, {"content": "from a dict", "role": "user"}, max_turns=1, silent=True
    )
    as_callable = agent_a.initiate_chat(
        agent_b,
        lambda sender, recipient, context: f"{sender.name} to {recipient.name}, {context['topic']}",
        max_turns=1,
        silent=True,
        topic="weather",
    )

    assert as_dict.chat_history[0]["content"] == "from a dict"
    assert as_callable.chat_history[0]["content"] == "agent_a to agent_b, weather"


def test_carryover_is_appended_to_the_initial_message(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    result = agent_a.initiate_chat(
        agent_b, "Solve it.", max_turns=1, silent=True, carryover=["x = 1", "y = 2"]
    )

    assert result.chat_history[0]["content"] == "Solve it.\nContext: \nx = 1\ny = 2"


def test_a_misspelt_parameter_is_warned_of_and_other_extra_keywords_are_left_to_the_message(quiet_agent):
    """As in AG2, extra keywords go to a message callable as its context; with a text message a keyword
    that looks like a parameter (max_turn, max_round) would silently change nothing, so it is warned of."""
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    with pytest.warns(UserWarning, match=r"got max_round=, .* did you mean max_turns=\?"):
        result = agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True, max_round=3)
    assert len(result.chat_history) == 2

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True, carryover="c", verbose=True, topic="x")
        called = agent_a.initiate_chat(
            agent_b,
            lambda sender, recipient, context: f"about {context['max_round']}",
            max_turns=1,
            silent=True,
            max_round=3,
        )
    assert called.chat_history[0]["content"] == "about 3"


def test_no_message_asks_the_human_for_the_first_one(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    the_human = human(agent_a, "typed by a human")

    result = agent_a.initiate_chat(agent_b, max_turns=1, silent=True)

    assert the_human.prompts == [">"]
    assert result.chat_history[0]["content"] == "typed by a human"
    assert result.human_input == ["typed by a human"]


def test_clear_history_false_continues_the_conversation_and_old_results_stay_intact(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    first = agent_a.initiate_chat(agent_b, "one", max_turns=1, silent=True)
    second = agent_a.initiate_chat(agent_b, "two", max_turns=1, silent=True, clear_history=False)
    third = agent_a.initiate_chat(agent_b, "three", max_turns=1, silent=True)

    assert contents(first) == ["one", "agent_b says hi"]
    assert contents(second) == ["one", "agent_b says hi", "two", "agent_b says hi"]
    assert contents(third) == ["three", "agent_b says hi"]


# summaries ------------------------------------------------------------------------------------------


def test_last_msg_summary_drops_terminate(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), scripted("agent_b", ["All done. TERMINATE"])

    result = agent_a.initiate_chat(agent_b, "go", max_turns=1, silent=True)

    assert result.summary == "All done. "


def test_reflection_with_llm_asks_the_recipients_model_with_the_summary_prompt(quiet_agent):
    model = ScriptedModel(["The answer is 4.", "They agreed the answer is 4."])
    agent_b = ConversableAgent(
        "agent_b", system_message="Math helper.", llm_config=model, human_input_mode="NEVER"
    )
    agent_a = quiet_agent("agent_a")

    result = agent_a.initiate_chat(
        agent_b,
        "2+2?",
        max_turns=1,
        silent=True,
        summary_method="reflection_with_llm",
        summary_args={"summary_prompt": "Summarize in one line."},
    )

    assert result.summary == "They agreed the answer is 4."
    assert model.requests[-1].messages == [
        {"content": "2+2?", "role": "user", "name": "agent_a"},
        {"content": "The answer is 4.", "role": "assistant", "name": "agent_b"},
        {"role": "system", "content": "Summarize in one line."},
    ]


def test_reflection_with_llm_uses_the_senders_model_when_the_recipient_has_none(quiet_agent):
    model = ScriptedModel(["summary from a"])
    agent_a = ConversableAgent("agent_a", llm_config=model, human_input_mode="NEVER")
    agent_b = quiet_agent("agent_b")

    result = agent_b.initiate_chat(
        agent_a, "hi", max_turns=0, silent=True, summary_method="reflection_with_llm"
    )

    assert result.summary == "summary from a"
    assert model.requests[0].messages[-1]["role"] == "system"


def test_reflection_with_llm_without_any_model_is_a_clear_error_before_the_chat(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    with pytest.raises(ValueError, match="needs a model, but neither agent_b nor agent_a has one"):
        agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True, summary_method="reflection_with_llm")

    assert agent_a.chat_messages == {}, "nothing was said"


def test_a_reflection_whose_model_fails_gives_an_empty_summary_and_keeps_the_chat(quiet_agent):
    model = ScriptedModel(["b0", RuntimeError("model down")])
    agent_b = ConversableAgent("agent_b", llm_config=model, human_input_mode="NEVER")
    agent_a = quiet_agent("agent_a")

    with pytest.warns(UserWarning, match="could not summarize the chat .*model down.*the summary is empty"):
        result = agent_a.initiate_chat(
            agent_b, "hi", max_turns=1, silent=True, summary_method="reflection_with_llm"
        )

    assert result.summary == ""
    assert contents(result) == ["hi", "b0"]
    assert result.stop_reason.kind is StopKind.MAX_TURNS


def test_the_reflection_counts_on_the_agent_whose_model_made_it(quiet_agent):
    model = ScriptedModel(["b0", "summary"], usage=Usage(10, 5), cost=0.5)
    agent_b = ConversableAgent("agent_b", llm_config=model, human_input_mode="NEVER")
    agent_a = quiet_agent("agent_a")

    result = agent_a.initiate_chat(
        agent_b, "hi", max_turns=1, silent=True, summary_method="reflection_with_llm"
    )

    assert result.summary == "summary"
    assert agent_b.get_total_usage()["total_cost"] == 1.0
    assert agent_a.get_total_usage() is None, "agent_a has no model, as in AG2"


def test_callable_summary_gets_sender_recipient_and_args(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    given: list[dict[str, Any]] = []

    def summary(sender, recipient, summary_args):
        given.append(summary_args)
        return f"{sender.name}/{recipient.name}/{summary_args['tag']}/{len(sender.chat_messages[recipient])}"

    result = agent_a.initiate_chat(
        agent_b, "hi", max_turns=2, silent=True, summary_method=summary, summary_args={"tag": "t"}
    )

    assert result.summary == "agent_a/agent_b/t/4"
    assert given == [{"tag": "t", "cache": None}], "AG2 adds the chat's cache to summary_args"


# cost -----------------------------------------------------------------------------------------------


def test_cost_is_summed_per_chat_in_ag2_shape(quiet_agent):
    model = ScriptedModel(["a", "b", "c"], model="gpt-4o", usage=Usage(10, 5), cost=0.25)
    agent_b = ConversableAgent("agent_b", llm_config=model, human_input_mode="NEVER")
    agent_a = quiet_agent("agent_a")

    first = agent_a.initiate_chat(agent_b, "hi", max_turns=2, silent=True)
    second = agent_a.initiate_chat(agent_b, "hi", max_turns=1, silent=True)

    assert first.cost == {
        "usage_including_cached_inference": {
            "total_cost": 0.5,
            "gpt-4o": {"cost": 0.5, "prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        },
        "usage_excluding_cached_inference": {
            "total_cost": 0.5,
            "gpt-4o": {"cost": 0.5, "prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
        },
    }
    assert second.cost["usage_including_cached_inference"]["total_cost"] == 0.25


def test_a_chat_without_models_costs_nothing(quiet_agent):
    result = quiet_agent("agent_a").initiate_chat(quiet_agent("agent_b"), "hi", max_turns=1, silent=True)

    assert result.cost == {
        "usage_including_cached_inference": {"total_cost": 0},
        "usage_excluding_cached_inference": {"total_cost": 0},
    }


# test doubles ---------------------------------------------------------------------------------------


def test_scripted_model_raises_when_its_script_runs_out_and_the_history_survives(quiet_agent):
    agent_b = scripted("agent_b", ["only reply"])
    agent_a = quiet_agent("agent_a")

    with pytest.raises(ScriptExhaustedError, match="no reply left") as raised:
        agent_a.initiate_chat(agent_b, "hi", max_turns=3, silent=True)

    partial = raised.value.chat_result
    assert contents(partial) == ["hi", "only reply", "agent_a says hi"]
    assert partial.stop_reason.kind is StopKind.ERROR


def test_function_model_computes_replies_from_the_request(quiet_agent):
    def echo(request: ModelRequest) -> str:
        return f"{request.system_message} | heard: {request.messages[-1]['content']}"

    agent_b = ConversableAgent(
        "agent_b", system_message="Echo.", llm_config=FunctionModel(echo), human_input_mode="NEVER"
    )

    result = quiet_agent("agent_a").initiate_chat(agent_b, "ping", max_turns=1, silent=True)

    assert result.chat_history[1]["content"] == "Echo. | heard: ping"


async def test_function_model_may_be_async(quiet_agent):
    async def reply(request: ModelRequest) -> ModelResponse:
        return ModelResponse({"role": "assistant", "content": "async model"}, Usage(1, 1), model="f")

    agent_b = ConversableAgent("agent_b", llm_config=FunctionModel(reply), human_input_mode="NEVER")

    result = await quiet_agent("agent_a").a_initiate_chat(agent_b, "ping", max_turns=1, silent=True)

    assert result.chat_history[1]["content"] == "async model"
    assert result.cost["usage_including_cached_inference"]["f"]["total_tokens"] == 2


def test_scripted_tool_calls_reach_the_history_in_openai_format(quiet_agent):
    call = tool_call("lookup", {"q": "x"}, id="call_1")
    agent_b = scripted("agent_b", [[call]])

    result = quiet_agent("agent_a").initiate_chat(agent_b, "find x", max_turns=1, silent=True)

    assert result.chat_history[1] == {
        "content": None,
        "role": "assistant",
        "name": "agent_b",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
        ],
    }


# send / receive / generate_reply --------------------------------------------------------------------


def test_send_with_request_reply_gets_one_reply(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    agent_a.send("hello", agent_b, request_reply=True, silent=True)

    assert [m["content"] for m in agent_a.chat_messages[agent_b]] == ["hello", "agent_b says hi"]


def test_send_without_request_reply_only_delivers(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    agent_a.send("hello", agent_b, request_reply=False, silent=True)

    assert agent_b.last_message(agent_a) == {"content": "hello", "role": "user", "name": "agent_a"}
    assert agent_a.last_message(agent_b)["role"] == "assistant"


def test_receive_then_generate_reply(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), scripted("agent_b", ["reply"])

    agent_b.receive("question", agent_a, request_reply=False, silent=True)

    assert agent_b.generate_reply(sender=agent_a) == "reply"


def test_generate_reply_needs_messages_or_a_sender(quiet_agent):
    with pytest.raises(ValueError, match="messages or a sender"):
        quiet_agent("agent").generate_reply()


def test_generate_reply_names_messages_that_are_not_a_list_of_message_dicts(quiet_agent):
    import asyncio

    agent = quiet_agent("agent")
    with pytest.raises(TypeError, match="messages must be a list of message dicts, not 'hello'"):
        agent.generate_reply(messages="hello")
    with pytest.raises(TypeError, match="messages\\[1\\] must be a message dict, not 'hi'"):
        agent.generate_reply(messages=({"role": "user", "content": "a"}, "hi"))
    with pytest.raises(TypeError, match="messages must be a list of message dicts, not 5"):
        asyncio.run(agent.a_generate_reply(messages=5))


# console --------------------------------------------------------------------------------------------


def test_console_shows_each_message_as_ag2_does(quiet_agent, monkeypatch):
    buffer = io.StringIO()
    monkeypatch.setattr("parley.engine.ConsolePrinter", lambda **kw: ConsolePrinter(file=buffer, **kw))
    agent_a = quiet_agent("agent_a")
    agent_b = scripted("agent_b", [[tool_call("lookup", {"q": "x"}, id="call_9")]])

    agent_a.initiate_chat(agent_b, "find x", max_turns=1)

    printed = buffer.getvalue()
    assert "agent_a (to agent_b):\n\nfind x\n\n" + "-" * 80 in printed
    assert "***** Suggested tool call (call_9): lookup *****" in printed
    assert '"q": "x"' in printed
    assert "CHAT STOPPED: Maximum turns (1) reached" in printed


def test_silent_prints_nothing(quiet_agent, capsys):
    quiet_agent("agent_a").initiate_chat(quiet_agent("agent_b"), "hi", max_turns=1, silent=True)

    assert capsys.readouterr().out == ""


# state ----------------------------------------------------------------------------------------------


def test_chat_state_is_plain_json_data(quiet_agent):
    from parley import Chat
    from parley.engine import Alternating

    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    chat = Chat(
        {agent_a: agent_b, agent_b: agent_a},
        Alternating(agent_a, agent_b),
        silent=True,
        context_variables={"customer": "Ada"},
    )
    chat.append({"content": "hi"}, agent_a)
    agent_b.update_max_consecutive_auto_reply(1)
    chat.run()

    state = json.loads(json.dumps(chat.state.to_dict()))
    assert [m["name"] for m in state["messages"]] == ["agent_a", "agent_b", "agent_a"]
    assert state["context_variables"] == {"customer": "Ada"}
    assert state["last_speaker"] == "agent_a"
    assert state["auto_replies"] == {"agent_a": 1, "agent_b": 0}
    assert state["stop_reason"]["kind"] == "max_consecutive_auto_reply"


# bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"human_input_mode": "SOMETIMES"}, ValueError, "human_input_mode"),
        ({"is_termination_msg": "TERMINATE"}, TypeError, "is_termination_msg"),
        ({"max_consecutive_auto_reply": -1}, ValueError, "max_consecutive_auto_reply"),
        ({"llm_config": 42}, TypeError, "llm_config"),
        ({"llm_config": {"temperature": 0}}, ValueError, "config_list"),
        ({"llm_config": {"config_list": []}}, ValueError, "config_list"),
    ],
)
def test_bad_agent_arguments_fail_at_construction(kwargs, error, match):
    with pytest.raises(error, match=match):
        ConversableAgent("agent", **kwargs)


def test_an_agent_needs_a_name():
    with pytest.raises(ValueError, match="name"):
        ConversableAgent("")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"message": "hi", "max_turns": -1}, ValueError, "max_turns"),
        ({"message": "hi", "max_turns": 1.5}, ValueError, "max_turns"),
        ({"message": 42}, TypeError, "message must be a string"),
        ({"message": {"role": "user"}}, ValueError, "content"),
        ({"message": "hi", "summary_method": "best"}, ValueError, "summary_method"),
    ],
)
def test_bad_chat_arguments_fail_before_anything_is_sent(quiet_agent, kwargs, error, match):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")

    with pytest.raises(error, match=match):
        agent_a.initiate_chat(agent_b, silent=True, **kwargs)

    assert agent_a.chat_messages[agent_b] == []


def test_two_agents_with_the_same_name_cannot_chat(quiet_agent):
    with pytest.raises(ValueError, match="share the name 'twin'"):
        quiet_agent("twin").initiate_chat(quiet_agent("twin"), "hi", silent=True)


def test_a_reply_that_is_not_a_message_is_a_clear_error(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), quiet_agent("agent_b")
    agent_b.register_reply([ConversableAgent], lambda r, messages, sender, config: (True, 42))

    with pytest.raises(TypeError, match="the reply of agent_b must be a string or a message dict"):
        agent_a.initiate_chat(agent_b, "hi", silent=True)


def test_reply_functions_changed_after_a_chat_answer_the_next_chat(quiet_agent):
    agent_a, agent_b = quiet_agent("agent_a"), scripted("agent_b", ["from the model"] * 5)
    assert agent_a.initiate_chat(agent_b, "1", max_turns=1, silent=True).summary == "from the model"

    agent_b.register_reply([ConversableAgent, None], lambda *args, **kwargs: (True, "registered"))
    assert agent_a.initiate_chat(agent_b, "2", max_turns=1, silent=True).summary == "registered"

    agent_b._reply_func_list.pop(0)
    assert agent_a.initiate_chat(agent_b, "3", max_turns=1, silent=True).summary == "from the model"

    agent_b._reply_func_list.insert(
        0, {**agent_b._reply_func_list[-1], "reply_func": lambda *a, **k: (True, "set")}
    )
    assert agent_a.initiate_chat(agent_b, "4", max_turns=1, silent=True).summary == "set"

    agent_b._reply_func_list = [entry for entry in agent_b._reply_func_list[1:]]
    agent_b._reply_func_list[0] = {
        **agent_b._reply_func_list[0],
        "reply_func": lambda *a, **k: (True, "plain list"),
    }
    assert agent_a.initiate_chat(agent_b, "5", max_turns=1, silent=True).summary == "plain list"


def test_unsupported_trigger_fails_at_registration(quiet_agent):
    with pytest.raises(ValueError, match="unsupported reply trigger"):
        quiet_agent("agent").register_reply(42, lambda *a, **k: (False, None))


def test_a_human_answer_that_is_not_text_is_a_clear_error(quiet_agent):
    agent_a = quiet_agent("agent_a", human_input_mode="ALWAYS")
    agent_a.get_human_input = lambda prompt, **kwargs: None

    with pytest.raises(TypeError, match="get_human_input of agent_a must return a string"):
        agent_a.initiate_chat(quiet_agent("agent_b"), "hi", silent=True)


def test_initiate_chats_from_an_agent_and_its_usage(quiet_agent):
    lead = quiet_agent("lead")
    writer = ConversableAgent(
        "writer",
        llm_config=ScriptedModel(["draft", "final"], usage=Usage(3, 2), cost=0.5, model="m"),
        human_input_mode="NEVER",
    )

    results = lead.initiate_chats(
        [
            {"recipient": writer, "message": "Draft it.", "max_turns": 1, "silent": True},
            {"recipient": writer, "message": "Finish it.", "max_turns": 1, "silent": True},
        ]
    )

    assert [r.summary for r in results] == ["draft", "final"]
    assert results[1].chat_history[0]["content"] == "Finish it.\nContext: \ndraft"
    assert writer.get_total_usage() == {
        "total_cost": 1.0,
        "m": {"cost": 1.0, "prompt_tokens": 6, "completion_tokens": 4, "total_tokens": 10},
    }
    assert writer.get_actual_usage()["total_cost"] == 1.0


def test_a_message_sent_with_request_reply_false_gets_no_reply_after_a_chat():
    a = ConversableAgent("a", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
    b = ConversableAgent("b", llm_config=False, human_input_mode="NEVER", default_auto_reply="TERMINATE")
    a.initiate_chat(b, message="hi", silent=True)  # both reply on receive afterwards

    a.send("a note", b, request_reply=False, silent=True)

    assert [m["content"] for m in b.chat_messages[a]][-2:] == ["TERMINATE", "a note"]
