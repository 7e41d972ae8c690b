"""Durable chats: every change is a record in the store, and re-running the same call after a crash at
any record continues the chat exactly where it stopped."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import human
from durable_helpers import cut
from parley import (
    AFTER_WORK,
    ON_CONDITION,
    AfterWorkOption,
    ConversableAgent,
    FunctionModel,
    GroupChat,
    GroupChatManager,
    ModelRequest,
    ScriptedModel,
    StopKind,
    SwarmAgent,
    SwarmResult,
    initiate_swarm_chat,
    register_function,
    tool_call,
)
from parley.journal import Journal, UnstorableValueError
from parley.limits import MaxCost, MaxModelCalls, MaxTokens, MaxToolCalls
from parley.models import ModelResponse, Usage
from parley.state import ChatState
from parley.store import ChatInUseError, MemoryStore


class Effects:
    """What the outside world saw: model calls, tool runs, and refunds made (keyed by tool_call_id)."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.tool_runs = 0
        self.charges: Counter[str] = Counter()


def build_swarm(effects: Effects) -> tuple[list[SwarmAgent], SwarmAgent]:
    """A deterministic support swarm: triage hands off, billing runs two tools at once, then answers."""

    def triage_model(request: ModelRequest) -> Any:
        effects.model_calls += 1
        if request.messages[-1].get("role") == "tool":
            return "Handing you over."
        return [tool_call("transfer_to_billing", id="call-t1")]

    def billing_model(request: ModelRequest) -> Any:
        effects.model_calls += 1
        done = sum(
            1 for message in request.messages if message.get("tool_calls") and message["name"] == "billing"
        )
        if done < 2:
            return [
                tool_call("look_up", {"customer": "ada"}, id=f"call-l{done}"),
                tool_call("refund", {"amount": 29}, id=f"call-r{done}"),
            ]
        return "Refunded twice. Anything else?"

    def look_up(customer: str, context_variables: dict[str, Any]) -> str:
        effects.tool_runs += 1
        context_variables.setdefault("seen", []).append(customer)
        return f"{customer} pays monthly"

    def refund(amount: int, tool_call_id: str, context_variables: dict[str, Any]) -> SwarmResult:
        effects.tool_runs += 1
        if tool_call_id not in effects.charges:  # the refund is idempotent, keyed by the call's id
            effects.charges[tool_call_id] += 1
        total = context_variables.get("refunded", 0) + amount
        return SwarmResult(values=f"refunded {amount}", context_variables={"refunded": total})

    triage = SwarmAgent("triage", llm_config=FunctionModel(triage_model), human_input_mode="NEVER")
    billing = SwarmAgent(
        "billing",
        llm_config=FunctionModel(billing_model),
        human_input_mode="NEVER",
        functions=[look_up, refund],
    )
    triage.register_hand_off([ON_CONDITION(billing, "Billing questions."), AFTER_WORK(triage)])
    billing.register_hand_off(AFTER_WORK("TERMINATE"))
    return [triage, billing], triage


ASKED = "I was charged twice"


def run_swarm_asking(store: MemoryStore, messages: Any) -> Any:
    agents, triage = build_swarm(Effects())
    return initiate_swarm_chat(triage, messages, agents, store=store, chat_id="swarm-1", silent=True)


def run_swarm(store: MemoryStore, effects: Effects, chat_id: str = "swarm-1") -> Any:
    agents, triage = build_swarm(effects)
    return initiate_swarm_chat(
        triage,
        "I was charged twice",
        agents,
        context_variables={"customer": "ada"},
        store=store,
        chat_id=chat_id,
        silent=True,
    )


def test_a_durable_swarm_records_every_change_and_a_finished_one_calls_nothing_again():
    store, effects = MemoryStore(), Effects()
    result, context, last = run_swarm(store, effects)

    assert result.chat_id == "swarm-1"
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET
    assert context == {"customer": "ada", "seen": ["ada", "ada"], "refunded": 58}
    kinds = [record.kind for record in store.load("swarm-1")]
    assert kinds[0] == "chat_started"
    assert kinds[-2:] == ["stopped", "result"]
    assert "tool_result" in kinds, "each of several tool calls is recorded as soon as it finishes"

    again = Effects()
    replayed, replayed_context, replayed_last = run_swarm(store, again)

    assert (again.model_calls, again.tool_runs) == (0, 0)
    assert replayed.chat_history == result.chat_history
    assert replayed.summary == result.summary
    assert replayed.cost == result.cost
    assert replayed.stop_reason == result.stop_reason
    assert replayed_context == context
    assert replayed_last.name == last.name == "billing"


