"""Stop conditions and budgets: a chat stops at exactly the call that would have crossed a budget."""

from __future__ import annotations

import time
from typing import Any

import pytest

from parley import (
    ON_CONDITION,
    ConversableAgent,
    FunctionModel,
    GroupChat,
    GroupChatManager,
    ModelRequest,
    ScriptedModel,
    StopKind,
    SwarmAgent,
    initiate_swarm_chat,
    register_function,
    tool_call,
)
from parley.limits import MaxCost, MaxModelCalls, MaxTime, MaxTokens, MaxToolCalls, Mentions, When
from parley.models import ModelResponse, Usage


def talkers(model: Any, **user_options: Any) -> tuple[ConversableAgent, ConversableAgent]:
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
    user = ConversableAgent(
        "user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more", **user_options
    )
    return user, assistant


def replies(result: Any) -> list[str]:
    return [m["content"] for m in result.chat_history if m["name"] == "assistant"]


@pytest.mark.parametrize(("budget", "calls"), [(400, 2), (449, 2), (450, 3), (599, 3), (600, 4)])
def test_a_token_budget_stops_before_the_call_that_would_cross_it(budget: int, calls: int):
    model = ScriptedModel(
        [f"reply {n}" for n in range(1, 11)], usage=Usage(100, 50), params={"max_tokens": 50}
    )
    user, assistant = talkers(model)

    result = user.initiate_chat(assistant, "go", stop_when=MaxTokens(budget), silent=True)

    assert replies(result) == [f"reply {n}" for n in range(1, calls + 1)]
    assert result.stop_reason.kind is StopKind.CONDITION
    assert result.stop_reason.agent == "assistant"
    assert str(result.stop_reason) == (
        f"the token budget of {budget} would be exceeded: {150 * calls} tokens used, and assistant's "
        "next model call could use 100 prompt + 50 completion tokens"
    )
    assert result.cost["usage_including_cached_inference"]["scripted"]["total_tokens"] == 150 * calls


def _byte_counted_chat(stop_when: Any) -> tuple[list[tuple[int, int | None]], str]:
    """A chat of plain replies and tool calls on a model that cannot count tokens: the ``(messages,
    max_tokens)`` of each call it was sent, and why it stopped."""
    sent: list[tuple[int, int | None]] = []

    def reply(request: ModelRequest) -> ModelResponse:
        sent.append((len(request.messages), request.params.get("max_tokens")))
        if len(sent) % 2:
            message: dict[str, Any] = {"role": "assistant", "content": "ünïcödé " * 30}
        else:
            call = tool_call("lookup", {"city": "Zürich"})
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return ModelResponse(message, Usage(len(request.messages) * 40, 60), cost=0.001)

    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: " + "sunny, " * 40

    user, assistant = talkers(FunctionModel(reply))
    register_function(lookup, caller=assistant, executor=user, description="Look a city up.")
    result = user.initiate_chat(assistant, "weather, please", stop_when=stop_when, silent=True)
    return sent, str(result.stop_reason)


@pytest.mark.parametrize("budget", [900, 2_500, 6_000, 20_000])
def test_budgets_decide_alike_whichever_other_conditions_are_set(budget: int):
    """A chat whose budgets are all of the common kinds is decided by a shorter path than one with a
    custom condition; a condition that never holds changes neither the calls sent nor the stop."""
    budgets = MaxTokens(budget) | MaxCost(1.0) | MaxTime(3600) | MaxModelCalls(40)
    never = When(lambda chat: False)

    fast = _byte_counted_chat(budgets)
    general = _byte_counted_chat(budgets | never)

    assert fast == general
    assert len(fast[0]) >= 3
    assert any(max_tokens is not None and max_tokens < 4096 for _, max_tokens in fast[0])


