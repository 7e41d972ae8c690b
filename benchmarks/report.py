"""The benchmark's table: rows from measured figures, goals, and the Markdown written to RESULTS.md."""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks.method import method
from benchmarks.spec import IDEAL_CONCURRENT_WALL_S, MODEL_DELAY_S, STEPS_PER_CHAT

MiB = 2**20

#: ``figures[(framework, workload, size)]`` holds the medians of a workload's runs.
Figures = Mapping[tuple[str, str, int], Mapping[str, float]]


@dataclass(frozen=True)
class Goal:
    """A limit parley's figure must stay under (``strict``) or at."""

    limit: float
    text: str
    strict: bool = False

    def holds(self, value: float) -> bool:
        return value < self.limit if self.strict else value <= self.limit


@dataclass(frozen=True)
class Row:
    """One line of the table: a figure for each framework, its unit, and parley's goal if it has one."""

    label: str
    unit: str
    parley: float | None
    ag2: float | None
    goal: Goal | None = None
    compare: bool = True

    @property
    def ratio(self) -> float | None:
        """AG2's figure over parley's (how many times more AG2 spends), when both exist."""
        if not self.compare or self.parley is None or self.ag2 is None or self.parley == 0:
            return None
        return self.ag2 / self.parley

    @property
    def met(self) -> bool | None:
        if self.goal is None or self.parley is None:
            return None
        return self.goal.holds(self.parley)


#: The workloads measured per model step: (workload key, what a step is, label).
STEP_WORKLOADS = (
    ("chat", "step", "two-agent chat, {n} turns"),
    ("swarm", "handoff", "swarm ring, {n} handoffs"),
    ("groupchat", "step", "round-robin group chat, {n} rounds"),
)
STEP_GOAL = Goal(20.0, "≤ 20 us")
FLAT_GOAL = Goal(1.2, "≤ 1.2x")


def _get(figures: Figures, framework: str, workload: str, size: int, key: str) -> float | None:
    found = figures.get((framework, workload, size))
    return None if found is None or key not in found else float(found[key])


def _per_step_us(figures: Figures, framework: str, workload: str, size: int) -> float | None:
    cpu = _get(figures, framework, workload, size, "cpu_s")
    steps = _get(figures, framework, workload, size, "steps")
    return None if cpu is None or not steps else cpu / steps * 1e6


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def step_rows(figures: Figures, sizes: Mapping[str, list[int]]) -> list[Row]:
    """CPU per model step at each size, and how it grows from the smallest size to the largest."""
    rows = []
    for workload, step, label in STEP_WORKLOADS:
        workload_sizes = sorted(sizes.get(workload, []))
        for size in workload_sizes:
            rows.append(
                Row(
                    f"{label.format(n=size)}: CPU per {step}",
                    "us",
                    _per_step_us(figures, "parley", workload, size),
                    _per_step_us(figures, "ag2", workload, size),
                    STEP_GOAL,
                )
            )
        if len(workload_sizes) > 1:
            small, large = workload_sizes[0], workload_sizes[-1]

            def growth(
                framework: str, small: int = small, large: int = large, workload: str = workload
            ) -> Any:
                at_small = _per_step_us(figures, framework, workload, small)
                at_large = _per_step_us(figures, framework, workload, large)
                return None if at_small is None or at_large is None else at_large / at_small

            rows.append(
                Row(
                    f"{label.format(n='N')}: CPU per {step} at N={large} / at N={small}",
                    "x",
                    growth("parley"),
                    growth("ag2"),
                    FLAT_GOAL,
                    compare=False,
                )
            )
    return rows


def agent_rows(figures: Figures, count: int) -> list[Row]:
    """Creating ``count`` agents with a tool each: CPU time, Python memory held, RSS growth."""
    label = f"create {count} agents with a tool each"

    def figure(framework: str, workload: str, key: str, factor: float) -> float | None:
        return _scaled(_get(figures, framework, workload, count, key), factor)

    return [
        Row(
            f"{label}: CPU time",
            "ms",
            figure("parley", "agents", "cpu_s", 1e3),
            figure("ag2", "agents", "cpu_s", 1e3),
            Goal(50.0, "< 50 ms", strict=True),
        ),
        Row(
            f"{label}: memory held (tracemalloc)",
            "MiB",
            figure("parley", "agents_memory", "retained_bytes", 1 / MiB),
            figure("ag2", "agents_memory", "retained_bytes", 1 / MiB),
            Goal(2.0, "< 2 MiB", strict=True),
        ),
        Row(
            f"{label}: RSS growth",
            "MiB",
            figure("parley", "agents", "rss_delta_bytes", 1 / MiB),
            figure("ag2", "agents", "rss_delta_bytes", 1 / MiB),
        ),
    ]