class Crash(BaseException):
    """The process dying: nothing after it happens."""


class CrashingStore(MemoryStore):
    """A store whose process dies when it is about to write its ``crash_at``-th record of any chat."""

    def __init__(self, crash_at: int) -> None:
        super().__init__()
        self.crash_at = crash_at

    def open(self, chat_id: str) -> Any:
        log = super().open(chat_id)
        append = log.append

        def append_or_die(records: Any) -> None:
            if len(self.load(chat_id)) + len(records) > self.crash_at:
                raise Crash
            append(records)

        log.append = append_or_die  # type: ignore[method-assign]
        return log


def test_a_crash_at_any_record_resumes_to_the_same_chat_and_repeats_at_most_one_step():
    full = Effects()
    store = MemoryStore()
    result, context, _ = run_swarm(store, full)
    records = store.load("swarm-1")

    for crash_at in range(1, len(records)):
        crashing, effects = CrashingStore(crash_at), Effects()
        with pytest.raises(Crash):
            run_swarm(crashing, effects)
        assert crashing.load("swarm-1") == records[:crash_at]

        resumed_store = cut(records, crash_at, "swarm-1")
        resumed, resumed_context, _ = run_swarm(resumed_store, effects)

        assert resumed.chat_history == result.chat_history, f"crash at record {crash_at}"
        assert resumed_context == context, f"crash at record {crash_at}"
        assert resumed_store.load("swarm-1") == records, f"crash at record {crash_at}"
        work, full_work = effects.model_calls + effects.tool_runs, full.model_calls + full.tool_runs
        assert work <= full_work + 1, f"crash at record {crash_at}: {work} calls against {full_work}"
        assert effects.charges == Counter({"call-r0": 1, "call-r1": 1}), f"crash at record {crash_at}"


def test_a_tool_call_started_but_not_recorded_runs_again_with_the_same_tool_call_id():
    store = MemoryStore()
    run_swarm(store, Effects())
    records = store.load("swarm-1")
    first_result = next(i for i, record in enumerate(records) if record.kind == "tool_result")

    effects = Effects()
    run_swarm(cut(records, first_result + 1, "swarm-1"), effects)

    assert effects.tool_runs == 1 + 2, "the unrecorded refund, then the second pair of calls"


def test_a_two_agent_chat_resumes_with_its_human_answers():
    def build(answers: list[str], calls: Counter[str]) -> tuple[ConversableAgent, ConversableAgent]:
        def reply(request: ModelRequest) -> str:
            calls["model"] += 1
            said = sum(1 for message in request.messages if message.get("role") == "user")
            return ["one", "two", "three"][said - 1]

        assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
        user = ConversableAgent("user", llm_config=False, human_input_mode="ALWAYS")
        human(user, *answers)
        return user, assistant

    store, calls = MemoryStore(), Counter[str]()
    user, assistant = build(["more", "more", "exit"], calls)
    result = user.initiate_chat(assistant, "hi", store=store, chat_id="pair", silent=True)
    records = store.load("pair")
    assert result.human_input == ["more", "more", "exit"]
    assert result.stop_reason.kind is StopKind.HUMAN_EXIT
    assert calls["model"] == 3

    answered = [i for i, record in enumerate(records) if record.kind == "human_input"]
    resumed_store, calls = cut(records, answered[1] + 1, "pair"), Counter[str]()
    user, assistant = build(["exit"], calls)
    resumed = user.initiate_chat(assistant, "hi", store=resumed_store, chat_id="pair", silent=True)

    assert resumed.chat_history == result.chat_history
    assert resumed.human_input == ["more", "more", "exit"], "the recorded answer was not asked again"
    assert calls["model"] == 1
    assert resumed_store.load("pair") == records