@pytest.mark.parametrize("budget", [700, 1_500, 4_000])
def test_without_a_token_count_no_call_is_sent_that_could_cross_the_budget(budget: int):
    """A model that cannot count tokens gets a bound of its prompt in bytes: no tokenizer makes more
    tokens than that. Here each byte of the prompt's text is a token; every call is sent with a
    ``max_tokens`` that keeps even the worst case within the budget, through tool calls and non-ASCII."""
    spent = [0]
    calls: list[tuple[int, int, int]] = []  # (spent before, prompt tokens, max_tokens) of each call

    def reply(request: ModelRequest) -> ModelResponse:
        prompt = sum(len((message.get("content") or "").encode()) for message in request.messages)
        for message in request.messages:
            for call in message.get("tool_calls") or ():
                prompt += len(call["function"]["name"]) + len(call["function"]["arguments"].encode())
        room = request.params["max_tokens"]
        calls.append((spent[0], prompt, room))
        completion = min(room, 40)
        spent[0] += prompt + completion
        if len(calls) % 2:
            message: dict[str, Any] = {"role": "assistant", "content": "ünïcödé " * 4}
        else:
            call = tool_call("lookup", {"city": "Zürich"})
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return ModelResponse(message, Usage(prompt, completion))

    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: " + "sunny, " * 10

    user, assistant = talkers(FunctionModel(reply))
    register_function(lookup, caller=assistant, executor=user, description="Look a city up.")

    result = user.initiate_chat(assistant, "weather, please", stop_when=MaxTokens(budget), silent=True)

    assert result.stop_reason.kind is StopKind.CONDITION
    assert len(calls) >= 3
    assert any(message.get("tool_calls") for message in result.chat_history)
    assert [call for call in calls if call[0] + call[1] + call[2] > budget] == []


def test_without_max_tokens_a_call_is_sent_with_what_the_budget_leaves():
    model = ScriptedModel(["one", "two", "three", "four"], usage=Usage(100, 50))
    user, assistant = talkers(model)

    result = user.initiate_chat(assistant, "go", stop_when=MaxTokens(420), silent=True)

    assert [request.params.get("max_tokens") for request in model.requests] == [320, 170, 20]
    assert replies(result) == ["one", "two", "three"]
    assert result.cost["usage_including_cached_inference"]["scripted"]["total_tokens"] == 420


@pytest.mark.parametrize(("budget", "calls"), [(0.25, 2), (0.3, 3), (0.31, 3)])
def test_a_cost_budget_stops_before_the_call_that_would_cross_it(budget: float, calls: int):
    model = ScriptedModel([f"reply {n}" for n in range(1, 11)], cost=0.1)
    user, assistant = talkers(model)

    result = user.initiate_chat(assistant, "go", stop_when=MaxCost(budget), silent=True)

    assert len(replies(result)) == calls
    assert "cost budget" in str(result.stop_reason)
    assert result.cost["usage_including_cached_inference"]["total_cost"] <= budget + 1e-9


def test_a_model_without_a_price_is_stopped_once_it_has_spent_the_budget():
    def reply(request: ModelRequest) -> Any:
        from parley.models import ModelResponse

        return ModelResponse({"role": "assistant", "content": "ok"}, cost=0.4, model="m")

    user, assistant = talkers(FunctionModel(reply))

    result = user.initiate_chat(assistant, "go", stop_when=MaxCost(1.0), silent=True)

    assert len(replies(result)) == 3, "unpriced: the third call crossed the budget, and nothing after it"
    assert "cost budget of $1 is spent" in str(result.stop_reason)


def test_model_and_tool_call_limits():
    model = ScriptedModel([tool_call("ping", id=f"p{n}") for n in range(5)] + ["done"])
    user, assistant = talkers(model)
    register_function(lambda: "pong", caller=assistant, executor=user, name="ping", description="Ping.")

    by_model = user.initiate_chat(assistant, "go", stop_when=MaxModelCalls(2), silent=True)
    assert len(replies(by_model)) == 2
    assert str(by_model.stop_reason) == "the limit of 2 model calls is reached"

    model.__init__([tool_call("ping", id=f"p{n}") for n in range(5)] + ["done"])
    by_tools = user.initiate_chat(assistant, "go", stop_when=MaxToolCalls(3), silent=True)
    assert sum(1 for m in by_tools.chat_history if m.get("role") == "tool") == 3
    assert "the limit of 3 tool calls would be exceeded: 3 run, and user is about to run 1 more" in str(
        by_tools.stop_reason
    )


