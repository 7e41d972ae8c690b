"""AG2 0.13.4's side of the run_many benchmark: the same swarm ring, driven by ``asyncio.gather`` with a
semaphore of ``concurrency`` (AG2 has no batch runner). Run with AG2's interpreter.

AG2's agents keep a chat's state, so each chat gets agents of its own. AG2 runs its (synchronous) model
clients in the event loop's default executor: it gets one thread per concurrent chat, its best case.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from autogen.agentchat.contrib.swarm_agent import a_initiate_swarm_chat

from benchmarks.spec import MODEL_DELAY_S, RING, STEPS_PER_CHAT, check
from benchmarks.workloads_ag2 import ON_CONDITION, CallCounter, _agent, _plug_in, register_hand_off


async def _chat(counter: CallCounter) -> int:
    agents = [_agent(name) for name in RING]
    for index, agent in enumerate(agents):
        target = agents[(index + 1) % len(agents)]
        register_hand_off(agent, ON_CONDITION(target, f"Hand the conversation to {target.name}."))
    for agent in agents:
        _plug_in(agent, counter, tool_prefix="transfer", delay_s=MODEL_DELAY_S)
    # AG2 counts the tool executor's message as a round of its own; the first message is one too.
    result, _, _ = await a_initiate_swarm_chat(agents[0], "start", agents, max_rounds=2 * STEPS_PER_CHAT + 1)
    return len(result.chat_history)


def run(chats: int, concurrency: int) -> dict[str, Any]:
    counter = CallCounter()

    async def run_all() -> list[int]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(concurrency))
        slots = asyncio.Semaphore(concurrency)

        async def one() -> int:
            async with slots:
                return await _chat(counter)

        return await asyncio.gather(*(one() for _ in range(chats)))

    cpu, wall = time.process_time(), time.perf_counter()
    lengths = asyncio.run(run_all())
    wall_s, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    check("model calls", counter.calls, chats * STEPS_PER_CHAT)
    check("tool results per chat", min(lengths), max(lengths))
    return {"wall_s": wall_s, "cpu_s": cpu_s}


if __name__ == "__main__":
    chats, concurrency = int(sys.argv[1]), int(sys.argv[2])
    figures = run(chats, concurrency)
    with open("/proc/self/status") as status:
        figures["peak_rss_bytes"] = int(next(x for x in status if x.startswith("VmHWM:")).split()[1]) * 1024
    print(json.dumps(figures))
