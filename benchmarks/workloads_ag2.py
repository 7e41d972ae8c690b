"""AG2 0.13.4's side of the workloads, with a zero-latency model registered as a custom model client.

AG2 plugs custom models in through ``llm_config={"config_list": [{"model_client_cls": ...}]}`` and
``agent.register_model_client(cls, **kwargs)``. AG2 rebuilds ``agent.client`` whenever an agent's tools
change, which drops the registered client; its classic swarm changes the tools on every turn, so
:func:`_plug_in` registers the client again after each rebuild. Console output goes to an IOStream that
discards it (events are still built, as with ``silent=True``), and AG2's INFO logging is turned off.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import time
import warnings
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

warnings.filterwarnings("ignore")

import autogen  # noqa: E402
from autogen import ConversableAgent, GroupChat, GroupChatManager, register_function  # noqa: E402
from autogen.agentchat.contrib.swarm_agent import ON_CONDITION, initiate_swarm_chat, register_hand_off  # noqa: E402
from autogen.io.base import IOStream  # noqa: E402
from autogen.io.console import IOConsole  # noqa: E402

from benchmarks.measure import printing_or_silent, rss_bytes, timed, traced_memory  # noqa: E402
from benchmarks.spec import (  # noqa: E402
    MODEL_DELAY_S,
    NO_LIMIT,
    RING,
    STEPS_PER_CHAT,
    TOOL_DESCRIPTION,
    check,
    lookup_weather,
    outcome,
)

assert autogen.__version__ == "0.13.4", f"the benchmark compares with AG2 0.13.4, not {autogen.__version__}"

Message = dict[str, Any]
_response_ids = itertools.count()


class _Discard:
    """An AG2 IOStream that prints nothing and answers every prompt with an empty line."""

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", flush: bool = False) -> None:
        return None

    def send(self, message: Any) -> None:
        return None

    def input(self, prompt: str = "", *, password: bool = False) -> str:
        return ""


def _silence() -> None:
    IOStream.set_global_default(_Discard())
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("autogen"):
            logging.getLogger(name).setLevel(logging.WARNING)


_silence()


class CallCounter:
    """Counts model calls across the clients AG2 builds for an agent (it replaces them as it runs)."""

    def __init__(self) -> None:
        self.calls = 0


class ZeroLatencyClient:
    """An AG2 ModelClient that answers at once: ``"ok"``, or a call to the first offered tool whose name
    starts with ``tool_prefix``; ``create`` first sleeps ``delay_s`` (AG2 runs model clients, which are
    synchronous, in a worker thread in async chats)."""

    def __init__(
        self,
        config: dict[str, Any],
        *,
        counter: CallCounter,
        tool_prefix: str | None = None,
        delay_s: float = 0.0,
        **kwargs: Any,
    ) -> None:
        self.config = config
        self.counter = counter
        self.tool_prefix = tool_prefix
        self.delay_s = delay_s

    def create(self, params: dict[str, Any]) -> SimpleNamespace:
        self.counter.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        message = self._reply(params.get("tools"))
        return SimpleNamespace(
            id=f"response{next(_response_ids)}",
            model="zero-latency",
            choices=[SimpleNamespace(message=message)],
            usage=SimpleNamespace(prompt_tokens=0, completion_tokens=0, total_tokens=0),
            cost=0.0,
        )

    def _reply(self, tools: list[dict[str, Any]] | None) -> Message:
        if self.tool_prefix is None:
            return {"role": "assistant", "content": "ok", "tool_calls": None, "function_call": None}
        prefix = self.tool_prefix
        name = next(t["function"]["name"] for t in tools or () if t["function"]["name"].startswith(prefix))
        call_id = f"call_{self.counter.calls}"
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}
        return {"role": "assistant", "content": None, "tool_calls": [call], "function_call": None}

    def message_retrieval(self, response: SimpleNamespace) -> list[str | Message]:
        return [
            choice.message if choice.message.get("tool_calls") else choice.message["content"]
            for choice in response.choices
        ]

    def cost(self, response: SimpleNamespace) -> float:
        return 0.0

    @staticmethod
    def get_usage(response: SimpleNamespace) -> dict[str, Any]:
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cost": 0.0, "model": "x"}


LLM_CONFIG = {
    "config_list": [{"model": "zero-latency", "model_client_cls": "ZeroLatencyClient"}],
    "cache_seed": None,
}


def _plug_in(agent: ConversableAgent, counter: CallCounter, **client_kwargs: Any) -> None:
    """Register the client on ``agent``, and again each time AG2 rebuilds the agent's client."""
    client_kwargs["counter"] = counter
    agent.register_model_client(ZeroLatencyClient, **client_kwargs)
    for method in ("update_tool_signature", "update_function_signature"):
        original = getattr(agent, method)

        def rebuild_then_register(*args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            result = _original(*args, **kwargs)
            if agent.client is not None and any(
                type(client).__name__ == "PlaceHolderClient" for client in agent.client._clients
            ):
                agent.client.register_model_client(ZeroLatencyClient, **client_kwargs)
            return result

        setattr(agent, method, rebuild_then_register)


def _agent(name: str, *, with_model: bool = True) -> ConversableAgent:
    return ConversableAgent(
        name,
        llm_config=LLM_CONFIG if with_model else False,
        human_input_mode="NEVER",
        max_consecutive_auto_reply=NO_LIMIT,
        default_auto_reply="go on",
    )


def two_agent_chat(turns: int) -> dict[str, Any]:
    """Two agents with models, ``max_turns=turns``: ``2 * turns - 1`` model calls."""
    user, assistant = _agent("user"), _agent("assistant")
    counter = CallCounter()
    _plug_in(user, counter)
    _plug_in(assistant, counter)
    with timed() as timing:
        result = user.initiate_chat(assistant, message="hello", max_turns=turns, silent=True)
    check("model calls", counter.calls, 2 * turns - 1)
    check("messages", len(result.chat_history), 2 * turns)
    return outcome(timing.cpu_s, timing.wall_s, counter.calls, messages=len(result.chat_history))


def _console(output: str | None) -> contextlib.AbstractContextManager[Any]:
    """AG2's own console, printing to ``output`` (see :func:`benchmarks.measure.printing_to`); for a
    silent workload (``None``), the discarding stream set at import."""
    if output is None:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(printing_or_silent(output))
    stack.enter_context(IOStream.set_default(IOConsole()))
    return stack


def swarm_ring(handoffs: int, *, output: str | None = None) -> dict[str, Any]:
    """Three agents hand off in a ring a -> b -> c -> a, each by calling its ``transfer_...`` tool;
    silent, or printed to ``output``."""
    agents = [_agent(name) for name in RING]
    for index, agent in enumerate(agents):
        target = agents[(index + 1) % len(agents)]
        register_hand_off(agent, ON_CONDITION(target, f"Hand the conversation to {target.name}."))
    counter = CallCounter()
    for agent in agents:
        _plug_in(agent, counter, tool_prefix="transfer")
    with _console(output), timed() as timing:
        # AG2 counts the tool executor's message as a round of its own; the first message is one too.
        result, _, _ = initiate_swarm_chat(agents[0], "start", agents, max_rounds=2 * handoffs + 1)
    tool_results = sum(1 for message in result.chat_history if message.get("role") == "tool")
    check("model calls", counter.calls, handoffs)
    check("tool results", tool_results, handoffs)
    callers = [message.get("name") for message in result.chat_history if message.get("tool_calls")]
    check("handoffs in ring order", sum(1 for i, name in enumerate(callers) if name == RING[i % 3]), handoffs)
    return outcome(
        timing.cpu_s,
        timing.wall_s,
        counter.calls,
        tool_results=tool_results,
        messages=len(result.chat_history),
    )


def first_chat(turns: int, *, output: str | None = None) -> dict[str, Any]:
    """The process's first chat (run without a warm-up): two agents with models, ``max_turns=turns``;
    silent, or printed to ``output``."""
    user, assistant = _agent("user"), _agent("assistant")
    counter = CallCounter()
    _plug_in(user, counter)
    _plug_in(assistant, counter)
    with _console(output), timed() as timing:
        result = user.initiate_chat(assistant, message="hello", max_turns=turns, silent=output is None)
    check("model calls", counter.calls, 2 * turns - 1)
    check("messages", len(result.chat_history), 2 * turns)
    return outcome(timing.cpu_s, timing.wall_s, counter.calls, messages=len(result.chat_history))


def group_chat(rounds: int) -> dict[str, Any]:
    """A round-robin group chat of three agents with models, ``max_round=rounds``: ``rounds - 1`` calls."""
    agents = [_agent(f"member_{index}") for index in range(3)]
    counter = CallCounter()
    for agent in agents:
        _plug_in(agent, counter)
    groupchat = GroupChat(agents, messages=[], max_round=rounds, speaker_selection_method="round_robin")
    manager = GroupChatManager(groupchat, llm_config=False)
    with timed() as timing:
        result = agents[0].initiate_chat(manager, message="start", silent=True)
    check("model calls", counter.calls, rounds - 1)
    check("messages", len(result.chat_history), rounds)
    return outcome(timing.cpu_s, timing.wall_s, counter.calls, messages=len(result.chat_history))


def _agent_with_tool(index: int, counter: CallCounter) -> ConversableAgent:
    agent = ConversableAgent(f"agent{index}", llm_config=LLM_CONFIG, human_input_mode="NEVER")
    register_function(lookup_weather, caller=agent, executor=agent, description=TOOL_DESCRIPTION)
    # After the tool: registering it rebuilt the agent's client, dropping any client registered before.
    agent.register_model_client(ZeroLatencyClient, counter=counter)
    return agent


def _tools_of(agent: ConversableAgent) -> list[Any]:
    return list(agent.llm_config.get("tools", []))


def create_agents(count: int) -> dict[str, Any]:
    """Create ``count`` agents, each offering and executing one tool: time and RSS growth."""
    counter = CallCounter()
    rss_before = rss_bytes()
    with timed() as timing:
        agents = [_agent_with_tool(index, counter) for index in range(count)]
    rss_delta = rss_bytes() - rss_before
    check("agents with a tool", sum(1 for agent in agents if _tools_of(agent)), count)
    return outcome(timing.cpu_s, timing.wall_s, count, rss_delta_bytes=rss_delta)


def create_agents_memory(count: int) -> dict[str, Any]:
    """Create ``count`` agents, each with one tool, under ``tracemalloc``: the memory they hold."""
    counter = CallCounter()
    with traced_memory() as memory:
        agents = [_agent_with_tool(index, counter) for index in range(count)]
    check("agents with a tool", sum(1 for agent in agents if _tools_of(agent)), count)
    return outcome(0.0, 0.0, count, retained_bytes=memory.retained_bytes, peak_bytes=memory.peak_bytes)


def concurrent_chats(chats: int) -> dict[str, Any]:
    """``chats`` two-agent chats at once on one event loop, each making ``STEPS_PER_CHAT`` model calls
    that wait ``MODEL_DELAY_S`` each (the user agent has no model; it answers with its auto-reply)."""
    counter = CallCounter()
    pairs = []
    for index in range(chats):
        user, assistant = _agent(f"user{index}", with_model=False), _agent(f"assistant{index}")
        _plug_in(assistant, counter, delay_s=MODEL_DELAY_S)
        pairs.append((user, assistant))

    async def run_all() -> list[Any]:
        chats_ = (
            user.a_initiate_chat(assistant, message="hello", max_turns=STEPS_PER_CHAT, silent=True)
            for user, assistant in pairs
        )
        return await asyncio.gather(*chats_)

    with timed() as timing:
        results = asyncio.run(run_all())
    check("model calls", counter.calls, chats * STEPS_PER_CHAT)
    check("messages", sum(len(result.chat_history) for result in results), chats * 2 * STEPS_PER_CHAT)
    return outcome(timing.cpu_s, timing.wall_s, counter.calls, chats=chats)


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