def test_a_time_budget_stops_before_the_next_model_call_and_before_tool_calls():
    model = ScriptedModel([tool_call("nap", id=f"n{n}") for n in range(5)] + ["done"])
    user, assistant = talkers(model)
    naps: list[int] = []

    def nap() -> str:
        naps.append(1)
        time.sleep(0.15)
        return "rested"

    register_function(nap, caller=assistant, executor=user, name="nap", description="Nap.")

    by_model = user.initiate_chat(assistant, "go", stop_when=MaxTime(0.1), silent=True)
    assert len(naps) == 1 and len(model.requests) == 1, "the call after the slow tool is not made"
    assert str(by_model.stop_reason).startswith("the time limit of 0.1 s is reached (")
    assert by_model.stop_reason.agent == "assistant"

    def slow_model(request: ModelRequest) -> Any:
        time.sleep(0.15)
        return ModelResponse({"role": "assistant", "content": None, "tool_calls": [tool_call("nap")]})

    user, assistant = talkers(FunctionModel(slow_model))
    register_function(nap, caller=assistant, executor=user, name="nap", description="Nap.")
    naps.clear()
    by_tool = user.initiate_chat(assistant, "go", stop_when=MaxTime(0.1), silent=True)
    assert naps == [], "the tool call that comes after the time ran out is not run"
    assert str(by_tool.stop_reason).startswith("the time limit of 0.1 s is reached (")
    assert by_tool.stop_reason.agent == "user"


def test_conditions_combine_and_the_first_that_holds_stops_the_chat():
    model = ScriptedModel(["thinking", "still thinking", "DONE", "more"], usage=Usage(10, 10))
    user, assistant = talkers(model)

    either = user.initiate_chat(
        assistant, "go", stop_when=Mentions("DONE") | MaxTokens(10_000) | MaxTime(3600), silent=True
    )
    assert replies(either) == ["thinking", "still thinking", "DONE"]
    assert str(either.stop_reason) == "the message from assistant mentions 'DONE'"

    model.__init__(["thinking", "DONE", "DONE again", "more"], usage=Usage(10, 10))
    both = user.initiate_chat(
        assistant, "go", stop_when=Mentions("DONE") & When(lambda chat: chat.state.rounds >= 5), silent=True
    )
    assert replies(both) == ["thinking", "DONE", "DONE again"]

    # a call or tool-call limit holds once it is reached, so it combines with & as the others do
    model.__init__(["thinking", "DONE", "more", "DONE again", "more"], usage=Usage(10, 10))
    reached = user.initiate_chat(assistant, "go", stop_when=MaxModelCalls(3) & Mentions("DONE"), silent=True)
    assert replies(reached) == ["thinking", "DONE", "more", "DONE again"]
    assert str(reached.stop_reason) == (
        "the limit of 3 model calls is reached; and the message from assistant mentions 'DONE'"
    )


@pytest.mark.parametrize(
    "stop_when",
    [
        MaxModelCalls(2) & MaxToolCalls(1),
        MaxToolCalls(1) & MaxModelCalls(2),
        (MaxModelCalls(2) | MaxTime(3600)) & MaxToolCalls(1),
        MaxModelCalls(2) & (MaxToolCalls(1) | Mentions("never said")),
    ],
)
def test_an_and_of_budgets_stops_once_every_part_has_reached_its_limit(stop_when: Any):
    model = ScriptedModel([tool_call("ping", id=f"p{n}") for n in range(6)] + ["done"])
    user, assistant = talkers(model)
    register_function(lambda: "pong", caller=assistant, executor=user, name="ping", description="Ping.")

    result = user.initiate_chat(assistant, "go", max_turns=8, stop_when=stop_when, silent=True)

    assert len(model.requests) == 2
    assert sum(1 for m in result.chat_history if m.get("role") == "tool") == 1, (
        "the second tool call would cross the tool limit once the model-call limit is reached"
    )
    assert result.stop_reason.kind is StopKind.CONDITION
    assert "the limit of 2 model calls is reached" in str(result.stop_reason)
    assert "the limit of 1 tool calls " in str(result.stop_reason)


def test_an_and_of_budgets_refuses_a_call_once_one_part_is_reached_and_the_other_refuses_it():
    model = ScriptedModel(["one", "two", "three", "four"], usage=Usage(100, 0))
    user, assistant = talkers(model)

    result = user.initiate_chat(
        assistant, "go", max_turns=4, stop_when=MaxModelCalls(1) & MaxTokens(250), silent=True
    )

    assert replies(result) == ["one", "two"], "the third call could cross 250 tokens, with 1 call reached"
    assert str(result.stop_reason).startswith(
        "the limit of 1 model calls is reached; and the token budget of 250 would be exceeded: "
        "200 tokens used"
    )


