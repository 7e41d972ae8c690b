"""The run_many benchmark's harness works: the local runner's side runs at a tiny size and does the
prescribed work, and the table reads its figures. No timing is asserted (the goals live in the
benchmark itself)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root holds benchmarks/

from benchmarks import run_many as benchmark


def test_the_local_side_runs_and_checks_the_work_it_did():
    figures = benchmark.run_local(chats=20, concurrency=10)

    assert figures["wall_s"] > 0 and figures["cpu_s"] > 0
    assert figures["peak_rss_bytes"] > 0


def test_the_table_shows_each_runner_against_the_ideal_and_its_goal():
    local = {"runner": "local", "chats": 10_000, "concurrency": 1_000, "wall_s": 2.5, "cpu_s": 2.0}
    ray = {
        "runner": "ray",
        "chats": 10_000,
        "concurrency": 1_000,
        "wall_s": 9.0,
        "cpu_s": 0.5,
        "ray_init_s": 8.0,
        "actors_start_s": 6.0,
        "actors": 2,
        "actor_peak_rss_bytes": 2**27,
    }
    for row in (local, ray):
        row.update(peak_rss_bytes=2**26, ideal_s=2.0, ratio=row["wall_s"] / 2.0, chats_per_s=4000.0)

    table = benchmark.report([local, ray])

    assert "| local | 10,000 | 1,000 | 2.50 s | 2.00 s | 1.25x | 1.5x: met |" in table
    assert "| ray | 10,000 | 1,000 | 9.00 s | 2.00 s | 4.50x | 2x + start-up (10.0 s): met |" in table
    assert "64 MiB driver, 128 MiB per actor (2)" in table
    assert "ray.init 8.0 s" in table
