"""run_many on one event loop: outcomes in input order, each item's failure its own, at most
``concurrency`` items at once, and a batch re-run after a crash finishes what was unfinished without
running any chat step twice."""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections import Counter
from typing import Any

import pytest

from parley import (
    ConversableAgent,
    FunctionModel,
    ModelRequest,
    Outcome,
    StopKind,
    a_run_many,
    run_many,
)
from parley.runners.collection import BATCH_THRESHOLD
from parley.store import MemoryStore
from run_many_items import support_chat


def echo_agents(reply: Any) -> tuple[ConversableAgent, ConversableAgent]:
    assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
    return user, assistant


def topic_of(request: ModelRequest) -> str:
    return next(m["content"] for m in request.messages if m.get("role") == "user")


def test_outcomes_come_back_in_input_order_whatever_order_the_chats_finish_in():
    finished: list[str] = []

    async def reply(request: ModelRequest) -> str:
        topic = topic_of(request)
        for _ in range(10 - int(topic)):  # earlier items take more turns of the event loop
            await asyncio.sleep(0)
        return f"about {topic}"

    user, assistant = echo_agents(reply)

    async def chat(topic: str) -> str:
        result = await user.a_initiate_chat(assistant, topic, max_turns=1, silent=True)
        finished.append(topic)
        return str(result.summary)

    outcomes = run_many(chat, [str(n) for n in range(10)], concurrency=10)

    assert finished == [str(n) for n in reversed(range(10))], "the last item finished first"
    assert [outcome.index for outcome in outcomes] == list(range(10))
    assert [outcome.value for outcome in outcomes] == [f"about {n}" for n in range(10)]
    assert [outcome.item for outcome in outcomes] == [str(n) for n in range(10)]
    assert all(outcome.ok and outcome.error is None for outcome in outcomes)
    assert all(outcome.stop_reason.kind is StopKind.MAX_TURNS for outcome in outcomes)
    assert len({outcome.chat_id for outcome in outcomes}) == 10


def test_each_items_failure_is_caught_in_its_outcome_and_the_others_finish():
    async def reply(request: ModelRequest) -> str:
        await asyncio.sleep(0)
        if topic_of(request) == "boom":
            raise RuntimeError("the model is down")
        return "fine"

    user, assistant = echo_agents(reply)

    async def chat(topic: str) -> str:
        if topic == "refused":
            raise ValueError("no chat for this one")
        result = await user.a_initiate_chat(assistant, topic, max_turns=2, silent=True)
        return str(result.summary)

    ok, boom, refused = run_many(chat, ["ok", "boom", "refused"])

    assert (ok.ok, ok.value) == (True, "fine")
    assert isinstance(boom.error, RuntimeError) and str(boom.error) == "the model is down"
    assert boom.value is None and not boom.ok
    assert boom.stop_reason.kind is StopKind.ERROR
    assert [m["content"] for m in boom.chat_result.chat_history] == ["boom"], "the conversation so far"
    assert boom.chat_id == boom.chat_result.chat_id
    assert "RuntimeError: the model is down" in boom.traceback
    with pytest.raises(RuntimeError, match="the model is down"):
        boom.result()
    assert isinstance(refused.error, ValueError)
    assert (refused.chat_result, refused.chat_id, refused.chat_ids) == (None, None, [])


