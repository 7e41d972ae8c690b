"""How the benchmark measures, and what each workload is: the prose of RESULTS.md."""

from __future__ import annotations

import os
import textwrap

from benchmarks.spec import IDEAL_CONCURRENT_WALL_S, MODEL_DELAY_S, STEPS_PER_CHAT

WIDTH = 104


def _bullets(items: list[str]) -> str:
    return "\n".join(
        textwrap.fill(" ".join(item.split()), WIDTH, initial_indent="- ", subsequent_indent="  ")
        for item in items
    )


def method(repeats: str) -> str:
    """The "how it is measured" and "workloads" sections; ``repeats`` says how many runs there were."""
    threads = min(32, (os.cpu_count() or 1) + 4)
    calls = 1000 * STEPS_PER_CHAT
    measured = [
        """**CPU time** (`time.process_time`: the process's user and system time, every thread included)
        is the main figure, because these machines are shared: other work slows wall time but is not
        charged to CPU time. Wall time is reported where waiting is the point (imports, concurrent
        chats).""",
        """Every run of a workload is a **fresh process** for one framework (`python -m
        benchmarks.worker FRAMEWORK WORKLOAD N`), so neither framework's imports, caches or memory
        weigh on the other. In that process the workload first runs once at a tiny size, unmeasured
        (lazy imports, first-call caches); only the chat itself is timed, not the creation of its
        agents.""",
        f"**Medians**: {repeats}.",
        """**Cold caches**: before each measured run, `gc.collect()` collects what earlier runs left,
        so that it is not charged to the run. A full collection walks every object of the process, so
        each run starts with the CPU's caches holding none of the chat's code and data, as a chat does
        after other work. At the small sizes that is much of the figure: a 10-round group chat took
        0.58-0.64 ms after a collection, 0.24 ms when run again at once without one, and 0.80 ms after
        copying 32 MiB (which only empties the caches), on one of these machines. At 1000 steps the
        cold start is spread over the steps.""",
        """The **model** answers at once and does next to no work. In parley it is a class with
        `create` and `a_create` returning `parley.models.ModelResponse`, passed as `llm_config=`. In
        AG2 it is a custom `ModelClient` named in `llm_config`'s `config_list` (`model_client_cls`) and
        registered with `register_model_client`; AG2 rebuilds an agent's client whenever its tools
        change (its classic swarm does so every turn), so the benchmark registers it again after each
        rebuild. Both frameworks thus run their real reply path: the reply-function chain, the model
        wrapper, tool execution.""",
        """**Same work**: every run checks that each framework made exactly the prescribed number of
        model calls, tool executions and messages, and fails otherwise.""",
        """**Silent**: parley chats run with `silent=True`; AG2's chats too where its API has the
        parameter, and AG2's console IOStream is replaced by one that discards output (AG2 still
        builds its print events), and its INFO logging is off. Printing is measured only by the
        console's workloads, where each framework prints with its own console.""",
        """**Goals** apply to parley's figures. The per-step goal applies at every size: at the small
        sizes the per-chat setup is spread over few steps.""",
    ]
    workloads = [
        """**two-agent chat, N turns**: two agents with models, `initiate_chat(max_turns=N)`: 2N
        messages, 2N - 1 model calls. A step is one model call, and one message.""",
        """**swarm ring, N handoffs**: three agents a → b → c → a in a classic swarm; every model reply
        is a call of the agent's `transfer_...` tool (parley: `register_hand_off(agent,
        ON_CONDITION(next, ...))`; AG2 0.13.4: the same from `autogen.agentchat.contrib.swarm_agent`).
        The figure is **CPU per handoff: one model call and the execution of its tool call**. The
        frameworks count rounds differently (parley counts an agent's tool call and its result as one
        round, AG2 counts its tool executor's message as a round of its own), so parley runs
        `max_rounds=N + 1` and AG2 `max_rounds=2N + 1`: both make N model calls and N tool
        executions, and send 2N + 1 messages.""",
        """**round-robin group chat, N rounds**: three agents with models and a `GroupChatManager`
        without one, `speaker_selection_method="round_robin"`, `max_round=N`: N messages, N - 1 model
        calls.""",
        """**create 1000 agents with a tool each**: `ConversableAgent(f"agent{i}",
        llm_config=<model>)` and `register_function(tool, caller=agent, executor=agent)`, the same
        function for each (AG2 also needs `register_model_client` after the tool is registered). CPU
        time in one run; the Python memory the agents hold (tracemalloc) in another, since tracing
        slows everything; RSS growth is shown too.""",
        """**swarm ring, printed**: the swarm ring above, printed by each framework's own console
        (parley's default printer; AG2's `IOConsole`) to a file on disk, or to a pseudo-terminal
        (line-buffered, as a terminal is, with `TERM=xterm-256color`, read by a `cat` process so
        that writes never wait): CPU per handoff. The silent ring is measured at 10 handoffs for the
        comparison (at 1000 it is the swarm ring's figure). What printing adds is the printed figure
        less the silent one.""",
        """**a process's first chat**: the first two-agent chat of a fresh process, one turn (two
        messages, one model call), with no warm-up run, so that whatever printing loads the first time
        is counted: CPU time, printed to a file, at a pseudo-terminal, and silent.""",
        """**import**: `python -c "import parley"` and `python -c "import autogen"`, each in fresh
        processes: CPU time and wall time of the process, and its peak RSS (`VmHWM`, which the process
        prints last; the `ru_maxrss` a parent gets for a child cannot be used on Linux, which carries
        the parent's peak across the child's `execve`), raw and net of a bare `python -c pass`, with
        the same interpreter and environment. Both frameworks import from compiled bytecode, as installed
        packages do (`./scripts/bench` compiles parley's editable sources first). The goals apply to the
        raw figures.""",
        """**budgets and a time limit**: a two-agent chat of 1000 turns, each a model call that calls a
        tool and the tool's result, plain and with `MaxTokens | MaxCost | MaxTime` and a 5 s time limit
        on the tool: CPU per turn. The two chats run alternately in one process, three times each, and
        each figure is the median of its three, so that both are measured at the same speed of the
        machine.""",
        f"""**1000 concurrent chats**: `asyncio.gather` of 1000 `a_initiate_chat(...,
        max_turns={STEPS_PER_CHAT})`, each between an agent without a model (it answers with its
        auto-reply) and one whose model waits {MODEL_DELAY_S * 1e3:.0f} ms per call: exactly
        {STEPS_PER_CHAT} model calls per chat, so the ideal wall time is {IDEAL_CONCURRENT_WALL_S:.1f} s.
        parley's model awaits `asyncio.sleep`. AG2's model clients are synchronous, and AG2's
        `a_generate_oai_reply` runs them in the event loop's default thread pool ({threads} threads on
        this machine), so its model sleeps with `time.sleep` in those threads, which is how AG2 runs
        any model client in an async chat: {calls} calls of {MODEL_DELAY_S * 1e3:.0f} ms on {threads}
        threads take at least {calls * MODEL_DELAY_S / threads:.0f} s.""",
    ]
    return "\n".join(
        ["## How it is measured", "", _bullets(measured), "", "## The workloads", "", _bullets(workloads)]
    )
