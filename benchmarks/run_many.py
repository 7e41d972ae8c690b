"""The run_many scale benchmark: many swarm chats of ``STEPS_PER_CHAT`` model calls against a model that
waits ``MODEL_DELAY_S`` per call, on the local runner, on the Ray runner (a local Ray of 2 CPUs), and on
AG2 0.13.4 driven by ``asyncio.gather``, each in a fresh process.

    python -m benchmarks.run_many                      # 10,000 chats at concurrency 1,000; AG2 at 1,000 chats
    python -m benchmarks.run_many --chats 2000 --only local ray

The ideal wall time is every model call's wait, ``concurrency`` at a time:
``chats * STEPS_PER_CHAT * MODEL_DELAY_S / concurrency``. Goals: the local runner within 1.5x of it, the
Ray runner within 2x plus its start-up (its actors starting and stopping, measured on a run of two
items; starting Ray itself, which the user does once, is reported apart). Peak memory is each process's
VmHWM; for Ray, the driver's and the largest actor's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.spec import MODEL_DELAY_S, STEPS_PER_CHAT

ROOT = Path(__file__).resolve().parent.parent
AG2_PYTHON = "/work/scratch/ag2-venv/bin/python"
GOALS = {"local": 1.5, "ray": 2.0}


def ideal_s(chats: int, concurrency: int) -> float:
    return chats * STEPS_PER_CHAT * MODEL_DELAY_S / concurrency


def run_local(chats: int, concurrency: int) -> dict[str, Any]:
    """In this process: the local runner over ``chats`` chats."""
    from benchmarks.run_many_workload import MESSAGES_PER_CHAT, model_calls, peak_rss_bytes, ring, swarm_chat
    from benchmarks.spec import check
    from parley import run_many

    ring()
    calls_before = model_calls()
    cpu, wall = time.process_time(), time.perf_counter()
    outcomes = run_many(swarm_chat, range(chats), concurrency=concurrency, progress=False)
    wall_s, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    check("chats that ended well", sum(outcome.ok for outcome in outcomes), chats)
    check("messages", sum(outcome.value[0] for outcome in outcomes), chats * MESSAGES_PER_CHAT)
    check("model calls", model_calls() - calls_before, chats * STEPS_PER_CHAT)
    return {"wall_s": wall_s, "cpu_s": cpu_s, "peak_rss_bytes": peak_rss_bytes()}


def run_ray(chats: int, concurrency: int) -> dict[str, Any]:
    """In this process: start a local Ray of 2 CPUs, then the Ray runner over ``chats`` chats."""
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    import ray

    from benchmarks.run_many_workload import MESSAGES_PER_CHAT, nothing, peak_rss_bytes, swarm_chat
    from benchmarks.spec import check
    from parley import run_many

    started = time.perf_counter()
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        object_store_memory=200 * 1024 * 1024,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}},
        log_to_driver=False,
    )
    init_s = time.perf_counter() - started
    started = time.perf_counter()
    run_many(nothing, range(2), concurrency=2, runner="ray", progress=False)  # actors start and stop
    actors_s = time.perf_counter() - started
    cpu, wall = time.process_time(), time.perf_counter()
    outcomes = run_many(swarm_chat, range(chats), concurrency=concurrency, runner="ray", progress=False)
    wall_s, cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    ray.shutdown()
    check("chats that ended well", sum(outcome.ok for outcome in outcomes), chats)
    check("messages", sum(outcome.value[0] for outcome in outcomes), chats * MESSAGES_PER_CHAT)
    actor_peaks: dict[int, int] = {}
    for outcome in outcomes:
        _, pid, peak = outcome.value
        actor_peaks[pid] = max(actor_peaks.get(pid, 0), peak)
    return {
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "ray_init_s": init_s,
        "actors_start_s": actors_s,
        "actors": len(actor_peaks),
        "peak_rss_bytes": peak_rss_bytes(),
        "actor_peak_rss_bytes": max(actor_peaks.values()),
    }


def measure(runner: str, chats: int, concurrency: int, ag2_python: str) -> dict[str, Any]:
    """One runner's figures, from a fresh process."""
    if runner == "ag2":
        command = [ag2_python, "-m", "benchmarks.run_many_ag2", str(chats), str(concurrency)]
    else:
        command = [sys.executable, "-m", "benchmarks.run_many", "--worker", runner]
        command += ["--chats", str(chats), "--concurrency", str(concurrency)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=environment)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    ideal = ideal_s(chats, concurrency)
    figures.update(runner=runner, chats=chats, concurrency=concurrency, ideal_s=ideal)
    figures["ratio"] = figures["wall_s"] / ideal
    figures["chats_per_s"] = chats / figures["wall_s"]
    return figures


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| runner | chats | concurrency | wall | ideal | wall / ideal | goal | chats/s | CPU (driver) "
        "| peak memory |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        goal = "-"
        if row["runner"] == "local":
            goal = f"1.5x: {'met' if row['ratio'] <= GOALS['local'] else 'missed'}"
        elif row["runner"] == "ray":
            allowed = GOALS["ray"] * row["ideal_s"] + row["actors_start_s"]
            goal = f"2x + start-up ({allowed:.1f} s): {'met' if row['wall_s'] <= allowed else 'missed'}"
        memory = f"{row['peak_rss_bytes'] / 2**20:.0f} MiB"
        if "actor_peak_rss_bytes" in row:
            memory += f" driver, {row['actor_peak_rss_bytes'] / 2**20:.0f} MiB per actor ({row['actors']})"
        lines.append(
            f"| {row['runner']} | {row['chats']:,} | {row['concurrency']:,} | {row['wall_s']:.2f} s | "
            f"{row['ideal_s']:.2f} s | {row['ratio']:.2f}x | {goal} | {row['chats_per_s']:,.0f} | "
            f"{row['cpu_s']:.2f} s | {memory} |"
        )
    for row in rows:
        if row["runner"] == "ray":
            lines.append(
                f"\nRay start-up: ray.init {row['ray_init_s']:.1f} s, starting and stopping its actors "
                f"{row['actors_start_s']:.1f} s (the Ray run's wall time includes starting its own)."
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chats", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=1_000)
    parser.add_argument("--ag2-chats", type=int, default=1_000, help="AG2's size (it is much slower)")
    parser.add_argument("--only", nargs="+", choices=["local", "ray", "ag2"], default=["local", "ray", "ag2"])
    parser.add_argument("--ag2-python", default=AG2_PYTHON)
    parser.add_argument("--worker", choices=["local", "ray"], help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        run = run_local if arguments.worker == "local" else run_ray
        print(json.dumps(run(arguments.chats, arguments.concurrency)))
        return
    rows = []
    for runner in arguments.only:
        chats = arguments.ag2_chats if runner == "ag2" else arguments.chats
        rows.append(measure(runner, chats, arguments.concurrency, arguments.ag2_python))
        print(f"{runner}: {rows[-1]['wall_s']:.2f} s", file=sys.stderr, flush=True)
    print(report(rows))


if __name__ == "__main__":
    main()