def test_a_group_chat_resumes_without_asking_the_manager_model_again():
    calls = Counter[str]()

    def choose(request: ModelRequest) -> str:
        calls["selector"] += 1
        said = sum(1 for message in request.messages if message.get("role") == "user")
        return {1: "c", 2: "b"}[said]

    def build() -> tuple[ConversableAgent, GroupChatManager]:
        agents = [
            ConversableAgent(name, llm_config=ScriptedModel([f"{name} speaks"]), human_input_mode="NEVER")
            for name in ("a", "b", "c")
        ]
        groupchat = GroupChat(agents, messages=[], max_round=3, speaker_selection_method="auto")
        return agents[0], GroupChatManager(groupchat, llm_config=FunctionModel(choose))

    store = MemoryStore()
    starter, manager = build()
    result = starter.initiate_chat(manager, "start", store=store, chat_id="group", silent=True)
    assert [m["name"] for m in result.chat_history] == ["a", "c", "b"]
    records = store.load("group")
    turn = next(i for i, record in enumerate(records) if record.kind == "turn")

    calls.clear()
    starter, manager = build()
    resumed = starter.initiate_chat(
        manager, "start", store=cut(records, turn + 1, "group"), chat_id="group", silent=True
    )

    assert resumed.chat_history == result.chat_history
    assert calls["selector"] == 1, "the recorded choice of c was used; only the choice of b was asked"
    assert [m["content"] for m in manager.groupchat.messages] == ["start", "c speaks", "b speaks"]


def test_a_swarm_resumes_without_asking_the_swarm_managers_model_again():
    calls = Counter[str]()

    def choose(request: ModelRequest) -> str:
        calls["selector"] += 1
        return "c"

    def build() -> list[SwarmAgent]:
        agents = [
            SwarmAgent(name, llm_config=ScriptedModel([f"{name} speaks"]), human_input_mode="NEVER")
            for name in ("a", "b", "c")
        ]
        agents[0].register_hand_off(AFTER_WORK(AfterWorkOption.SWARM_MANAGER))
        for agent in agents[1:]:
            agent.register_hand_off(AFTER_WORK(AfterWorkOption.TERMINATE))
        return agents

    def run(store: MemoryStore) -> Any:
        agents = build()
        manager = {"llm_config": FunctionModel(choose)}
        result, _, _ = initiate_swarm_chat(
            agents[0], "start", agents, swarm_manager_args=manager, store=store, chat_id="s", silent=True
        )
        return result

    store = MemoryStore()
    result = run(store)
    assert [m.get("name") for m in result.chat_history[1:]] == ["a", "c"]
    records = store.load("s")
    turns = [i for i, record in enumerate(records) if record.kind == "turn"]
    assert len(turns) == 1, "the manager's choice is recorded"

    calls.clear()
    resumed = run(cut(records, turns[-1] + 1, "s"))

    assert resumed.chat_history == result.chat_history
    assert calls["selector"] == 0, "the recorded choice of c was used"


def test_a_group_chat_started_by_another_member_is_another_call_and_an_error():
    def build() -> tuple[list[ConversableAgent], GroupChatManager]:
        agents = [
            ConversableAgent(name, llm_config=ScriptedModel([f"{name} speaks"] * 3), human_input_mode="NEVER")
            for name in ("a", "b", "c")
        ]
        groupchat = GroupChat(agents, messages=[], max_round=4, speaker_selection_method="round_robin")
        return agents, GroupChatManager(groupchat, llm_config=False)

    store = MemoryStore()
    agents, manager = build()
    first = agents[0].initiate_chat(manager, "plan the trip", store=store, chat_id="g", silent=True)
    records = store.load("g")

    agents, manager = build()
    with pytest.raises(ValueError, match="was started by 'a'; this call starts it from 'b'"):
        agents[1].initiate_chat(manager, "plan the trip", store=store, chat_id="g", silent=True)
    assert store.load("g") == records, "nothing was written"

    agents, manager = build()
    again = agents[0].initiate_chat(manager, "plan the trip", store=store, chat_id="g", silent=True)
    assert again.chat_history == first.chat_history


def test_resuming_needs_the_agents_and_tools_the_chat_recorded():
    store = MemoryStore()
    run_swarm(store, Effects())
    records = store.load("swarm-1")
    calls_made = next(i for i, record in enumerate(records) if record.kind == "tool_result")
    middle = cut(records, calls_made, "swarm-1")

    triage = SwarmAgent("triage", llm_config=ScriptedModel([]), human_input_mode="NEVER")
    other = SwarmAgent("accounts", llm_config=ScriptedModel([]), human_input_mode="NEVER")
    with pytest.raises(ValueError, match="no agent named 'billing'"):
        initiate_swarm_chat(triage, ASKED, [triage, other], store=middle, chat_id="swarm-1", silent=True)

    billing = SwarmAgent("billing", llm_config=ScriptedModel([]), human_input_mode="NEVER")
    triage.register_hand_off(ON_CONDITION(billing, "Billing."))
    with pytest.raises(ValueError, match="calling the tool 'look_up'"):
        initiate_swarm_chat(triage, ASKED, [triage, billing], store=middle, chat_id="swarm-1", silent=True)

    user = ConversableAgent("triage", llm_config=False)
    with pytest.raises(ValueError, match="is a swarm chat; it cannot be continued as a two-agent chat"):
        user.initiate_chat(billing, ASKED, store=middle, chat_id="swarm-1", silent=True)
    with pytest.raises(
        ValueError, match="was started with 'I was charged twice'; this call starts it with 'x'"
    ):
        run_swarm_asking(middle, "x")
    assert middle.load("swarm-1") == records[:calls_made], "nothing stored was changed"