def import_rows(figures: Figures) -> list[Row]:
    """``import parley`` / ``import autogen`` in a fresh interpreter, raw and net of a bare ``python``."""

    def figure(framework: str, key: str, factor: float, *, net: bool) -> float | None:
        value = _get(figures, framework, "import", 0, key)
        base = _get(figures, "python", "import", 0, key)
        if value is None or (net and base is None):
            return None
        return (value - (base or 0.0) if net else value) * factor

    rows = []
    for key, what, unit, factor, goal in (
        ("cpu_s", "CPU time", "ms", 1e3, Goal(100.0, "< 100 ms", strict=True)),
        ("wall_s", "wall time", "ms", 1e3, None),
        ("maxrss_bytes", "peak RSS", "MiB", 1 / MiB, Goal(25.0, "< 25 MiB", strict=True)),
    ):
        rows.append(
            Row(
                f"import (fresh process): {what}",
                unit,
                figure("parley", key, factor, net=False),
                figure("ag2", key, factor, net=False),
                goal,
            )
        )
        rows.append(
            Row(
                f"import (fresh process): {what}, net of bare python",
                unit,
                figure("parley", key, factor, net=True),
                figure("ag2", key, factor, net=True),
            )
        )
    return rows


def concurrency_rows(figures: Figures, chats: int) -> list[Row]:
    """``chats`` concurrent chats against a model that waits: wall time against the ideal, and CPU."""
    label = f"{chats} concurrent chats x {STEPS_PER_CHAT} model calls of {MODEL_DELAY_S * 1e3:.0f} ms"

    def figure(framework: str, key: str, factor: float) -> float | None:
        return _scaled(_get(figures, framework, "concurrent", chats, key), factor)

    ideal = IDEAL_CONCURRENT_WALL_S
    cpu_per_step = {
        framework: _per_step_us(figures, framework, "concurrent", chats) for framework in ("parley", "ag2")
    }
    return [
        Row(
            f"{label}: wall time (ideal {ideal:.1f} s)",
            "s",
            figure("parley", "wall_s", 1.0),
            figure("ag2", "wall_s", 1.0),
            Goal(2 * ideal, f"≤ {2 * ideal:.1f} s (2x ideal)"),
        ),
        Row(f"{label}: CPU per model call", "us", cpu_per_step["parley"], cpu_per_step["ag2"]),
    ]


#: The console workloads: how the swarm ring and the first chat print, and the silent run compared.
PRINTED = (("file", "printed to a file", "a file"), ("tty", "printed at a terminal (pty)", "a terminal"))
PRINTED_STEP_GOAL = Goal(30.0, "≤ 30 us")
FIRST_CHAT_GOAL = Goal(1.0, "≤ 1 ms")


