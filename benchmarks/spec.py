"""What the workloads are, framework-neutrally: sizes, constants, the tool every agent gets, checks.

Both ``workloads_parley`` and ``workloads_ag2`` read their parameters from here, so that the two
frameworks run the same workload; nothing in this module knows either framework.
"""

from __future__ import annotations

from typing import Annotated, Any

#: Model calls in each chat of the concurrency workload, and how long each call waits.
STEPS_PER_CHAT = 10
MODEL_DELAY_S = 0.02
#: The best wall time the concurrency workload can have: its chats' model calls one after another.
IDEAL_CONCURRENT_WALL_S = STEPS_PER_CHAT * MODEL_DELAY_S

#: Model calls of each swarm of the shared-agents workload (each waits ``MODEL_DELAY_S``).
SHARED_SWARM_STEPS = 10

#: A limit no workload reaches, for ``max_consecutive_auto_reply``.
NO_LIMIT = 10**9

#: The names of the three agents of the swarm ring: each hands off to the next, the last to the first.
RING = ("agent_a", "agent_b", "agent_c")

#: The size each worker process runs a workload at once, unmeasured, before the measured run; 0 for the
#: workloads that measure the process's first chat, which have no warm-up.
WARMUP_SIZE = {
    "chat": 2,
    "swarm": 3,
    "groupchat": 4,
    "agents": 1,
    "agents_memory": 1,
    "concurrent": 2,
    "swarm_silent": 3,
    "swarm_file": 3,
    "swarm_tty": 3,
    "start_silent": 0,
    "start_file": 0,
    "start_tty": 0,
    "chat_sqlite": 2,
    "chat_postgres": 2,
    "resume": 4,
    "shared_swarms": 2,
    "tool_chat": 2,
    "tool_chat_limits": 2,
    "tool_chat_paired": 2,
    "tool_chat_budgets": 2,
    "tool_chat_timeout": 2,
}


def lookup_weather(city: Annotated[str, "The city to look up."]) -> str:
    """Look up today's weather in a city."""
    return f"Sunny in {city}."


TOOL_DESCRIPTION = "Look up today's weather in a city."


class WorkloadMismatch(AssertionError):
    """A framework did different work than the workload prescribes (so its figures would mislead)."""


def check(what: str, actual: int, expected: int) -> None:
    """Fail unless a workload did exactly the prescribed amount of work."""
    if actual != expected:
        raise WorkloadMismatch(f"{what}: expected {expected}, got {actual}")


def outcome(cpu_s: float, wall_s: float, steps: int, **extra: Any) -> dict[str, Any]:
    """One workload run's figures, as a worker reports them."""
    return {"cpu_s": cpu_s, "wall_s": wall_s, "steps": steps, **extra}