def test_the_same_chat_id_with_another_opening_message_is_another_call_and_an_error():
    """A finished chat's id given again with a new question does not answer it with the old result."""
    store = MemoryStore()
    first, _, _ = run_swarm(store, Effects())
    with pytest.raises(ValueError, match="give a new chat_id for a new chat"):
        run_swarm_asking(store, [{"role": "user", "content": "Where is my invoice?"}])
    again, _, _ = run_swarm(store, Effects())
    assert again.chat_history == first.chat_history  # the same call still returns it

    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["ok"] * 4), human_input_mode="NEVER")
    user.initiate_chat(assistant, "hello", max_turns=1, store=store, chat_id="pair", silent=True)
    with pytest.raises(
        ValueError, match=r"chat 'pair' in memory://.* was started with 'hello'; this call starts"
    ):
        user.initiate_chat(assistant, "goodbye", max_turns=1, store=store, chat_id="pair", silent=True)
    again = user.initiate_chat(assistant, "hello", max_turns=1, store=store, chat_id="pair", silent=True)
    assert [message["content"] for message in again.chat_history] == ["hello", "ok"]

    refund = {"content": "refund order 1"}
    user.initiate_chat(assistant, refund, max_turns=1, store=store, chat_id="dict", silent=True)
    with pytest.raises(
        ValueError, match=r"was started with .*refund order 1.*this call starts it with .*order 2"
    ):
        user.initiate_chat(
            assistant, {"content": "cancel order 2"}, max_turns=1, store=store, chat_id="dict", silent=True
        )
    with pytest.raises(ValueError, match=r"was started with .*refund order 1"):
        user.initiate_chat(assistant, "refund order 1", max_turns=1, store=store, chat_id="dict", silent=True)
    again = user.initiate_chat(assistant, dict(refund), max_turns=1, store=store, chat_id="dict", silent=True)
    assert again.chat_history[0]["content"] == "refund order 1"


def test_an_opening_a_human_typed_or_a_function_made_is_not_another_calls_message(
    monkeypatch: pytest.MonkeyPatch,
):
    """A chat started by asking a human (message=None), re-run with a message, is another call; so is
    one whose opening a function made, re-run with the human or a message."""
    monkeypatch.setattr("builtins.input", lambda prompt="": "hello")
    store = MemoryStore()

    def run(message: Any, chat_id: str) -> Any:
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["ok"]), human_input_mode="NEVER")
        return user.initiate_chat(assistant, message, max_turns=1, store=store, chat_id=chat_id, silent=True)

    assert [m["content"] for m in run(None, "asked").chat_history] == ["hello", "ok"]
    with pytest.raises(
        ValueError,
        match=r"was started with the message a human typed \(message=None\); this call starts it with "
        r"'delete my account'",
    ):
        run("delete my account", "asked")
    assert [m["content"] for m in run(None, "asked").chat_history] == ["hello", "ok"]

    def made(sender: Any, recipient: Any, context: Any) -> str:
        return "made"

    run(made, "made")
    with pytest.raises(
        ValueError, match="was started with a message made by a function; this call starts it with"
    ):
        run(None, "made")
    assert [m["content"] for m in run(made, "made").chat_history] == ["made", "ok"]