def test_no_more_than_concurrency_items_run_at_once():
    in_flight = peak = 0

    async def reply(request: ModelRequest) -> str:
        for _ in range(3):
            await asyncio.sleep(0)
        return "ok"

    user, assistant = echo_agents(reply)

    async def chat(n: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            await user.a_initiate_chat(assistant, f"item {n}", max_turns=2, silent=True)
        finally:
            in_flight -= 1
        return n

    outcomes = run_many(chat, range(40), concurrency=7)

    assert peak == 7
    assert [outcome.value for outcome in outcomes] == list(range(40))


def test_plain_functions_run_in_threads_with_the_same_bound():
    lock = threading.Lock()
    in_flight = peak = 0
    release = threading.Event()

    user, assistant = echo_agents(lambda request: f"re: {topic_of(request)}")

    def chat(n: int) -> str:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight == 3:
                release.set()
        release.wait(timeout=10)
        try:
            return str(user.initiate_chat(assistant, f"item {n}", max_turns=1, silent=True).summary)
        finally:
            with lock:
                in_flight -= 1

    outcomes = run_many(chat, range(12), concurrency=3)

    assert peak == 3
    assert [outcome.value for outcome in outcomes] == [f"re: item {n}" for n in range(12)]
    assert all(outcome.chat_id is not None for outcome in outcomes)


def test_a_function_that_returns_a_coroutine_is_awaited():
    user, assistant = echo_agents(lambda request: "sure")

    outcomes = run_many(lambda topic: user.a_initiate_chat(assistant, topic, max_turns=1, silent=True), ["a"])

    assert outcomes[0].value.summary == "sure"
    assert outcomes[0].chat_id == outcomes[0].value.chat_id


def test_usage_stop_reason_and_ids_cover_every_chat_of_an_item():
    outcomes = run_many(support_chat, [{"customer": "ada"}, {"customer": "broken-bob"}])
    ada, bob = outcomes

    assert ada.value["context"] == {"customer": "ada", "looked_up": True, "refunded": 3}
    assert ada.stop_reason.kind is StopKind.TERMINATE_TARGET
    spent = ada.usage["usage_including_cached_inference"]["support-model"]
    assert (spent["prompt_tokens"], spent["completion_tokens"]) == (4 + 3 + 6, 3 * 2)
    assert ada.tokens == 19 and ada.cost == pytest.approx(0.013)
    assert isinstance(bob.error, RuntimeError)
    assert bob.chat_result.chat_history[-1]["content"] == "broken-bob pays monthly"


def test_nested_chats_are_listed_and_counted_but_the_main_chat_is_the_items_own():
    def build(store: Any = None) -> Any:
        writer = ConversableAgent(
            "writer", llm_config=FunctionModel(lambda request: "a draft"), human_input_mode="NEVER"
        )
        critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
        lead = ConversableAgent(
            "lead", llm_config=FunctionModel(lambda request: "the lead says"), human_input_mode="NEVER"
        )
        lead.register_nested_chats(
            [{"sender": critic, "recipient": writer, "max_turns": 1, "summary_method": "last_msg"}],
            trigger=lambda sender: sender is not None and sender.name == "user",
        )
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

        def review(text: str) -> str:
            return str(user.initiate_chat(lead, text, max_turns=1, silent=True).summary)

        return review

    plain = run_many(build(), ["review this"])[0]
    store = MemoryStore()
    durable = run_many(build(), ["review this"], store=store, batch_id="reviews")[0]

    for outcome in (plain, durable):
        assert outcome.value == "a draft"
        assert len(outcome.chat_ids) == 2
        assert outcome.chat_id == outcome.chat_ids[0], "the main chat is the one the item started"
        assert outcome.stop_reason.kind is StopKind.MAX_TURNS
    assert durable.chat_ids == ["reviews/0", "reviews/0/1"]
    assert sorted(store.chat_ids()) == ["reviews/0", "reviews/0/1"]


def test_an_items_chats_get_ids_from_the_batch_in_the_order_they_start():
    user, assistant = echo_agents(lambda request: "ok")

    async def two_chats(n: int) -> int:
        await user.a_initiate_chat(assistant, f"first {n}", max_turns=1, silent=True)
        await user.a_initiate_chat(assistant, f"second {n}", max_turns=1, silent=True)
        return n

    store = MemoryStore()
    outcomes = run_many(two_chats, range(3), store=store, batch_id="nightly")

    assert [outcome.chat_ids for outcome in outcomes] == [
        [f"nightly/{n}", f"nightly/{n}.2"] for n in range(3)
    ]
    assert [outcome.chat_id for outcome in outcomes] == [f"nightly/{n}.2" for n in range(3)], "the last one"
    assert sorted(store.chat_ids()) == sorted(f"nightly/{n}{s}" for n in range(3) for s in ("", ".2"))


class Crash(BaseException):
    """The process dying: nothing after it happens."""


def test_a_batch_run_again_after_a_crash_finishes_what_was_unfinished_and_repeats_no_step():
    calls: Counter[str] = Counter()
    crash_after: list[int] = []

    async def reply(request: ModelRequest) -> str:
        topic = topic_of(request)
        for _ in range(int(topic.split()[-1]) % 4):
            await asyncio.sleep(0)
        if crash_after and sum(calls.values()) >= crash_after[0]:
            raise Crash
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        calls[topic] += 1
        return f"{topic}: answer {turn}"

    user, assistant = echo_agents(reply)
    starts: Counter[int] = Counter()

    async def chat(n: int) -> list[Any]:
        starts[n] += 1
        result = await user.a_initiate_chat(assistant, f"item {n}", max_turns=3, silent=True)
        return [m["content"] for m in result.chat_history]

    reference = run_many(chat, range(12), concurrency=4)
    full_calls = Counter(calls)
    assert sum(full_calls.values()) == 36

    store = MemoryStore()
    calls.clear()
    crash_after.append(20)
    with pytest.raises(Crash):
        run_many(chat, range(12), concurrency=4, store=store, batch_id="b")
    first_calls = Counter(calls)
    assert 0 < sum(first_calls.values()) == 20
    finished_before = [n for n in range(12) if first_calls[f"item {n}"] == 3]
    assert finished_before, "some items finished before the crash"

    crash_after.clear()
    calls.clear()
    again = run_many(chat, range(12), concurrency=4, store=store, batch_id="b")

    assert [outcome.value for outcome in again] == [outcome.value for outcome in reference]
    assert all(outcome.ok for outcome in again)
    assert first_calls + calls == full_calls, "every model step of every item ran exactly once"
    assert all(calls[f"item {n}"] == 0 for n in finished_before), "finished items called no model"
    assert [outcome.chat_id for outcome in again] == [f"b/{n}" for n in range(12)]
    for n in range(12):
        kinds = [record.kind for record in store.load(f"b/{n}")]
        assert kinds.count("chat_started") == 1 and kinds[-1] == "result"

    calls.clear()
    third = run_many(chat, range(12), concurrency=4, store=store, batch_id="b")
    assert sum(calls.values()) == 0
    assert [outcome.value for outcome in third] == [outcome.value for outcome in reference]
    assert [outcome.usage for outcome in third] == [outcome.usage for outcome in again]


async def test_a_run_many_runs_on_the_running_loop_and_run_many_refuses_to_block_it():
    outcomes = await a_run_many(support_chat, [{"customer": "cy"}])
    assert outcomes[0].value["last"] == "billing"

    with pytest.raises(RuntimeError, match="await a_run_many"):
        run_many(support_chat, [{"customer": "cy"}])


def test_no_inputs_no_outcomes():
    assert run_many(support_chat, []) == []
    assert run_many(support_chat, iter([])) == []


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"concurrency": 0}, ValueError, "concurrency must be an int of at least 1, not 0"),
        ({"concurrency": 2.5}, ValueError, "concurrency must be an int of at least 1, not 2.5"),
        ({"concurrency": True}, ValueError, "concurrency must be an int"),
        ({"inputs": 7}, TypeError, "inputs must be an iterable of items .*not int"),
        ({"inputs": "abc"}, TypeError, r"not a str .*pass \[text\] for one item"),
        ({"fn": "support_chat"}, TypeError, "fn must be a callable"),
        ({"runner": "spark"}, ValueError, "runner must be 'local', 'ray' or a RayRunner"),
        ({"batch_id": "b1"}, ValueError, "batch_id names a batch's chats in a store: give store= too"),
        ({"batch_id": "", "store": MemoryStore()}, ValueError, "batch_id must be a non-empty string"),
        ({"progress": "yes"}, TypeError, "progress must be True, False or None"),
        ({"store": 42}, TypeError, "store must be a URL"),
    ],
)
def test_bad_arguments_are_named_before_any_item_runs(arguments: dict[str, Any], error: type, message: str):
    started: list[Any] = []
    call: dict[str, Any] = {"fn": started.append, "inputs": [1, 2]}
    call.update(arguments)

    with pytest.raises(error, match=message):
        run_many(call.pop("fn"), call.pop("inputs"), **call)
    assert started == []


