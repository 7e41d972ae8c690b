"""Run every workload on parley and on AG2 0.13.4, print one table, and write ``RESULTS.md``.

Each run of a workload is a fresh process (``benchmarks.worker``), so that one framework's imports,
caches and memory never weigh on the other's figures; a figure is the median of several runs. Run it
through ``./scripts/bench``, which sets up the environment holding both frameworks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.measure import fresh_process

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
PROFILES = ROOT / "benchmarks" / "profiles"
FRAMEWORKS = ("parley", "ag2")
REPEATS_TEXT = (
    "7 worker processes for parley and 5 for AG2 (3 for AG2 at the largest sizes and for the agents and "
    "the concurrent chats, where AG2 is slow; 3 each for the memory figure; 5 for parley's concurrent "
    "chats). In each process, a per-step workload runs repeatedly until it has used 0.1 s of CPU time "
    "(3 to 50 runs; once if one run takes longer) and the process reports the median run. "
    "The console's workloads: 7 processes for parley, 5 for AG2 (1 for the printed swarm ring at 1000 "
    "handoffs, where one run takes AG2 about 30 s of CPU time). "
    "Imports: 9 fresh processes each"
)
IMPORTS = {"python": "pass", "parley": "import parley", "ag2": "import autogen"}


@dataclass(frozen=True)
class Case:
    """One workload at one size, and how many runs each framework gets."""

    workload: str
    size: int
    repeats: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Plan:
    """Everything one invocation measures."""

    cases: list[Case]
    import_repeats: int
    agents: int
    chats: int
    quick: bool

    def sizes(self) -> dict[str, list[int]]:
        found: dict[str, list[int]] = {}
        for case in self.cases:
            found.setdefault(case.workload, []).append(case.size)
        return found


def full_plan() -> Plan:
    """The committed figures: three sizes per step workload, fewer AG2 runs where AG2 is slow."""
    cases = []
    for workload, sizes in (
        ("chat", (10, 100, 1000)),
        ("swarm", (20, 100, 1000)),
        ("groupchat", (10, 100, 1000)),
    ):
        for size in sizes:
            cases.append(Case(workload, size, {"parley": 7, "ag2": 3 if size >= 1000 else 5}))
    cases += [
        Case("agents", 1000, {"parley": 7, "ag2": 3}),
        Case("agents_memory", 1000, {"parley": 3, "ag2": 3}),
        Case("concurrent", 1000, {"parley": 5, "ag2": 3}),
        *console_cases(),
        *durable_cases(),
    ]
    return Plan(cases, import_repeats=9, agents=1000, chats=1000, quick=False)


def durable_cases() -> list[Case]:
    """parley's own workloads: durable chats (SQLite; PostgreSQL when ``PARLEY_BENCH_POSTGRES_URL`` names a
    server), resuming, many swarms over one set of agents, and budgets with time limits."""
    import os

    parley = {"parley": 5}
    cases = [
        Case("chat_sqlite", 50, {"parley": 3}),
        Case("chat_sqlite", 100, parley),
        Case("chat_sqlite", 1000, parley),
        Case("chat_sqlite", 5000, {"parley": 3}),
        Case("resume", 10_000, parley),
        Case("shared_swarms", 1000, parley),
        Case("tool_chat_paired", 1000, parley),
    ]
    if os.environ.get("PARLEY_BENCH_POSTGRES_URL"):
        cases.append(Case("chat_postgres", 1000, parley))
    return cases


def console_cases(*, quick: bool = False) -> list[Case]:
    """The console's workloads: the swarm ring printed to a file and at a terminal, at 10 and 1000
    handoffs, silent at 10 (the "swarm" workload has it at 1000), and a process's first chat of one
    turn, printed and silent."""
    if quick:
        one = {"parley": 1, "ag2": 1}
        return [Case(workload, size, one) for workload, size in (*_CONSOLE_SWARMS[:3], *_CONSOLE_STARTS)]
    cases = [
        Case(workload, size, {"parley": 7, "ag2": 1 if size >= 1000 else 5})
        for workload, size in _CONSOLE_SWARMS
    ]
    return cases + [Case(workload, size, {"parley": 7, "ag2": 5}) for workload, size in _CONSOLE_STARTS]


_CONSOLE_SWARMS = (
    ("swarm_silent", 10),
    ("swarm_file", 10),
    ("swarm_tty", 10),
    ("swarm_file", 1000),
    ("swarm_tty", 1000),
)
_CONSOLE_STARTS = (("start_silent", 1), ("start_file", 1), ("start_tty", 1))
CONSOLE = frozenset(workload for workload, _ in (*_CONSOLE_SWARMS, *_CONSOLE_STARTS))
"""The workloads ``--only console`` runs."""


def quick_plan() -> Plan:
    """A smoke run: small sizes, one run each; its figures are not comparable with the goals."""
    one = {"parley": 1, "ag2": 1}
    cases = [
        Case("chat", 10, one),
        Case("chat", 100, one),
        Case("swarm", 20, one),
        Case("swarm", 100, one),
        Case("groupchat", 10, one),
        Case("groupchat", 100, one),
        Case("agents", 100, one),
        Case("agents_memory", 100, one),
        Case("concurrent", 50, one),
        *console_cases(quick=True),
    ]
    return Plan(cases, import_repeats=1, agents=100, chats=50, quick=True)


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_worker(python: str, framework: str, workload: str, size: int) -> dict[str, Any]:
    """One run of a workload in a fresh process."""
    done = subprocess.run(
        [python, "-m", "benchmarks.worker", framework, workload, str(size)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{framework} {workload} {size} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The median of each figure over the runs."""
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def measure_cases(
    python: str, cases: Iterable[Case], frameworks: Iterable[str]
) -> tuple[dict[tuple[str, str, int], dict[str, float]], list[str]]:
    """Run every case, interleaving the frameworks run by run; return the medians and the failures."""
    figures: dict[tuple[str, str, int], dict[str, float]] = {}
    failures: list[str] = []
    for case in cases:
        runs: dict[str, list[dict[str, Any]]] = {framework: [] for framework in frameworks}
        for attempt in range(max(case.repeats.get(framework, 0) for framework in runs)):
            for framework in runs:
                if attempt >= case.repeats.get(framework, 0):
                    continue
                started = time.perf_counter()
                try:
                    result = run_worker(python, framework, case.workload, case.size)
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    failures.append(str(error))
                    _log(f"FAILED {error}")
                    continue
                runs[framework].append(result)
                _log(
                    f"{case.workload:>13} {case.size:>5} {framework:>6} process {attempt + 1}: "
                    f"{_brief(result)} ({time.perf_counter() - started:.1f} s in all)"
                )
        for framework, framework_runs in runs.items():
            if framework_runs:
                figures[(framework, case.workload, case.size)] = medians(framework_runs)
    return figures, failures