class FailingModel:
    """Answers its ``n``-th reply of the chat with ``reply n``, using 100 + 10 tokens at $0.10, except
    that its call ``fail_at`` raises, as a model server that goes away does."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at = fail_at
        self.calls = 0

    def __call__(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == self.fail_at:
            raise ConnectionError("the model server went away")
        said = sum(1 for message in request.messages if message.get("role") == "assistant")
        return ModelResponse({"role": "assistant", "content": f"reply {said + 1}"}, Usage(100, 10), 0.10, "m")


def budgeted_chat(store: MemoryStore, model: FailingModel, stop_when: Any) -> Any:
    assistant = ConversableAgent("assistant", llm_config=FunctionModel(model), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
    return user.initiate_chat(
        assistant, "go", max_turns=20, stop_when=stop_when, store=store, chat_id="budgeted", silent=True
    )


@pytest.mark.parametrize(
    "stop_when", [MaxModelCalls(4), MaxCost(0.35), MaxTokens(500), MaxToolCalls(1) | MaxModelCalls(3)]
)
def test_a_resumed_chat_counts_what_it_spent_before_against_its_budgets(stop_when: Any):
    whole = FailingModel()
    uninterrupted = budgeted_chat(MemoryStore(), whole, stop_when)
    assert whole.calls >= 3
    store = MemoryStore()
    failing, again = FailingModel(fail_at=3), FailingModel()
    with pytest.raises(ConnectionError):
        budgeted_chat(store, failing, stop_when)

    resumed = budgeted_chat(store, again, stop_when)

    assert resumed.chat_history == uninterrupted.chat_history
    assert str(resumed.stop_reason) == str(uninterrupted.stop_reason)
    assert failing.calls + again.calls == whole.calls + 1, "the call that failed is the one made again"


def test_budgets_set_when_a_chat_is_resumed_count_what_it_spent_without_them():
    store = MemoryStore()
    with pytest.raises(ConnectionError):
        budgeted_chat(store, FailingModel(fail_at=4), None)  # three replies, no budget

    resumed = budgeted_chat(store, FailingModel(), MaxModelCalls(5))

    assert sum(1 for message in resumed.chat_history if message["name"] == "assistant") == 5
    assert resumed.stop_reason.kind is StopKind.CONDITION


def test_a_context_value_that_cannot_be_stored_is_named_when_it_is_set():
    def remember(context_variables: dict[str, Any]) -> str:
        context_variables["connection"] = object()
        return "kept"

    store = MemoryStore()
    agent = SwarmAgent(
        "keeper", llm_config=ScriptedModel([tool_call("remember", id="c1"), "done"]), functions=[remember]
    )
    with pytest.raises(UnstorableValueError, match="context variable 'connection'") as caught:
        initiate_swarm_chat(agent, "keep this", [agent], store=store, chat_id="k", silent=True)

    assert [m.get("name") for m in caught.value.chat_result.chat_history] == [None, "keeper"]
    assert [record.kind for record in store.load("k")] == ["chat_started", "message", "message"]


def test_a_record_that_contains_itself_is_refused_and_nothing_is_stored():
    log = MemoryStore().open("k")
    journal = Journal(log, ChatState("k"), 0)
    looped: dict[str, Any] = {"role": "user", "content": "hi"}
    looped["again"] = [looped]

    with pytest.raises(UnstorableValueError, match="chat 'k' cannot store its message record"):
        journal.write("message", {"speaker": "user", "message": looped})

    assert log.records() == []
    journal.write("message", {"speaker": "user", "message": {"role": "user", "content": "hi"}})
    assert [record.seq for record in log.records()] == [0]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({1: "a"}, r"it has the key 1 \(int\), which would come back as a string"),
        ({1: "a", "1": "b"}, r"it has the key 1 \(int\)"),
        ({"ok": [1, {"at": (3, 4)}]}, r"it\['ok'\]\[1\]\['at'\] is a tuple, which would come back as a list"),
        (float("nan"), "Out of range float values are not JSON compliant"),
        ({"rate": float("inf")}, "Out of range float values are not JSON compliant"),
    ],
)
def test_a_context_value_json_would_change_is_refused_not_stored_changed(value: Any, problem: str):
    """A resumed chat would get back another value (string keys for int keys, a list for a tuple, one
    value of two keys that become one) or an export that is not JSON (NaN): refused when set."""

    def remember(context_variables: dict[str, Any]) -> str:
        context_variables["kept"] = value
        return "kept"

    store = MemoryStore()
    agent = SwarmAgent(
        "keeper", llm_config=ScriptedModel([tool_call("remember", id="c1"), "done"]), functions=[remember]
    )
    with pytest.raises(
        UnstorableValueError, match=f"context variable 'kept' of chat 'k' cannot be stored: {problem}"
    ):
        initiate_swarm_chat(agent, "keep this", [agent], store=store, chat_id="k", silent=True)
    assert [record.kind for record in store.load("k")] == ["chat_started", "message", "message"]

    with pytest.raises(UnstorableValueError, match="context variable 'start'"):
        initiate_swarm_chat(
            agent, "keep this", [agent], context_variables={"start": value}, store=store, chat_id="k2"
        )
    assert store.load("k2") == []


def test_json_data_in_the_context_comes_back_as_it_was_after_a_resume():
    value = {"ids": [1, 2.5, None, True, "é"], "nested": {"deep": [{"x": -0.0}]}}
    store = MemoryStore()

    def remember(context_variables: dict[str, Any]) -> str:
        context_variables["kept"] = value
        return "kept"

    def run(replies: list[Any]) -> Any:
        agent = SwarmAgent("keeper", llm_config=ScriptedModel(replies), functions=[remember])
        return initiate_swarm_chat(agent, "keep this", [agent], store=store, chat_id="j", silent=True)

    with pytest.raises(RuntimeError, match="crash"):
        run([tool_call("remember", id="c1"), RuntimeError("crash")])
    _, context, _ = run(["done"])

    assert context["kept"] == value


def test_the_same_chat_cannot_run_twice_at_once():
    store = MemoryStore()
    log = store.open("busy")
    user = ConversableAgent("user", llm_config=False)
    other = ConversableAgent("other", llm_config=False)
    with pytest.raises(ChatInUseError, match="busy"):
        user.initiate_chat(other, "hi", store=store, chat_id="busy", silent=True)
    log.close()
    assert store.load("busy") == []


def test_chats_started_in_a_durable_step_are_kept_with_ids_from_that_step():
    store = MemoryStore()
    calls = Counter[str]()

    def inner_model(request: ModelRequest) -> str:
        calls["inner"] += 1
        return "inner answer"

    def outer_model(request: ModelRequest) -> str:
        calls["outer"] += 1
        return "outer answer"

    writer = ConversableAgent("writer", llm_config=FunctionModel(inner_model), human_input_mode="NEVER")
    critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
    lead = ConversableAgent("lead", llm_config=FunctionModel(outer_model), human_input_mode="NEVER")
    lead.register_nested_chats(
        [{"sender": critic, "recipient": writer, "max_turns": 1, "summary_method": "last_msg"}],
        trigger=lambda sender: sender is not None and sender.name == "user",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    result = user.initiate_chat(lead, "review this", max_turns=1, store=store, chat_id="outer", silent=True)

    assert result.chat_history[-1]["content"] == "inner answer"
    assert sorted(store.chat_ids()) == ["outer", "outer/1"]
    assert calls == Counter({"inner": 1})

    again = user.initiate_chat(lead, "review this", max_turns=1, store=store, chat_id="outer", silent=True)
    assert again.chat_history == result.chat_history
    assert calls == Counter({"inner": 1})


def test_chats_started_by_each_of_several_tool_calls_keep_their_ids_through_a_crash():
    """A re-run runs only the calls whose outcomes were not recorded: the chats each call starts are told
    apart by the call, so the second call's chat does not pick up the first one's."""
    store = MemoryStore()
    crash_on = ["pear"]

    def clerk_model(request: ModelRequest) -> str:
        text = request.messages[-1]["content"]
        if crash_on and crash_on[0] in text:
            crash_on.clear()
            raise Crash
        return "1.00 USD" if "apple" in text else "9.99 USD"

    def price(item: str) -> str:
        """The price of an item."""
        clerk = ConversableAgent("clerk", llm_config=FunctionModel(clerk_model), human_input_mode="NEVER")
        asker = ConversableAgent("asker", llm_config=False, human_input_mode="NEVER")
        result = asker.initiate_chat(clerk, "What is the price?", carryover=item, max_turns=1, silent=True)
        return f"{item}: {result.summary} ({result.chat_id})"

    def assistant_model(request: ModelRequest) -> Any:
        if any(message.get("role") == "tool" for message in request.messages):
            return "done"
        return [tool_call("price", {"item": "apple"}, id="a"), tool_call("price", {"item": "pear"}, id="p")]

    def run() -> Any:
        assistant = ConversableAgent(
            "assistant", llm_config=FunctionModel(assistant_model), human_input_mode="NEVER"
        )
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        register_function(price, caller=assistant, executor=user, description="The price of an item.")
        return user.initiate_chat(assistant, "prices?", max_turns=2, store=store, chat_id="c", silent=True)

    with pytest.raises(Crash):
        run()
    result = run()

    answers = [response["content"] for response in result.chat_history[2]["tool_responses"]]
    assert answers == ["apple: 1.00 USD (c/2:1)", "pear: 9.99 USD (c/2:2)"]
    assert result.chat_history[-1]["content"] == "done"


def test_register_function_replaces_what_a_swarm_agent_with_handoffs_runs():
    def run(function: Any) -> str:
        worker = SwarmAgent("worker", llm_config=ScriptedModel([tool_call("f", id="c1"), "done"]))
        helper = SwarmAgent("helper", llm_config=False)
        worker.register_hand_off([ON_CONDITION(helper, "Needs help."), AFTER_WORK("TERMINATE")])
        register_function(lambda: "v1", caller=worker, executor=worker, name="f", description="f")
        initiate_swarm_chat(worker, "warm up", [worker, helper], max_rounds=1, silent=True)
        worker.register_function({"f": function})
        result, _, _ = initiate_swarm_chat(worker, "go", [worker, helper], silent=True)
        return str(result.chat_history[2]["content"])

    assert run(lambda: "v2") == "v2"


def test_parley_chats_shows_a_chat_the_engine_stored(tmp_path: Any, capsys: pytest.CaptureFixture[str]):
    from parley.cli import main

    store = f"sqlite:///{tmp_path / 'chats.db'}"
    agents, triage = build_swarm(Effects())
    initiate_swarm_chat(
        triage, "I was charged twice", agents, context_variables={"customer": "ada"}, store=store,
        chat_id="ticket-1", silent=True,
    )  # fmt: skip

    assert main(["chats", "show", store, "ticket-1"]) == 0
    shown = capsys.readouterr().out
    assert "chat ticket-1: swarm of triage, billing; finished" in shown
    assert "handoff to billing" in shown
    assert 'context seen = ["ada"]' in shown
    assert "stop reason: terminate_target: billing's after-work ends the chat" in shown
    assert "summary: Refunded twice. Anything else?" in shown


def test_resuming_with_the_agents_in_other_places_or_one_more_is_another_call_and_an_error():
    store = MemoryStore()
    failing = FailingModel(fail_at=2)
    with pytest.raises(ConnectionError):
        budgeted_chat(store, failing, None)
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
    assistant = ConversableAgent(
        "assistant", llm_config=FunctionModel(FailingModel()), human_input_mode="NEVER"
    )

    with pytest.raises(ValueError, match=r"in that order .*this run has \['assistant', 'user'\]"):
        assistant.initiate_chat(user, "go", max_turns=20, store=store, chat_id="budgeted", silent=True)

    first, second = (ConversableAgent(name, llm_config=False, default_auto_reply=name) for name in "ab")
    manager = GroupChatManager(
        GroupChat([first, second], messages=[], max_round=2, speaker_selection_method="round_robin"),
        llm_config=False,
    )
    first.initiate_chat(manager, "hello", store=store, chat_id="group", silent=True)
    extra = ConversableAgent("x", llm_config=False)
    again = GroupChatManager(
        GroupChat([first, extra, second], messages=[], max_round=2, speaker_selection_method="round_robin"),
        llm_config=False,
    )
    with pytest.raises(ValueError, match=r"this run has \['a', 'x', 'b'\]"):
        first.initiate_chat(again, "hello", store=store, chat_id="group", silent=True)


def test_a_swarm_started_with_other_context_variables_is_another_call_and_an_error():
    """Items of a batch that differ only in their context do not get each other's results."""
    store = MemoryStore()
    first, _, _ = run_swarm(store, Effects())
    agents, triage = build_swarm(Effects())

    with pytest.raises(
        ValueError, match=r"""started with the context variables \{"customer": "ada"\}; this call"""
    ):
        initiate_swarm_chat(
            triage,
            ASKED,
            agents,
            context_variables={"customer": "bob"},
            store=store,
            chat_id="swarm-1",
            silent=True,
        )
    again, _, _ = run_swarm(store, Effects())
    assert again.chat_history == first.chat_history