def test_the_ray_runner_without_ray_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "ray", None)

    with pytest.raises(ImportError, match=r"pip install 'parley-llm\[ray\]'"):
        run_many(support_chat, [{"customer": "x"}], runner="ray")


def test_an_outcome_reads_as_its_value_or_its_error():
    assert repr(Outcome(0, value="v", chat_id="c")).startswith("Outcome(index=0, value='v', chat_id='c'")
    assert Outcome(1, error=KeyError("k")).ok is False
    assert Outcome(2, value=3).result() == 3


@pytest.fixture
def gc_threshold(request: pytest.FixtureRequest) -> Any:
    """The youngest generation's threshold set for the test (700, the default, unless parametrized)."""
    threshold = getattr(request, "param", 700)
    saved = gc.get_threshold()
    gc.set_threshold(threshold, 10, 10)
    yield threshold
    gc.set_threshold(*saved)


def thresholds_seen(items: int) -> list[tuple[int, int, int]]:
    """The collector's thresholds as each item of a batch of ``items`` saw them."""
    seen: list[tuple[int, int, int]] = []

    async def look(item: int) -> int:
        seen.append(gc.get_threshold())
        return item

    run_many(look, range(items))
    return seen


def test_the_cycle_collector_runs_less_often_during_a_batch_and_as_before_after_it(gc_threshold: int):
    assert thresholds_seen(3) == [(BATCH_THRESHOLD, 10, 10)] * 3
    assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_are_put_back_when_the_last_of_two_batches_at_once_ends(gc_threshold: int):
    after_first: list[tuple[int, int, int]] = []

    async def both() -> None:
        first_done = asyncio.Event()

        async def quick(item: int) -> int:
            return item

        async def waits(item: int) -> int:
            await first_done.wait()
            after_first.append(gc.get_threshold())
            return item

        async def first() -> None:
            await a_run_many(quick, range(2))
            first_done.set()

        await asyncio.gather(first(), a_run_many(waits, range(2)))

    asyncio.run(both())

    assert after_first == [(BATCH_THRESHOLD, 10, 10)] * 2
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("gc_threshold", [0, 500_000], indirect=True)
def test_a_threshold_of_the_users_own_off_or_higher_is_left_alone(gc_threshold: int):
    assert thresholds_seen(2) == [(gc_threshold, 10, 10)] * 2
    assert gc.get_threshold() == (gc_threshold, 10, 10)