def console_rows(figures: Figures, sizes: Mapping[str, list[int]]) -> list[Row]:
    """The swarm ring printed (to a file, at a terminal) and silent, per handoff, and printing's cost;
    then the CPU time of a process's first chat, printed and silent."""

    def silent(framework: str, size: int) -> float | None:
        # The silent ring is the "swarm" workload; "swarm_silent" runs it at sizes that one does not.
        found = _per_step_us(figures, framework, "swarm_silent", size)
        return found if found is not None else _per_step_us(figures, framework, "swarm", size)

    def difference(printed: float | None, quiet: float | None) -> float | None:
        return None if printed is None or quiet is None else printed - quiet

    rows = []
    printed_sizes = sorted({size for output, _, _ in PRINTED for size in sizes.get(f"swarm_{output}", [])})
    for size in printed_sizes:
        label = f"swarm ring, {size} handoffs"
        for output, how, _ in PRINTED:
            rows.append(
                Row(
                    f"{label}, {how}: CPU per handoff",
                    "us",
                    _per_step_us(figures, "parley", f"swarm_{output}", size),
                    _per_step_us(figures, "ag2", f"swarm_{output}", size),
                    PRINTED_STEP_GOAL,
                )
            )
        rows.append(
            Row(f"{label}, silent: CPU per handoff", "us", silent("parley", size), silent("ag2", size))
        )
        for output, _, where in PRINTED:
            rows.append(
                Row(
                    f"{label}: what printing to {where} adds per handoff",
                    "us",
                    difference(
                        _per_step_us(figures, "parley", f"swarm_{output}", size), silent("parley", size)
                    ),
                    difference(_per_step_us(figures, "ag2", f"swarm_{output}", size), silent("ag2", size)),
                )
            )
    for turns in sorted(
        {size for workload in ("start_silent", "start_file", "start_tty") for size in sizes.get(workload, [])}
    ):
        label = f"a process's first chat ({turns} turn{'s' if turns > 1 else ''})"
        for output, how, _ in PRINTED:
            rows.append(
                Row(
                    f"{label}, {how}: CPU time",
                    "ms",
                    _scaled(_get(figures, "parley", f"start_{output}", turns, "cpu_s"), 1e3),
                    _scaled(_get(figures, "ag2", f"start_{output}", turns, "cpu_s"), 1e3),
                    # At a terminal the first printed chat loads rich, once per process, by design.
                    FIRST_CHAT_GOAL if output == "file" else None,
                )
            )
        rows.append(
            Row(
                f"{label}, silent: CPU time",
                "ms",
                _scaled(_get(figures, "parley", "start_silent", turns, "cpu_s"), 1e3),
                _scaled(_get(figures, "ag2", "start_silent", turns, "cpu_s"), 1e3),
            )
        )
    return rows


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def cell(value: float | None, unit: str) -> str:
    return "-" if value is None else f"{_number(value)} {unit}"


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table, padded so that it also reads as plain text."""
    header = ("workload", "parley", "AG2 0.13.4", "AG2 / parley", "goal (parley)", "met?")
    lines = [header]
    for row in rows:
        met = {None: "", True: "yes", False: "**NO**"}[row.met]
        ratio = "" if row.ratio is None else f"{row.ratio:,.1f}x"
        goal = row.goal.text if row.goal else ""
        lines.append((row.label, cell(row.parley, row.unit), cell(row.ag2, row.unit), ratio, goal, met))
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    aligned_right = {1, 2, 3}

    def render(line: tuple[str, ...]) -> str:
        cells = [
            cell.rjust(width) if column in aligned_right else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        return "| " + " | ".join(cells) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (width + 1) + ":") if column in aligned_right else "-" * (width + 2)
            for column, width in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([render(lines[0]), rule, *(render(line) for line in lines[1:])])


def machine() -> dict[str, str]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "parley": f"{_version('parley-llm')} ({_git_revision()})",
        "ag2": _version("ag2"),
    }


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _git_revision() -> str:
    root = Path(__file__).resolve().parent.parent

    def git(*arguments: str) -> str:
        done = subprocess.run(["git", *arguments], cwd=root, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    revision = git("rev-parse", "--short", "HEAD") or "unknown revision"
    return revision + (" + uncommitted changes in src/" if git("status", "--porcelain", "src") else "")


def summary(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """The rows whose goal parley meets, and those whose goal it misses."""
    return [row for row in rows if row.met is True], [row for row in rows if row.met is False]


def machine_line(machine: Mapping[str, str]) -> str:
    """The machine, on one line."""
    return (
        f"{machine['date']}; {machine['cpu']}, {machine['cores']} cores; {machine['os']}; "
        f"{machine['python']}; parley {machine['parley']}; ag2 {machine['ag2']}"
    )


def results_markdown(rows: list[Row], machine: Mapping[str, str], elapsed_s: float, repeats: str) -> str:
    """RESULTS.md: the machine, the table, which goals are met, and how it was measured."""
    met, missed = summary(rows)
    lines = [
        "# Benchmark results: parley and AG2 0.13.4",
        "",
        "Produced by `./scripts/bench` (which writes this file); "
        f"the full run took {elapsed_s / 60:.1f} minutes.",
        "",
        f"- date: {machine['date']}",
        f"- machine: {machine['cpu']}, {machine['cores']} cores; {machine['os']}",
        f"- {machine['python']}; parley {machine['parley']}; ag2 {machine['ag2']}",
        "",
        "AG2 / parley is how many times more AG2 spends. Profiles of parley's hot path at the largest "
        "sizes are in `benchmarks/profiles/`.",
        "",
        table(rows),
        "",
        f"parley meets {len(met)} of {len(met) + len(missed)} goals.",
    ]
    if missed:
        lines += ["", "Missed:", ""]
        lines += [
            f"- {row.label}: {cell(row.parley, row.unit)} (goal {row.goal.text if row.goal else ''})"
            for row in missed
        ]
    lines += ["", method(repeats)]
    return "\n".join(lines)


def durable_rows(figures: Figures) -> list[Row]:
    """Durable chats: a message's cost with a store, the bytes stored, and resuming a long chat."""
    rows = []

    def per_message(framework: str, workload: str, size: int, key: str) -> float | None:
        value = _get(figures, framework, workload, size, key)
        messages = 2 * size
        return None if value is None else value / messages * 1e6

    for size in (100, 1000):
        rows.append(
            Row(
                f"two-agent chat, {size} turns, SQLite store: CPU per message (AG2: in memory)",
                "us",
                per_message("parley", "chat_sqlite", size, "cpu_s"),
                per_message("ag2", "chat", size, "cpu_s"),
                Goal(100.0, "≤ 100 us"),
            )
        )
        rows.append(
            Row(
                f"two-agent chat, {size} turns, SQLite store: wall per message",
                "us",
                per_message("parley", "chat_sqlite", size, "wall_s"),
                None,
            )
        )
    rows.append(
        Row(
            "two-agent chat, 1000 turns, PostgreSQL on 127.0.0.1: wall per message",
            "us",
            per_message("parley", "chat_postgres", 1000, "wall_s"),
            None,
            Goal(1000.0, "< 1 ms", strict=True),
        )
    )
    small = _get(figures, "parley", "chat_sqlite", 50, "record_bytes")
    large = _get(figures, "parley", "chat_sqlite", 5000, "record_bytes")
    per_small = None if small is None else small / 100
    per_large = None if large is None else large / 10_000
    rows.append(Row("bytes stored per message, 100-message chat", "B", per_small, None))
    rows.append(Row("bytes stored per message, 10,000-message chat", "B", per_large, None))
    rows.append(
        Row(
            "bytes stored per message at 10,000 / at 100 messages (linear: flat)",
            "x",
            None if per_small is None or per_large is None else per_large / per_small,
            None,
            FLAT_GOAL,
            compare=False,
        )
    )
    rows.append(
        Row(
            "resume a 10,000-message chat from SQLite (and take one step): wall time",
            "s",
            _get(figures, "parley", "resume", 10_000, "wall_s"),
            None,
            Goal(0.2, "< 0.2 s", strict=True),
        )
    )
    return rows