def _brief(result: dict[str, Any]) -> str:
    if "retained_bytes" in result:
        return f"{result['retained_bytes'] / report.MiB:.2f} MiB held"
    runs = f" (median of {result['runs']} runs)" if result.get("runs", 1) > 1 else ""
    return f"{result['cpu_s']:.4f} s CPU, {result['wall_s']:.4f} s wall{runs}"


def measure_imports(python: str, repeats: int) -> dict[tuple[str, str, int], dict[str, float]]:
    """``import parley``, ``import autogen`` and a bare interpreter, each in fresh processes."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in IMPORTS}
    for attempt in range(repeats):
        for name, code in IMPORTS.items():
            runs[name].append(fresh_process(python, code))
        _log(
            f"       import run {attempt + 1}: "
            + ", ".join(f"{n} {r[-1]['cpu_s']:.3f} s" for n, r in runs.items())
        )
    return {(name, "import", 0): medians(name_runs) for name, name_runs in runs.items()}


def build_rows(figures: report.Figures, plan: Plan) -> list[report.Row]:
    """The table's rows; goals are only checked in a full run (a quick run uses other sizes)."""
    rows = [
        *report.step_rows(figures, plan.sizes()),
        *report.agent_rows(figures, plan.agents),
        *report.import_rows(figures),
        *report.concurrency_rows(figures, plan.chats),
        *report.console_rows(figures, plan.sizes()),
        *report.durable_rows(figures),
        *report.shared_agents_rows(figures, plan.chats),
        *report.limits_rows(figures),
    ]
    if plan.quick:
        rows = [report.Row(row.label, row.unit, row.parley, row.ag2, None, row.compare) for row in rows]
    return [row for row in rows if row.parley is not None or row.ag2 is not None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, one run each")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="WORKLOAD",
        help="only these workloads (chat, swarm, ..., import; console for all the console's)",
    )
    parser.add_argument("--frameworks", nargs="+", choices=FRAMEWORKS, default=list(FRAMEWORKS))
    parser.add_argument("--no-write", action="store_true", help=f"do not write {RESULTS.name}")
    parser.add_argument("--no-profile", action="store_true", help="do not write the profiles")
    parser.add_argument("--json", type=Path, help="also write the medians as JSON to this file")
    arguments = parser.parse_args(argv)

    plan = quick_plan() if arguments.quick else full_plan()
    wanted = set(arguments.only or [])
    if "console" in wanted:
        wanted |= CONSOLE
    cases = [case for case in plan.cases if not wanted or case.workload in wanted]
    python = sys.executable
    started = time.perf_counter()
    figures, failures = measure_cases(python, cases, arguments.frameworks)
    if not wanted or "import" in wanted:
        figures.update(measure_imports(python, plan.import_repeats))
    rows = build_rows(figures, plan)
    machine = report.machine()
    text = report.table(rows)
    print(report.machine_line(machine))
    print(text)
    met, missed = report.summary(rows)
    if plan.quick:
        print("\nA quick run: small sizes, one process each; the goals are checked by a full run only.")
    else:
        print(f"\nparley meets {len(met)} of {len(met) + len(missed)} goals" + (":" if missed else "."))
    for row in missed:
        goal = row.goal.text if row.goal else ""
        print(f"  missed: {row.label}: {report.cell(row.parley, row.unit)} (goal {goal})")
    complete = not plan.quick and not wanted and not failures and arguments.frameworks == list(FRAMEWORKS)
    if complete and not arguments.no_profile:
        subprocess.run([python, "-m", "benchmarks.profile_hot_path", str(PROFILES)], cwd=ROOT, check=True)
    if complete and not arguments.no_write:
        elapsed = time.perf_counter() - started
        RESULTS.write_text(report.results_markdown(rows, machine, elapsed, REPEATS_TEXT))
        print(f"wrote {RESULTS.relative_to(ROOT)}", file=sys.stderr)
    if arguments.json:
        arguments.json.write_text(
            json.dumps({"|".join(map(str, key)): value for key, value in figures.items()}, indent=1)
        )
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
