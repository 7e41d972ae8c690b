"""Run one workload of one framework, in this fresh process, and print its figures as one JSON line.

``python -m benchmarks.worker FRAMEWORK WORKLOAD N``: FRAMEWORK is ``parley`` or ``ag2``, WORKLOAD a key
of the framework module's ``WORKLOADS``. The workload runs once at a small size first (unmeasured), so
that lazily loaded code and first-call caches are not charged to the measured run, except the
workloads that measure a process's first chat. The per-step
workloads then run several times in the process, until they have used ``REPEAT_CPU_S`` of CPU time
(at least ``MIN_REPEATS`` and at most ``MAX_REPEATS`` runs), and each figure is the median of those runs:
a short run alone is at the mercy of a cold cache or a garbage collection.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import sys
from collections.abc import Callable
from typing import Any

from benchmarks.spec import WARMUP_SIZE

FRAMEWORKS = ("parley", "ag2")
#: The workloads measured per model step, which run repeatedly in one process.
REPEATED = frozenset(
    {
        "chat",
        "swarm",
        "groupchat",
        "swarm_silent",
        "swarm_file",
        "swarm_tty",
        "chat_sqlite",
        "chat_postgres",
        "tool_chat",
        "tool_chat_limits",
        "tool_chat_paired",
        "tool_chat_budgets",
        "tool_chat_timeout",
    }
)
REPEAT_CPU_S = 0.1
MIN_REPEATS = 3
MAX_REPEATS = 50


def workloads(framework: str, needed: str | None = None) -> dict[str, Callable[[int], dict[str, Any]]]:
    """The workload functions of ``framework`` (importing it). The durable workloads, whose module imports
    more (stores, pydantic), are added only when ``needed`` is one of them or is not given, so that they
    weigh on no other workload's process."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; known: {FRAMEWORKS}")
    module = importlib.import_module(f"benchmarks.workloads_{framework}")
    table: dict[str, Callable[[int], dict[str, Any]]] = dict(module.WORKLOADS)
    if framework == "parley" and (needed is None or needed not in table):
        table.update(importlib.import_module("benchmarks.workloads_durable").WORKLOADS)
    return table


def run(framework: str, workload: str, size: int, *, warmup: bool = True) -> dict[str, Any]:
    """Run ``workload`` at ``size`` (after a warm-up run) and return its figures.

    A per-step workload runs repeatedly (see the module's docstring); its figures are the medians, and
    ``runs`` says how many runs there were. A workload whose single run takes longer than
    ``REPEAT_CPU_S`` runs once.
    """
    function = workloads(framework, workload)[workload]
    if warmup and WARMUP_SIZE[workload]:
        function(WARMUP_SIZE[workload])
    runs = [function(size)]
    if workload in REPEATED:
        while len(runs) < MAX_REPEATS and (
            (len(runs) < MIN_REPEATS and runs[0]["cpu_s"] < REPEAT_CPU_S)
            or sum(run["cpu_s"] for run in runs) < REPEAT_CPU_S
        ):
            runs.append(function(size))
    figures = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    figures["runs"] = len(runs)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("framework", choices=FRAMEWORKS)
    parser.add_argument("workload", choices=sorted(WARMUP_SIZE))
    parser.add_argument("size", type=int)
    arguments = parser.parse_args(argv)
    figures = run(arguments.framework, arguments.workload, arguments.size)
    sys.stdout.write(json.dumps(figures) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