def test_a_swarm_retried_with_the_context_object_its_first_run_changed_goes_on():
    """A ContextVariables given to a swarm is changed in place: retried with it after a failure, the swarm is
    the same call."""
    from parley import ContextVariables

    store = MemoryStore()
    uninterrupted, final_context, _ = run_swarm(store, Effects())
    records = store.load("swarm-1")
    last_change = max(index for index, record in enumerate(records) if '"context_set"' in record.data)
    assert last_change + 1 < len(records), "the cut leaves the chat unfinished"
    agents, triage = build_swarm(Effects())
    changed = ContextVariables(data=final_context.to_dict())  # as the interrupted run left it

    resumed, _, _ = initiate_swarm_chat(
        triage,
        ASKED,
        agents,
        context_variables=changed,
        store=cut(records, last_change + 1, "swarm-1"),
        chat_id="swarm-1",
        silent=True,
    )

    assert resumed.chat_history == uninterrupted.chat_history


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("'not json'", r"JSONDecodeError: Expecting value"),
        ("""'{"kind": "message"}'""", r"KeyError: 'message'"),
    ],
)
def test_records_changed_outside_parley_are_a_clear_store_error(tmp_path: Path, damage: str, problem: str):
    import sqlite3

    from parley.store import StoreError

    url = f"sqlite:///{tmp_path / 'chats.db'}"

    def run() -> Any:
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        assistant = ConversableAgent("assistant", llm_config=ScriptedModel(["ok"]), human_input_mode="NEVER")
        return user.initiate_chat(assistant, "hi", max_turns=1, store=url, chat_id="d", silent=True)

    run()
    with sqlite3.connect(tmp_path / "chats.db") as connection:
        connection.execute(f"UPDATE parley_records SET data = {damage} WHERE seq = 1")

    with pytest.raises(StoreError, match=rf"chat 'd' in {url} cannot be read back: .*\({problem}"):
        run()


