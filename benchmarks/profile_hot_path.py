"""Profiles of parley's hot path at the largest sizes, as text under ``benchmarks/profiles/``.

``python -m benchmarks.profile_hot_path [OUTDIR]``: for the two-agent chat, the swarm ring and the
group chat at their largest sizes, run the workload once to warm up, then once under ``cProfile``, and
write the functions sorted by own time (tottime) and by cumulative time. Small chats are profiled
too, many in a row, to show what each chat costs besides its steps. Only the block a workload times
is profiled (not the agents' setup). Paths are relative to the source tree or site-packages, so that
the files compare across machines.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import sysconfig
from pathlib import Path

from benchmarks.measure import profiling
from benchmarks.spec import WARMUP_SIZE
from benchmarks.workloads_parley import WORKLOADS

ROOT = Path(__file__).resolve().parent.parent
#: (workload, size, runs) of each profile.
PROFILED = (
    ("chat", 1000, 1),
    ("swarm", 1000, 1),
    ("groupchat", 1000, 1),
    ("swarm", 20, 500),
    ("groupchat", 10, 500),
)
TOP = 35


def profile(workload: str, size: int, runs: int) -> str:
    """The profile of ``runs`` runs of one parley workload, as text."""
    function = WORKLOADS[workload]
    function(WARMUP_SIZE[workload])
    steps = 0
    with profiling(cProfile.Profile()) as profiler:
        for _ in range(runs):
            steps += function(size)["steps"]
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    out.write(
        f"parley {workload}, size {size}, {runs} run(s): {steps} model steps in all. Only the measured block "
        "is profiled; the profiler slows every call, so use the times as proportions (RESULTS.md has "
        "the real figures).\n\n"
    )
    out.write(f"=== top {TOP} by own time (tottime) ===\n")
    stats.sort_stats("tottime").print_stats(TOP)
    out.write(f"=== top {TOP} by cumulative time (cumtime) ===\n")
    stats.sort_stats("cumulative").print_stats(TOP)
    return _relative(out.getvalue())


def _relative(text: str) -> str:
    prefixes = {str(ROOT / "src") + "/", str(ROOT) + "/", sysconfig.get_paths()["purelib"] + "/"}
    prefixes.add(sysconfig.get_paths()["stdlib"] + "/")
    for prefix in sorted(prefixes, key=len, reverse=True):
        text = text.replace(prefix, "")
    return text


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    out_dir = Path(arguments[0]) if arguments else ROOT / "benchmarks" / "profiles"
    out_dir.mkdir(parents=True, exist_ok=True)
    for workload, size, runs in PROFILED:
        name = f"parley_{workload}_{size}" + (f"_x{runs}" if runs > 1 else "")
        path = out_dir / f"{name}.txt"
        path.write_text(profile(workload, size, runs))
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
