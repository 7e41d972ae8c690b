"""The benchmark harness works: each parley workload runs at a tiny size and does the prescribed work,
and the table is built from figures. No timing is asserted: the goals are checked by ./scripts/bench."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root holds benchmarks/

from benchmarks import report, run, worker
from benchmarks.measure import fresh_process, printing_to
from benchmarks.spec import SHARED_SWARM_STEPS, STEPS_PER_CHAT, WorkloadMismatch, check


@pytest.mark.parametrize(
    ("workload", "size", "steps"),
    [
        ("chat", 3, 5),
        ("swarm", 4, 4),
        ("groupchat", 5, 4),
        ("agents", 3, 3),
        ("agents_memory", 3, 3),
        ("concurrent", 2, 2 * STEPS_PER_CHAT),
        ("swarm_silent", 2, 2),
        ("swarm_file", 3, 3),
        ("swarm_tty", 3, 3),
        ("start_silent", 1, 1),
        ("start_file", 2, 3),
        ("start_tty", 1, 1),
        ("chat_sqlite", 3, 5),
        ("resume", 20, 1),
        ("shared_swarms", 3, 3 * SHARED_SWARM_STEPS),
        ("tool_chat", 3, 3),
        ("tool_chat_limits", 3, 3),
        ("tool_chat_paired", 3, 3),
    ],
)
def test_each_parley_workload_runs_and_does_the_prescribed_work(workload: str, size: int, steps: int):
    figures = worker.run("parley", workload, size)

    assert figures["steps"] == steps
    assert figures["cpu_s"] >= 0 and figures["wall_s"] >= 0


def test_the_swarm_ring_executes_one_tool_call_per_handoff():
    figures = worker.run("parley", "swarm", 6, warmup=False)

    assert figures["tool_results"] == 6


def test_the_memory_workload_reports_what_the_agents_hold():
    figures = worker.run("parley", "agents_memory", 10, warmup=False)

    assert 0 < figures["retained_bytes"] <= figures["peak_bytes"]


def test_a_workload_that_does_other_work_than_prescribed_fails():
    with pytest.raises(WorkloadMismatch, match="model calls: expected 3, got 2"):
        check("model calls", 2, 3)


def test_a_fresh_process_reports_cpu_wall_time_and_its_own_peak_rss():
    figures = fresh_process(sys.executable, "import parley")

    assert figures["cpu_s"] > 0 and figures["wall_s"] > 0
    assert 0 < figures["maxrss_bytes"] < 1024**3


def test_the_table_shows_both_frameworks_their_ratio_and_whether_goals_are_met():
    plan = run.full_plan()
    figures: report.Figures = {
        ("parley", "chat", 10): {"cpu_s": 19e-5, "steps": 19},  # 10 us per step
        ("ag2", "chat", 10): {"cpu_s": 19e-4, "steps": 19},  # 100 us per step
        ("parley", "chat", 1000): {"cpu_s": 1999 * 30e-6, "steps": 1999},  # 30 us per step
        ("parley", "import", 0): {"cpu_s": 0.05, "wall_s": 0.06, "maxrss_bytes": 20 * report.MiB},
        ("python", "import", 0): {"cpu_s": 0.01, "wall_s": 0.01, "maxrss_bytes": 9 * report.MiB},
    }

    rows = {row.label: row for row in run.build_rows(figures, plan)}

    small = rows["two-agent chat, 10 turns: CPU per step"]
    assert (small.parley, small.ag2, small.ratio, small.met) == pytest.approx((10, 100, 10, True))
    assert rows["two-agent chat, 1000 turns: CPU per step"].met is False
    assert rows["two-agent chat, N turns: CPU per step at N=1000 / at N=10"].parley == pytest.approx(3)
    assert rows["import (fresh process): peak RSS, net of bare python"].parley == pytest.approx(11)
    assert "two-agent chat, 100 turns: CPU per step" not in rows  # nothing measured
    text = report.table(list(rows.values()))
    assert " 10.0 us |" in text and "10.0x" in text and "**NO**" in text


def test_results_markdown_names_the_machine_and_the_misses():
    rows = [report.Row("swarm ring, 1000 handoffs: CPU per handoff", "us", 30.0, 900.0, report.STEP_GOAL)]
    machine = report.machine()

    text = report.results_markdown(rows, machine, 60.0, "7 runs")

    assert machine["cpu"] in text and machine["python"] in text
    assert "parley meets 0 of 1 goals" in text
    assert "- swarm ring, 1000 handoffs: CPU per handoff: 30.0 us (goal ≤ 20 us)" in text


def test_printing_to_a_file_or_a_terminal_sends_stdout_there():
    with printing_to("file"):
        assert not sys.stdout.isatty()
        print("to the file")
    with printing_to("tty"):
        assert sys.stdout.isatty() and sys.stdout.line_buffering
        print("to the terminal")
    with pytest.raises(ValueError, match="unknown output 'screen'"), printing_to("screen"):
        pass


def test_the_console_rows_compare_printed_and_silent_and_check_the_goals():
    figures: report.Figures = {
        ("parley", "swarm_file", 10): {"cpu_s": 10 * 25e-6, "steps": 10},
        ("parley", "swarm_silent", 10): {"cpu_s": 10 * 20e-6, "steps": 10},
        ("ag2", "swarm_file", 10): {"cpu_s": 10 * 400e-6, "steps": 10},
        ("ag2", "swarm_silent", 10): {"cpu_s": 10 * 300e-6, "steps": 10},
        ("parley", "swarm_tty", 1000): {"cpu_s": 1000 * 40e-6, "steps": 1000},
        ("parley", "swarm", 1000): {"cpu_s": 1000 * 15e-6, "steps": 1000},
        ("parley", "start_file", 1): {"cpu_s": 0.0005, "steps": 1},
    }
    sizes = {"swarm_file": [10], "swarm_silent": [10], "swarm_tty": [1000], "start_file": [1]}

    rows = {row.label: row for row in report.console_rows(figures, sizes)}

    printed = rows["swarm ring, 10 handoffs, printed to a file: CPU per handoff"]
    assert (printed.parley, printed.ag2, printed.met) == pytest.approx((25, 400, True))
    added = rows["swarm ring, 10 handoffs: what printing to a file adds per handoff"]
    assert (added.parley, added.ag2) == pytest.approx((5, 100))
    assert rows["swarm ring, 1000 handoffs, printed at a terminal (pty): CPU per handoff"].met is False
    # the silent ring at 1000 handoffs is the "swarm" workload
    assert rows["swarm ring, 1000 handoffs, silent: CPU per handoff"].parley == pytest.approx(15)
    first = rows["a process's first chat (1 turn), printed to a file: CPU time"]
    assert (first.parley, first.met) == pytest.approx((0.5, True))


def test_the_console_workloads_are_in_the_full_and_the_quick_plan():
    for plan in (run.full_plan(), run.quick_plan()):
        assert {case.workload for case in plan.cases} >= run.CONSOLE