def test_a_tool_call_a_model_gave_no_id_gets_one_that_its_result_and_a_resume_keep():
    """Some servers give tool calls no id: the tool still gets one to key its side effects on, the
    result answers it, and a resumed chat runs the call again with the same one."""
    seen: list[Any] = []

    def charge(amount: int, tool_call_id: str) -> str:
        seen.append(tool_call_id)
        if len(seen) == 1:
            raise KeyboardInterrupt  # the process dies while the tool runs
        return "charged"

    def reply(request: ModelRequest) -> ModelResponse:
        if request.messages[-1].get("role") == "tool":
            return ModelResponse({"role": "assistant", "content": "done"}, Usage(1, 1))
        call = {"type": "function", "function": {"name": "charge", "arguments": '{"amount": 5}'}}
        return ModelResponse({"role": "assistant", "content": None, "tool_calls": [call]}, Usage(1, 1))

    store = MemoryStore()

    def run() -> Any:
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
        register_function(charge, caller=assistant, executor=user, description="Charge.")
        return user.initiate_chat(assistant, "pay", max_turns=2, store=store, chat_id="ids", silent=True)

    with pytest.raises(KeyboardInterrupt):
        run()
    result = run()

    assert len(seen) == 2 and isinstance(seen[0], str) and seen[0].startswith("call_")
    assert seen[1] == seen[0]
    call_id = result.chat_history[1]["tool_calls"][0]["id"]
    assert call_id == seen[0]
    assert result.chat_history[2]["tool_responses"][0]["tool_call_id"] == call_id