def shared_agents_rows(figures: Figures, chats: int) -> list[Row]:
    """Many swarms at once over one set of agents: wall time against the ideal."""
    from benchmarks.spec import SHARED_SWARM_STEPS

    ideal = SHARED_SWARM_STEPS * MODEL_DELAY_S
    wall = _get(figures, "parley", "shared_swarms", chats, "wall_s")
    label = (
        f"{chats} swarms at once over one set of agents, {SHARED_SWARM_STEPS} tool-using steps of "
        f"{MODEL_DELAY_S * 1e3:.0f} ms"
    )
    return [
        Row(
            f"{label}: wall time (ideal {ideal:.1f} s; none mixed)",
            "s",
            wall,
            None,
            Goal(2 * ideal, f"≤ {2 * ideal:.1f} s (2x ideal)"),
        ),
        Row(f"{label}: CPU per step", "us", _per_step_us(figures, "parley", "shared_swarms", chats), None),
    ]


def limits_rows(figures: Figures) -> list[Row]:
    """A step with a budget and a tool time limit, against the same step without (the two chats run
    alternately in one process: see ``tool_chat_paired``)."""
    limited = _per_step_us(figures, "parley", "tool_chat_paired", 1000)
    plain_cpu = _get(figures, "parley", "tool_chat_paired", 1000, "plain_cpu_s")
    steps = _get(figures, "parley", "tool_chat_paired", 1000, "steps")
    plain = None if plain_cpu is None or not steps else plain_cpu / steps * 1e6
    return [
        Row("two-agent chat with a tool, 1000 turns: CPU per turn", "us", plain, None),
        Row(
            "the same with a token, cost and time budget and a tool time limit: CPU per turn",
            "us",
            limited,
            None,
        ),
        Row(
            "with budgets and a time limit / without",
            "x",
            None if plain is None or limited is None else limited / plain,
            None,
            Goal(1.1, "≤ 1.1x"),
            compare=False,
        ),
    ]
