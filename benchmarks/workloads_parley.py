"""parley's side of the workloads, with a zero-latency model passed as ``llm_config``.

Every workload returns the figures of one run (see :func:`benchmarks.spec.outcome`) and checks that
parley did exactly the prescribed work: the number of model calls, tool results and messages.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks.measure import printing_or_silent, rss_bytes, timed, traced_memory
from benchmarks.spec import (
    MODEL_DELAY_S,
    NO_LIMIT,
    RING,
    STEPS_PER_CHAT,
    TOOL_DESCRIPTION,
    check,
    lookup_weather,
    outcome,
)
from parley import (
    ON_CONDITION,
    ConversableAgent,
    GroupChat,
    GroupChatManager,
    initiate_swarm_chat,
    register_function,
    register_hand_off,
)
from parley.models import ModelResponse

Message = dict[str, Any]


class ZeroLatencyModel:
    """A model client that answers at once: ``"ok"``, or a call to the first offered tool whose name
    starts with ``tool_prefix``. ``a_create`` first waits ``delay_s`` on the event loop."""

    def __init__(self, *, tool_prefix: str | None = None, delay_s: float = 0.0) -> None:
        self.tool_prefix = tool_prefix
        self.delay_s = delay_s
        self.calls = 0

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        self.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        return ModelResponse(self._reply(tools))

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        self.calls += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return ModelResponse(self._reply(tools))

    def _reply(self, tools: Sequence[dict[str, Any]] | None) -> Message:
        if self.tool_prefix is None:
            return {"role": "assistant", "content": "ok"}
        prefix = self.tool_prefix
        name = next(t["function"]["name"] for t in tools or () if t["function"]["name"].startswith(prefix))
        call = {"id": f"call_{self.calls}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}


def _agent(name: str, model: ZeroLatencyModel | None) -> ConversableAgent:
    return ConversableAgent(
        name,
        llm_config=model if model is not None else False,
        human_input_mode="NEVER",
        max_consecutive_auto_reply=NO_LIMIT,
        default_auto_reply="go on",
    )


def two_agent_chat(turns: int) -> dict[str, Any]:
    """Two agents with models, ``max_turns=turns``: ``2 * turns - 1`` model calls."""
    models = ZeroLatencyModel(), ZeroLatencyModel()
    user, assistant = _agent("user", models[0]), _agent("assistant", models[1])
    with timed() as timing:
        result = user.initiate_chat(assistant, message="hello", max_turns=turns, silent=True)
    steps = sum(model.calls for model in models)
    check("model calls", steps, 2 * turns - 1)
    check("messages", len(result.chat_history), 2 * turns)
    return outcome(timing.cpu_s, timing.wall_s, steps, messages=len(result.chat_history))


def swarm_ring(handoffs: int, *, output: str | None = None) -> dict[str, Any]:
    """Three agents hand off in a ring a -> b -> c -> a, each by calling its ``transfer_to_...`` tool;
    silent, or printed to ``output`` (see :func:`benchmarks.measure.printing_to`)."""
    models = [ZeroLatencyModel(tool_prefix="transfer") for _ in RING]
    agents = [_agent(name, model) for name, model in zip(RING, models, strict=True)]
    for index, agent in enumerate(agents):
        target = agents[(index + 1) % len(agents)]
        register_hand_off(agent, ON_CONDITION(target, f"Hand the conversation to {target.name}."))
    with printing_or_silent(output), timed() as timing:
        # parley counts an agent's tool call and its result as one round; the first message is one too.
        result, _, _ = initiate_swarm_chat(
            agents[0], "start", agents, max_rounds=handoffs + 1, silent=output is None
        )
    steps = sum(model.calls for model in models)
    tool_results = sum(1 for message in result.chat_history if message.get("role") == "tool")
    check("model calls", steps, handoffs)
    check("tool results", tool_results, handoffs)
    callers = [message.get("name") for message in result.chat_history if message.get("tool_calls")]
    check("handoffs in ring order", sum(1 for i, name in enumerate(callers) if name == RING[i % 3]), handoffs)
    return outcome(
        timing.cpu_s, timing.wall_s, steps, tool_results=tool_results, messages=len(result.chat_history)
    )


def first_chat(turns: int, *, output: str | None = None) -> dict[str, Any]:
    """The process's first chat (run without a warm-up): two agents with models, ``max_turns=turns``;
    silent, or printed to ``output``."""
    models = ZeroLatencyModel(), ZeroLatencyModel()
    user, assistant = _agent("user", models[0]), _agent("assistant", models[1])
    with printing_or_silent(output), timed() as timing:
        result = user.initiate_chat(assistant, message="hello", max_turns=turns, silent=output is None)
    steps = sum(model.calls for model in models)
    check("model calls", steps, 2 * turns - 1)
    check("messages", len(result.chat_history), 2 * turns)
    return outcome(timing.cpu_s, timing.wall_s, steps, messages=len(result.chat_history))


def group_chat(rounds: int) -> dict[str, Any]:
    """A round-robin group chat of three agents with models, ``max_round=rounds``: ``rounds - 1`` calls."""
    models = [ZeroLatencyModel() for _ in range(3)]
    agents = [_agent(f"member_{index}", model) for index, model in enumerate(models)]
    groupchat = GroupChat(agents, messages=[], max_round=rounds, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False)
    with timed() as timing:
        result = agents[0].initiate_chat(manager, message="start", silent=True)
    steps = sum(model.calls for model in models)
    check("model calls", steps, rounds - 1)
    check("messages", len(result.chat_history), rounds)
    return outcome(timing.cpu_s, timing.wall_s, steps, messages=len(result.chat_history))


def _agent_with_tool(index: int, model: ZeroLatencyModel) -> ConversableAgent:
    agent = ConversableAgent(f"agent{index}", llm_config=model, human_input_mode="NEVER")
    register_function(lookup_weather, caller=agent, executor=agent, description=TOOL_DESCRIPTION)
    return agent


def create_agents(count: int) -> dict[str, Any]:
    """Create ``count`` agents, each offering and executing one tool: time and RSS growth."""
    model = ZeroLatencyModel()
    rss_before = rss_bytes()
    with timed() as timing:
        agents = [_agent_with_tool(index, model) for index in range(count)]
    rss_delta = rss_bytes() - rss_before
    check("agents with a tool", sum(1 for agent in agents if agent.tools), count)
    return outcome(timing.cpu_s, timing.wall_s, count, rss_delta_bytes=rss_delta)


def create_agents_memory(count: int) -> dict[str, Any]:
    """Create ``count`` agents, each with one tool, under ``tracemalloc``: the memory they hold."""
    model = ZeroLatencyModel()
    with traced_memory() as memory:
        agents = [_agent_with_tool(index, model) for index in range(count)]
    check("agents with a tool", sum(1 for agent in agents if agent.tools), count)
    return outcome(0.0, 0.0, count, retained_bytes=memory.retained_bytes, peak_bytes=memory.peak_bytes)


def concurrent_chats(chats: int) -> dict[str, Any]:
    """``chats`` two-agent chats at once on one event loop, each making ``STEPS_PER_CHAT`` model calls
    that wait ``MODEL_DELAY_S`` each (the user agent has no model; it answers with its auto-reply)."""
    models = [ZeroLatencyModel(delay_s=MODEL_DELAY_S) for _ in range(chats)]
    pairs = [(_agent(f"user{i}", None), _agent(f"assistant{i}", model)) for i, model in enumerate(models)]

    async def run_all() -> list[Any]:
        chats_ = (
            user.a_initiate_chat(assistant, message="hello", max_turns=STEPS_PER_CHAT, silent=True)
            for user, assistant in pairs
        )
        return await asyncio.gather(*chats_)

    with timed() as timing:
        results = asyncio.run(run_all())
    steps = sum(model.calls for model in models)
    check("model calls", steps, chats * STEPS_PER_CHAT)
    check("messages", sum(len(result.chat_history) for result in results), chats * 2 * STEPS_PER_CHAT)
    return outcome(timing.cpu_s, timing.wall_s, steps, chats=chats)


WORKLOADS: dict[str, Callable[[int], dict[str, Any]]] = {
    "chat": two_agent_chat,
    "swarm": swarm_ring,
    "groupchat": group_chat,
    "agents": create_agents,
    "agents_memory": create_agents_memory,
    "concurrent": concurrent_chats,
    "swarm_silent": swarm_ring,
    "swarm_file": functools.partial(swarm_ring, output="file"),
    "swarm_tty": functools.partial(swarm_ring, output="tty"),
    "start_silent": first_chat,
    "start_file": functools.partial(first_chat, output="file"),
    "start_tty": functools.partial(first_chat, output="tty"),
}
