"""parley's side of the run_many benchmark: a swarm of three agents handing off in a ring, each handoff
one model call that waits on the event loop, shared by every chat of the process.

Importable by Ray's workers (the benchmark puts the repository root on their path).
"""

from __future__ import annotations

import os

from benchmarks.spec import MODEL_DELAY_S, RING, STEPS_PER_CHAT
from benchmarks.workloads_parley import ZeroLatencyModel, _agent
from parley import ON_CONDITION, ConversableAgent, a_initiate_swarm_chat, register_hand_off

#: Messages a chat of the ring has: the first one, then a tool call and its result per step.
MESSAGES_PER_CHAT = 1 + 2 * STEPS_PER_CHAT

_ring: tuple[list[ConversableAgent], list[ZeroLatencyModel]] | None = None


def ring() -> tuple[list[ConversableAgent], list[ZeroLatencyModel]]:
    """The process's three agents and their models (built on first use)."""
    global _ring
    if _ring is None:
        models = [ZeroLatencyModel(tool_prefix="transfer", delay_s=MODEL_DELAY_S) for _ in RING]
        agents = [_agent(name, model) for name, model in zip(RING, models, strict=True)]
        for index, agent in enumerate(agents):
            target = agents[(index + 1) % len(agents)]
            register_hand_off(agent, ON_CONDITION(target, f"Hand the conversation to {target.name}."))
        _ring = agents, models
    return _ring


def peak_rss_bytes() -> int:
    """This process's peak resident set size so far (VmHWM, Linux)."""
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


async def swarm_chat(index: int) -> tuple[int, int, int]:
    """One chat of ``STEPS_PER_CHAT`` handoffs: its message count, the process id, and (every 100th item)
    the process's peak memory so far."""
    agents, _ = ring()
    result, _, _ = await a_initiate_swarm_chat(
        agents[0], "start", agents, max_rounds=STEPS_PER_CHAT + 1, silent=True
    )
    return len(result.chat_history), os.getpid(), peak_rss_bytes() if index % 100 == 0 else 0


def model_calls() -> int:
    """Model calls made in this process."""
    return sum(model.calls for model in ring()[1])


async def nothing(index: int) -> int:
    return index