def test_run_without_a_recipient_passes_stop_when_to_its_chat():
    model = ScriptedModel(["a", "b", "c", "d TERMINATE"])
    assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")

    response = assistant.run(message="hi", max_turns=4, stop_when=MaxModelCalls(1))
    for _ in response.events:
        pass

    assert len(model.requests) == 1
    assert str(response.chat_result.stop_reason) == "the limit of 1 model calls is reached"


def test_a_swarm_run_by_a_tool_counts_against_the_budget_of_its_chat():
    inner = SwarmAgent("inner", llm_config=ScriptedModel(["inner 1", "inner 2"], usage=Usage(100, 0)))

    def delegate() -> str:
        result, _, _ = initiate_swarm_chat(inner, "work", [inner], max_rounds=2, silent=True)
        return str(result.summary)

    outer_model = ScriptedModel([tool_call("delegate", id="d1"), "outer done"], usage=Usage(100, 0))
    outer = SwarmAgent("outer", llm_config=outer_model, functions=[delegate])
    outer.register_hand_off(ON_CONDITION(inner, "Never."))

    result, _, _ = initiate_swarm_chat(outer, "go", [outer, inner], stop_when=MaxTokens(250), silent=True)

    assert result.chat_history[2]["content"] == "inner 1"
    assert result.stop_reason.kind is StopKind.CONDITION, "the inner call used the outer chat's budget"
    assert "200 tokens used" in str(result.stop_reason)


def test_bad_stop_conditions_are_named():
    user, assistant = talkers(ScriptedModel(["x"]))
    with pytest.raises(TypeError, match="stop conditions combine with other conditions"):
        user.initiate_chat(assistant, "go", stop_when="DONE", silent=True)
    with pytest.raises(ValueError, match="MaxTokens needs a positive int"):
        MaxTokens(0)
    with pytest.raises(ValueError, match="MaxCost needs a positive number of dollars"):
        MaxCost(-1)


def test_a_reflection_summary_is_a_call_of_the_chat_and_keeps_within_its_budget():
    def run(budget: int, **options: Any) -> tuple[Any, ScriptedModel]:
        model = ScriptedModel(["a", "b", "c", "the summary"], usage=Usage(100, 50))
        user, assistant = talkers(model)
        result = user.initiate_chat(
            assistant,
            "go",
            stop_when=MaxTokens(budget),
            summary_method="reflection_with_llm",
            silent=True,
            **options,
        )
        return result, model

    with pytest.warns(UserWarning, match="the call would go past the chat's budget: the token budget of 450"):
        spent, spent_model = run(450)
    room, room_model = run(700, max_turns=3)

    assert spent.summary == "" and len(spent_model.requests) == 3, "no summary call past the budget"
    assert spent.cost["usage_including_cached_inference"]["scripted"]["total_tokens"] == 450
    assert room.summary == "the summary"
    assert room_model.requests[-1].params["max_tokens"] == 700 - 450 - 100


def test_the_prompt_bound_is_counted_incrementally_for_speaker_selection_too(monkeypatch: pytest.MonkeyPatch):
    """A token budget's bound on each prompt costs what the chat appended since the agent's last call,
    also for the manager's speaker selection: measuring the whole conversation at every call would make
    a long group chat's bookkeeping grow with the square of its length."""
    from parley import FunctionModel, GroupChat, GroupChatManager
    from parley import budgets as budgets_module

    measured = [0]
    bound = budgets_module._message_bound

    def counting(message: Any) -> int:
        measured[0] += 1
        return bound(message)

    monkeypatch.setattr(budgets_module, "_message_bound", counting)
    turn = [0]

    def select(request: ModelRequest) -> ModelResponse:
        turn[0] += 1
        return ModelResponse({"role": "assistant", "content": "b" if turn[0] % 2 else "a"}, Usage(10, 1))

    def reply(request: ModelRequest) -> ModelResponse:
        return ModelResponse({"role": "assistant", "content": "ok"}, Usage(10, 5))

    a, b = (
        ConversableAgent(name, llm_config=FunctionModel(reply), human_input_mode="NEVER") for name in "ab"
    )
    manager = GroupChatManager(
        GroupChat([a, b], messages=[], max_round=80, speaker_selection_method="auto"),
        llm_config=FunctionModel(select),
    )

    result = a.initiate_chat(manager, "go", stop_when=MaxTokens(10**9), silent=True)

    assert len(result.chat_history) == 80
    assert measured[0] < 4 * len(result.chat_history), f"{measured[0]} messages measured"