def test_a_path_given_as_the_store_is_an_error_that_shows_its_url(tmp_path: Path):
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
    other = ConversableAgent("other", llm_config=False, human_input_mode="NEVER")

    with pytest.raises(TypeError, match=rf"for a SQLite file, store='sqlite:///{tmp_path}/chats.db'"):
        user.initiate_chat(other, "hi", max_turns=1, store=tmp_path / "chats.db", chat_id="p", silent=True)
    assert not (tmp_path / "chats.db").exists()


def test_a_forked_process_makes_chat_ids_of_its_own(tmp_path: Path):
    store = f"sqlite:///{tmp_path}/chats.db"

    def balance_chat(customer: str) -> Any:
        model = FunctionModel(lambda request: f"Hello {customer}")
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")
        assistant = ConversableAgent("assistant", llm_config=model, human_input_mode="NEVER")
        return user.initiate_chat(assistant, "what is my balance?", max_turns=1, store=store, silent=True)

    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # a worker forked after parley was imported, as a preloading server's are
        try:
            result = balance_chat("bob")
            os.write(writing, f"{result.chat_id} {result.summary}".encode())
        finally:
            os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    child_id, child_summary = os.read(reading, 1000).decode().split(" ", 1)
    os.close(reading)

    parent = balance_chat("alice")

    assert child_summary == "Hello bob"
    assert parent.summary == "Hello alice", "not the child's recorded chat"
    assert parent.chat_id.split("-")[0] != child_id.split("-")[0]
