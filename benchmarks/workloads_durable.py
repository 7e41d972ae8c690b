"""parley's workloads that AG2 has no counterpart for: durable chats, many chats over one set of agents,
and chats with budgets and time limits. Each is compared against parley's (and AG2's) plain figures.

Every workload returns the figures of one run (see :func:`benchmarks.spec.outcome`) and checks that it
did exactly the prescribed work.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import tempfile
import uuid
from typing import Any

from benchmarks.measure import timed
from benchmarks.spec import MODEL_DELAY_S, NO_LIMIT, SHARED_SWARM_STEPS, check, lookup_weather, outcome
from benchmarks.workloads_parley import ZeroLatencyModel, _agent
from parley import (
    ConversableAgent,
    SwarmAgent,
    SwarmResult,
    a_initiate_swarm_chat,
    register_function,
    tool_call,
)
from parley.limits import MaxCost, MaxTime, MaxTokens
from parley.models import ModelResponse, Usage

POSTGRES_VARIABLE = "PARLEY_BENCH_POSTGRES_URL"


def durable_chat(turns: int, store: str) -> dict[str, Any]:
    """A two-agent chat of ``turns`` turns kept in ``store``: every message is a record written before the
    next step."""
    models = ZeroLatencyModel(), ZeroLatencyModel()
    user, assistant = _agent("user", models[0]), _agent("assistant", models[1])
    chat_id = uuid.uuid4().hex
    with timed() as timing:
        result = user.initiate_chat(
            assistant, message="hello", max_turns=turns, silent=True, store=store, chat_id=chat_id
        )
    steps = sum(model.calls for model in models)
    check("model calls", steps, 2 * turns - 1)
    check("messages", len(result.chat_history), 2 * turns)
    from parley.store import open_store

    stored = open_store(store).load(chat_id)
    check("records", len(stored), 2 * turns + 3)
    size = sum(len(record.data.encode()) for record in stored)
    return outcome(timing.cpu_s, timing.wall_s, steps, messages=2 * turns, record_bytes=size)


def chat_sqlite(turns: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        return durable_chat(turns, f"sqlite:///{directory}/chats.db")


def chat_postgres(turns: int) -> dict[str, Any]:
    url = os.environ.get(POSTGRES_VARIABLE)
    if not url:
        raise RuntimeError(f"set {POSTGRES_VARIABLE} to a PostgreSQL server on 127.0.0.1")
    return durable_chat(turns, url)


class _Stops(Exception):
    """The model going away, so that the chat stops unfinished."""


def resume(messages: int) -> dict[str, Any]:
    """Continue a two-agent chat of ``messages`` messages kept in SQLite: load its records, rebuild its
    state and views, and take one more step. The figure is the whole call."""
    turns = messages // 2
    with tempfile.TemporaryDirectory() as directory:
        store = f"sqlite:///{directory}/chats.db"

        def build(fail_after: int | None) -> tuple[ConversableAgent, ConversableAgent, ZeroLatencyModel]:
            model = ZeroLatencyModel()
            if fail_after is not None:
                create = model.create

                def failing(*args: Any, **kwargs: Any) -> ModelResponse:
                    if model.calls >= fail_after:
                        raise _Stops
                    return create(*args, **kwargs)

                model.create = failing  # type: ignore[method-assign]
            user = ConversableAgent(
                "user", llm_config=False, human_input_mode="NEVER", default_auto_reply="go"
            )
            user._max_consecutive_auto_reply = NO_LIMIT
            return user, _agent("assistant", model), model

        user, assistant, _ = build(fail_after=turns - 1)
        with contextlib.suppress(_Stops):
            user.initiate_chat(assistant, "hello", max_turns=turns, silent=True, store=store, chat_id="long")
        user, assistant, model = build(fail_after=None)
        with timed() as timing:
            result = user.initiate_chat(
                assistant, "hello", max_turns=turns, silent=True, store=store, chat_id="long"
            )
    check("model calls after resuming", model.calls, 1)
    check("messages", len(result.chat_history), messages)
    return outcome(timing.cpu_s, timing.wall_s, 1, messages=messages)


def shared_swarms(chats: int) -> dict[str, Any]:
    """``chats`` swarms at once on one event loop over ONE set of agents, each of ``SHARED_SWARM_STEPS``
    model calls that wait ``MODEL_DELAY_S``: a tool reads the chat's own context, and every chat must
    end with its own customer's transcript and context (no mixing)."""

    class Worker:
        """Waits ``MODEL_DELAY_S``, then calls the note tool until the last step, then answers."""

        async def a_create(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
            await asyncio.sleep(MODEL_DELAY_S)
            last = messages[-1]  # after a tool's result "customer-N step K", K + 1 steps are done
            done = int(last["content"].rsplit(" ", 1)[1]) + 1 if last.get("role") == "tool" else 0
            if done < SHARED_SWARM_STEPS - 1:
                call = tool_call("note", {"step": done}, id=f"n{done}")
                return ModelResponse({"role": "assistant", "content": None, "tool_calls": [call]})
            return ModelResponse({"role": "assistant", "content": f"done for {messages[1]['content']}"})

        def create(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
            raise RuntimeError("the shared swarms run asynchronously")

    def note(step: int, context_variables: dict[str, Any]) -> SwarmResult:
        return SwarmResult(
            values=f"{context_variables['customer']} step {step}", context_variables={"steps": step + 1}
        )

    worker = SwarmAgent("worker", llm_config=Worker(), functions=[note], human_input_mode="NEVER")
    worker.register_for_execution(in_thread=False)(note)

    async def run_all() -> list[Any]:
        return await asyncio.gather(
            *(
                a_initiate_swarm_chat(
                    worker,
                    f"customer-{index}",
                    [worker],
                    context_variables={"customer": f"customer-{index}"},
                    max_rounds=SHARED_SWARM_STEPS + 1,
                    silent=True,
                )
                for index in range(chats)
            )
        )

    with timed() as timing:
        results = asyncio.run(run_all())
    mixed = 0
    for index, (result, context, _) in enumerate(results):
        customer = f"customer-{index}"
        tool_texts = [m["content"] for m in result.chat_history if m.get("role") == "tool"]
        if context.get("customer") != customer or any(not text.startswith(customer) for text in tool_texts):
            mixed += 1
        if result.chat_history[-1]["content"] != f"done for {customer}":
            mixed += 1
        check("tool results of a chat", len(tool_texts), SHARED_SWARM_STEPS - 1)
    check("chats whose transcript or context mixed with another's", mixed, 0)
    steps = chats * SHARED_SWARM_STEPS
    return outcome(timing.cpu_s, timing.wall_s, steps, chats=chats)


class _WeatherModel:
    """Calls the weather tool, then answers "ok" once it has the result; reports usage and cost."""

    def __init__(self) -> None:
        self.calls = 0

    def create(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
        self.calls += 1
        if messages[-1].get("role") == "tool":
            return ModelResponse({"role": "assistant", "content": "ok"}, Usage(10, 2), 0.00001, "m")
        arguments = '{"city": "Oslo"}'
        call = {
            "id": f"c{self.calls}",
            "type": "function",
            "function": {"name": "lookup_weather", "arguments": arguments},
        }
        return ModelResponse(
            {"role": "assistant", "content": None, "tool_calls": [call]}, Usage(10, 2), 0.00001, "m"
        )

    async def a_create(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
        return self.create(messages, tools, **params)


def _tool_chat(
    turns: int, *, limits: bool, budgets: bool | None = None, timeout: bool | None = None
) -> dict[str, Any]:
    """A two-agent chat where the assistant's model calls a tool each turn, which the user runs: plain,
    or with a token, cost and time budget and a time limit on the tool."""
    model = _WeatherModel()
    assistant = ConversableAgent(
        "assistant", llm_config=model, human_input_mode="NEVER", max_consecutive_auto_reply=NO_LIMIT
    )
    user = ConversableAgent(
        "user",
        llm_config=False,
        human_input_mode="NEVER",
        max_consecutive_auto_reply=NO_LIMIT,
        default_auto_reply="go on",
    )
    budgets = limits if budgets is None else budgets
    timeout = limits if timeout is None else timeout
    register_function(
        lookup_weather,
        caller=assistant,
        executor=user,
        description="Weather.",
        timeout=5.0 if timeout else None,
    )
    stop_when = MaxTokens(10**9) | MaxCost(10**6) | MaxTime(3600) if budgets else None
    with timed() as timing:
        result = user.initiate_chat(assistant, "weather?", max_turns=turns, silent=True, stop_when=stop_when)
    check("model calls", model.calls, turns)
    check("messages", len(result.chat_history), 2 * turns)
    return outcome(timing.cpu_s, timing.wall_s, turns, messages=2 * turns)


def tool_chat(turns: int) -> dict[str, Any]:
    return _tool_chat(turns, limits=False)


def tool_chat_limits(turns: int) -> dict[str, Any]:
    return _tool_chat(turns, limits=True)


PAIRS = 3
"""How many times :func:`tool_chat_paired` runs the plain and the limited chat, one after the other."""


def tool_chat_paired(turns: int) -> dict[str, Any]:
    """The tool chat plain and with budgets and a time limit, alternately in one process, ``PAIRS``
    times: their CPU is compared under the same conditions (the machine's speed moves between
    processes). ``cpu_s`` and ``wall_s`` are the limited chat's, ``plain_cpu_s`` the plain one's, each
    the median."""
    plain: list[float] = []
    limited: list[dict[str, Any]] = []
    for _ in range(PAIRS):
        plain.append(_tool_chat(turns, limits=False)["cpu_s"])
        limited.append(_tool_chat(turns, limits=True))
    return outcome(
        statistics.median(run["cpu_s"] for run in limited),
        statistics.median(run["wall_s"] for run in limited),
        turns,
        messages=2 * turns,
        plain_cpu_s=statistics.median(plain),
    )


def tool_chat_budgets(turns: int) -> dict[str, Any]:
    return _tool_chat(turns, limits=False, budgets=True)


def tool_chat_timeout(turns: int) -> dict[str, Any]:
    return _tool_chat(turns, limits=False, timeout=True)


WORKLOADS = {
    "tool_chat_budgets": tool_chat_budgets,
    "tool_chat_timeout": tool_chat_timeout,
    "chat_sqlite": chat_sqlite,
    "chat_postgres": chat_postgres,
    "resume": resume,
    "shared_swarms": shared_swarms,
    "tool_chat": tool_chat,
    "tool_chat_limits": tool_chat_limits,
    "tool_chat_paired": tool_chat_paired,
}
