"""Bounded tools: time limits, the event loop kept free, and context changes that count only on success."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from parley import (
    ConversableAgent,
    ScriptedModel,
    SwarmAgent,
    Tool,
    initiate_swarm_chat,
    register_function,
    tool_call,
)


def pair(replies: list[Any], **user_options: Any) -> tuple[ConversableAgent, ConversableAgent]:
    assistant = ConversableAgent("assistant", llm_config=ScriptedModel(replies), human_input_mode="NEVER")
    user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", **user_options)
    return assistant, user


def tool_message(result: Any) -> str:
    return next(str(m["content"]) for m in result.chat_history if m.get("role") == "tool")


def test_a_stuck_tool_is_answered_as_timed_out_and_the_chat_goes_on():
    released = threading.Event()
    finished: list[bool] = []

    def stuck() -> str:
        released.wait(10)
        finished.append(True)
        return "done"

    assistant, user = pair([tool_call("stuck"), "Sorry, that took too long."])
    register_function(stuck, caller=assistant, executor=user, description="Hangs.", timeout=0.2)

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert tool_message(result) == "Error: stuck timed out: it did not finish within its time limit of 0.2 s"
    assert result.chat_history[-1]["content"] == "Sorry, that took too long."
    assert finished == [], "the call was interrupted, not waited for"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_time_limits_hold_in_a_process_forked_after_a_timed_tool_ran():
    """A forked child starts with no timed call under way, whatever its parent was doing."""

    def quick() -> str:
        return "quick"

    def stuck() -> str:
        time.sleep(10)
        return "done"

    assistant, user = pair([tool_call("quick"), "ok"])
    register_function(quick, caller=assistant, executor=user, description="Quick.", timeout=5)
    assert "quick" in tool_message(user.initiate_chat(assistant, "go", max_turns=2, silent=True))

    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        try:
            assistant, user = pair([tool_call("stuck"), "ok"])
            register_function(stuck, caller=assistant, executor=user, description="Hangs.", timeout=0.2)
            started = time.monotonic()
            answer = tool_message(user.initiate_chat(assistant, "go", max_turns=2, silent=True))
            os.write(write_end, f"{time.monotonic() - started:.2f} {answer}".encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        seconds, answer = pipe.read().split(" ", 1)
    os.waitpid(child, 0)

    assert answer == "Error: stuck timed out: it did not finish within its time limit of 0.2 s"
    assert float(seconds) < 5


def test_a_tool_that_catches_exceptions_and_retries_still_times_out():
    def retrying() -> str:
        for attempt in range(5):
            try:
                time.sleep(1.0)
                return f"ok on attempt {attempt}"
            except Exception:  # a careless retry loop
                continue
        return "gave up"

    assistant, user = pair([tool_call("retrying"), "ok"])
    register_function(retrying, caller=assistant, executor=user, description="Retries.", timeout=0.2)
    started = time.monotonic()

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert (
        tool_message(result) == "Error: retrying timed out: it did not finish within its time limit of 0.2 s"
    )
    assert time.monotonic() - started < 0.9


def test_time_limits_hold_when_something_else_replaced_the_alarm_handler():
    def slow() -> str:
        time.sleep(2)
        return "done"

    for _ in range(2):  # the first chat installs parley's handler; then another library resets it
        assistant, user = pair([tool_call("slow"), "ok"])
        register_function(slow, caller=assistant, executor=user, description="Slow.", timeout=0.2)
        result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)
        assert (
            tool_message(result) == "Error: slow timed out: it did not finish within its time limit of 0.2 s"
        )
        previous = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def application_alarms() -> Iterator[list[int]]:
    """The signals an ``SIGALRM`` handler of the application's own receives; its interval timer is
    stopped and the handler before it put back afterwards."""
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_interval_timer_of_the_applications_own_is_left_running(application_alarms: list[int]):
    def slow() -> str:
        time.sleep(2)
        return "done"

    signal.setitimer(signal.ITIMER_REAL, 1.0)
    assistant, user = pair([tool_call("slow"), "ok"])
    register_function(slow, caller=assistant, executor=user, description="Slow.", timeout=0.2)
    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    time.sleep(left + 0.1)

    assert tool_message(result) == "Error: slow timed out: it did not finish within its time limit of 0.2 s"
    assert 0 < left < 0.9, "the application's timer kept counting down"
    assert application_alarms == [signal.SIGALRM], "and it fired, to the application's handler"


def test_a_short_time_limit_after_a_long_one_holds():
    """The watchdog sleeps until the latest deadline; a call that must end sooner wakes it."""

    def quick() -> str:
        time.sleep(0.05)  # the watchdog looks meanwhile, and goes to sleep until this call's deadline
        return "quick"

    def stuck() -> str:
        time.sleep(10)
        return "done"

    assistant, user = pair([tool_call("quick"), tool_call("stuck"), "ok"])
    register_function(quick, caller=assistant, executor=user, description="Quick.", timeout=60)
    register_function(stuck, caller=assistant, executor=user, description="Hangs.", timeout=0.2)
    started = time.monotonic()

    result = user.initiate_chat(assistant, "go", max_turns=3, silent=True)

    tool_messages = [m["content"] for m in result.chat_history if m.get("role") == "tool"]
    assert tool_messages == [
        "quick",
        "Error: stuck timed out: it did not finish within its time limit of 0.2 s",
    ]
    assert time.monotonic() - started < 5


def test_a_call_that_holds_the_interpreter_past_its_limit_and_returns_times_out():
    def crunch() -> str:
        started = time.monotonic()
        while time.monotonic() - started < 0.05:
            sum(range(200_000))  # C code that keeps the interpreter lock while it runs
        return "crunched"

    assistant, user = pair([tool_call("crunch"), "ok"])
    register_function(crunch, caller=assistant, executor=user, description="Crunch.", timeout=0.005)

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert tool_message(result).startswith("Error: crunch timed out")


def test_an_alarm_of_the_applications_own_during_a_timed_call_reaches_its_handler(
    application_alarms: list[int],
):
    def slow() -> str:
        time.sleep(0.3)
        return "done"

    assistant, user = pair([tool_call("slow"), "ok"])
    register_function(slow, caller=assistant, executor=user, description="Slow.", timeout=5)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert tool_message(result) == "done", "the call went on after the application's handler ran"
    assert application_alarms == [signal.SIGALRM]


def test_the_agent_wide_time_limit_applies_to_tools_without_their_own():
    def stuck() -> str:
        threading.Event().wait(10)
        return "done"

    def quick() -> str:
        return "quick"

    assistant, user = pair([[tool_call("stuck"), tool_call("quick")], "ok"], tool_timeout=0.2)
    register_function(stuck, caller=assistant, executor=user, description="Hangs.")
    register_function(quick, caller=assistant, executor=user, description="Quick.", timeout=5)

    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    responses = [r["content"] for r in result.chat_history[2]["tool_responses"]]
    assert responses == ["Error: stuck timed out: it did not finish within its time limit of 0.2 s", "quick"]


async def test_an_async_tool_past_its_limit_is_cancelled():
    cancelled: list[bool] = []

    async def stuck() -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "done"

    assistant, user = pair([tool_call("stuck"), "ok"])
    register_function(stuck, caller=assistant, executor=user, description="Hangs.", timeout=0.1)

    result = await user.a_initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert tool_message(result).startswith("Error: stuck timed out")
    assert cancelled == [True]


async def test_a_sync_tool_past_its_limit_in_an_async_chat_is_abandoned_in_its_thread():
    released = threading.Event()
    finished: list[str] = []

    def stuck() -> str:
        released.wait(10)
        finished.append(threading.current_thread().name)
        return "done"

    assistant, user = pair([tool_call("stuck"), "ok"])
    register_function(stuck, caller=assistant, executor=user, description="Hangs.", timeout=0.1)

    result = await user.a_initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert tool_message(result).startswith("Error: stuck timed out")
    assert finished == []
    released.set()
    for _ in range(100):
        if finished:
            break
        await asyncio.sleep(0.01)
    assert finished and finished[0] != threading.current_thread().name, "it ran on, in its own thread"


async def test_timed_sync_tools_in_an_async_chat_reuse_a_thread_but_not_one_running_an_abandoned_call():
    released = threading.Event()
    threads: list[threading.Thread] = []

    def stuck() -> str:
        threads.append(threading.current_thread())
        released.wait(10)
        return "done"

    def quick() -> str:
        threads.append(threading.current_thread())
        return "quick"

    assistant, user = pair(
        [tool_call("quick"), tool_call("quick"), tool_call("stuck"), tool_call("quick"), "ok"]
    )
    register_function(quick, caller=assistant, executor=user, description="Quick.", timeout=5)
    register_function(stuck, caller=assistant, executor=user, description="Hangs.", timeout=0.1)

    result = await user.a_initiate_chat(assistant, "go", max_turns=5, silent=True)
    released.set()

    tools = [str(m["content"]) for m in result.chat_history if m.get("role") == "tool"]
    assert tools[:2] == ["quick", "quick"] and tools[2].startswith("Error: stuck timed out")
    assert tools[3] == "quick", "a call while another is abandoned in its thread still runs"
    first, second, abandoned, after = threads
    assert first is second, "the thread of a call that returned runs the next one"
    assert after is not abandoned, "a thread still running an abandoned call takes no other call"
    assert threading.current_thread() not in threads


async def test_a_timed_sync_tool_that_raises_in_an_async_chat_is_answered_with_its_error():
    def broken(order: str) -> str:
        raise ValueError(f"no order {order}")

    assistant, user = pair([tool_call("broken", {"order": "A7"}), tool_call("broken", {"order": "B8"}), "ok"])
    register_function(broken, caller=assistant, executor=user, description="Fails.", timeout=5)

    result = await user.a_initiate_chat(assistant, "go", max_turns=3, silent=True)

    tools = [str(m["content"]) for m in result.chat_history if m.get("role") == "tool"]
    assert len(tools) == 2 and "no order A7" in tools[0] and "no order B8" in tools[1]
    assert result.chat_history[-1]["content"] == "ok"


async def test_a_slow_sync_tool_does_not_block_the_event_loop():
    released = threading.Event()

    def waits_for_the_loop() -> str:
        return "released" if released.wait(5) else "the event loop was blocked"

    async def release_soon() -> None:
        await asyncio.sleep(0.05)
        released.set()

    assistant, user = pair([tool_call("waits_for_the_loop"), "ok"])
    register_function(waits_for_the_loop, caller=assistant, executor=user, description="Waits.")

    result, _ = await asyncio.gather(
        user.a_initiate_chat(assistant, "go", max_turns=2, silent=True), release_soon()
    )

    assert tool_message(result) == "released"


def test_a_tool_that_fails_leaves_the_context_as_it_was():
    def careless(context_variables: dict[str, Any]) -> str:
        context_variables["balance"] = 0
        context_variables["log"].append("charged")
        raise RuntimeError("card declined")

    agent = SwarmAgent(
        "clerk", llm_config=ScriptedModel([tool_call("careless"), "done"]), functions=[careless]
    )

    result, context, _ = initiate_swarm_chat(
        agent, "charge", [agent], context_variables={"balance": 10, "log": []}, silent=True
    )

    assert tool_message(result) == "Error: careless raised RuntimeError: card declined"
    assert context == {"balance": 10, "log": []}


async def test_parallel_calls_that_change_the_context_each_see_the_ones_before():
    async def bump(context_variables: dict[str, Any]) -> str:
        n = context_variables.get("n", 0)
        await asyncio.sleep(0)
        context_variables["n"] = n + 1
        return f"n is {n + 1}"

    calls = [tool_call("bump", id=f"b{i}") for i in range(5)]
    agent = SwarmAgent("counter", llm_config=ScriptedModel([calls, "done"]), functions=[bump])

    from parley import a_initiate_swarm_chat

    result, context, _ = await a_initiate_swarm_chat(agent, "count", [agent], silent=True)

    assert context["n"] == 5
    assert [r["content"] for r in result.chat_history[2]["tool_responses"]] == [
        f"n is {i}" for i in range(1, 6)
    ]


@pytest.mark.parametrize("timeout", [0, -1, "5", True])
def test_time_limits_must_be_positive_numbers(timeout: Any):
    with pytest.raises(ValueError, match="positive number of seconds"):
        Tool(lambda: "x", name="x", timeout=timeout)
    with pytest.raises(ValueError, match="tool_timeout must be a positive number of seconds"):
        ConversableAgent("a", llm_config=False, tool_timeout=timeout)


def test_a_tool_given_a_new_description_keeps_its_time_limit():
    assistant, user = pair([tool_call("slow", {"order": "A-1"}), "ok"])

    def slow(order: str) -> str:
        time.sleep(0.5)
        return "shipped"

    register_function(Tool(slow, timeout=0.05), caller=assistant, executor=user, description="Ship it.")
    result = user.initiate_chat(assistant, "go", max_turns=2, silent=True)

    assert assistant.llm_config.requests[0].tools[0]["function"]["description"] == "Ship it."
    assert "slow timed out" in tool_message(result)


def test_a_tool_registered_again_keeps_what_is_not_given_again():
    def weather(**kwargs: Any) -> str:
        return "sunny"

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tool = Tool(weather, parameters_json_schema=schema, timeout=0.5, in_thread=False)
    assistant, user = pair(["x"])

    described = assistant.register_for_llm(description="Weather by city.")(tool)
    assert (described.description, described.parameters) == ("Weather by city.", schema)
    assert (described.timeout, described.in_thread) == (0.5, False)

    direct = user.register_for_execution(in_thread=False)(Tool(weather, timeout=0.2))
    assert (direct.timeout, direct.in_thread) == (0.2, False)
    limited = user.register_for_execution(timeout=5)(Tool(weather, in_thread=False))
    assert (limited.timeout, limited.in_thread) == (5, False)