def test_a_threshold_changed_during_the_batch_is_kept(gc_threshold: int):
    async def change(item: int) -> int:
        gc.set_threshold(5_000, 10, 10)
        return item

    run_many(change, range(1))

    assert gc.get_threshold() == (5_000, 10, 10)


def test_a_ray_actor_keeps_the_batch_threshold_for_its_life(gc_threshold: int):
    from parley.runners.ray_actor import ChatWorker

    ChatWorker(support_chat, concurrency=2, store_url=None, batch_id="b")

    assert gc.get_threshold() == (BATCH_THRESHOLD, 10, 10)


def test_a_failure_in_a_nested_chat_gives_the_main_chat_s_result_beside_its_id():
    def writer_reply(request: Any) -> str:
        raise RuntimeError("writer model down")

    writer = ConversableAgent("writer", llm_config=FunctionModel(writer_reply), human_input_mode="NEVER")
    critic = ConversableAgent("critic", llm_config=False, human_input_mode="NEVER")
    lead = ConversableAgent("lead", llm_config=False, human_input_mode="NEVER")
    lead.register_nested_chats(
        [{"sender": critic, "recipient": writer, "max_turns": 1, "silent": True}],
        trigger=lambda sender: sender is not None and sender.name == "user",
    )
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER")

    def review(text: str) -> Any:
        return user.initiate_chat(lead, text, max_turns=1, silent=True).summary

    outcome = run_many(review, ["review this"], store=MemoryStore(), batch_id="r")[0]

    assert outcome.chat_ids == ["r/0", "r/0/1"] and outcome.chat_id == "r/0"
    assert outcome.chat_result.chat_id == "r/0"
    assert [m["name"] for m in outcome.chat_result.chat_history] == ["user"]
    assert outcome.error.chat_result.chat_id == "r/0", "the error keeps the chat fn started"


async def test_cancelling_a_batch_stops_the_chats_running_in_threads_at_their_next_step():
    calls: list[str] = []
    slow = [True]

    def reply(request: ModelRequest) -> str:
        calls.append("call")
        if slow[0]:
            time.sleep(0.05)
        return "more"

    def long_chat(n: int) -> Any:
        talker = ConversableAgent("talker", llm_config=FunctionModel(reply), human_input_mode="NEVER")
        listener = ConversableAgent("listener", llm_config=FunctionModel(reply), human_input_mode="NEVER")
        return talker.initiate_chat(listener, f"go {n}", max_turns=20, silent=True).chat_history

    store = MemoryStore()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(a_run_many(long_chat, range(3), concurrency=3, store=store, batch_id="b"), 0.3)
    made = len(calls)
    await asyncio.sleep(0.4)
    assert len(calls) <= made + 3, "at most the call each thread was making"

    slow[0] = False
    outcomes = await a_run_many(long_chat, range(3), concurrency=3, store=store, batch_id="b")
    assert [outcome.ok for outcome in outcomes] == [True] * 3, "no chat is still held by a thread"
    assert [len(outcome.value) for outcome in outcomes] == [40] * 3
    assert len(calls) == 3 * 39, "the re-run went on where each chat stopped"