@pytest.mark.parametrize(
    "stop_when",
    [MaxTokens(10**6) | Mentions("DONE"), MaxTokens(10**6) | When(lambda chat: len(chat.messages) > 1)],
)
def test_a_nested_chat_answers_to_its_chats_budgets_not_to_its_other_conditions(stop_when: Any):
    drafts = iter(range(1, 10))
    writer = ConversableAgent(
        "writer",
        llm_config=FunctionModel(lambda request: f"draft {next(drafts)}, not DONE yet"),
        human_input_mode="NEVER",
    )
    critic = ConversableAgent(
        "critic", llm_config=False, human_input_mode="NEVER", default_auto_reply="improve it"
    )
    boss, lead = (
        ConversableAgent(name, llm_config=False, human_input_mode="NEVER") for name in ("boss", "lead")
    )
    lead.register_nested_chats(
        [
            {
                "recipient": writer,
                "sender": critic,
                "max_turns": 3,
                "summary_method": "last_msg",
                "silent": True,
            }
        ],
        trigger=boss,
    )

    result = boss.initiate_chat(lead, "write the report", max_turns=1, stop_when=stop_when, silent=True)

    assert result.chat_history[-1]["content"] == "draft 3, not DONE yet", "the nested chat ran its 3 turns"


def test_a_nested_chat_stopped_by_its_chats_budget_stops_that_chat_too():
    writer = ConversableAgent(
        "writer", llm_config=ScriptedModel([f"draft {n}" for n in range(20)]), human_input_mode="NEVER"
    )
    critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
    boss = ConversableAgent(
        "boss", llm_config=False, human_input_mode="NEVER", default_auto_reply="next section please"
    )
    lead = ConversableAgent("lead", llm_config=False, human_input_mode="NEVER")
    lead.register_nested_chats(
        [{"recipient": writer, "sender": critic, "max_turns": 1, "summary_method": "last_msg"}],
        trigger=boss,
    )

    result = boss.initiate_chat(lead, "write section 1", stop_when=MaxModelCalls(2), silent=True)

    assert len(writer.llm_config.requests) == 2
    assert [m["content"] for m in result.chat_history[:4]] == [
        "write section 1",
        "draft 0",
        "next section please",
        "draft 1",
    ]
    assert len(result.chat_history) <= 6, "the chat stopped once its budget refused the nested chat"
    assert result.stop_reason.kind is StopKind.CONDITION
    assert str(result.stop_reason) == "the limit of 2 model calls is reached"


@pytest.mark.parametrize("budget", [700, 1_500, 3_000])
def test_speaker_selection_retries_keep_within_a_token_budget(budget: int):
    """A retry sends the selector its answer and a template the log has not: the budget counts them."""

    def byte_model(answer: str) -> FunctionModel:
        def reply(request: ModelRequest) -> ModelResponse:
            prompt = sum(len((message.get("content") or "").encode()) for message in request.messages)
            completion = min(len(answer), request.params.get("max_tokens", len(answer)))
            return ModelResponse({"role": "assistant", "content": answer}, Usage(prompt, completion))

        return FunctionModel(reply)

    alice, bob = (
        ConversableAgent(name, llm_config=byte_model("ok"), human_input_mode="NEVER")
        for name in ("alice", "bob")
    )
    groupchat = GroupChat(
        [alice, bob],
        messages=[],
        max_round=6,
        speaker_selection_method="auto",
        max_retries_for_selecting_speaker=4,
    )
    manager = GroupChatManager(groupchat, llm_config=byte_model("Hmm, hard to say. " + "thinking " * 40))

    result = alice.initiate_chat(manager, "go", stop_when=MaxTokens(budget), silent=True)

    spent = result.cost["usage_including_cached_inference"]
    assert sum(usage["total_tokens"] for name, usage in spent.items() if name != "total_cost") <= budget
    assert result.stop_reason.kind is StopKind.CONDITION
