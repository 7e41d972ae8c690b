"""The chaos test: a 50-round tool-using swarm in a subprocess, killed with SIGKILL at 200 random points
spread over its run and re-run each time until it finishes, ends exactly as an uninterrupted run does."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from services import postgres_url

KILLS = int(os.environ.get("PARLEY_CHAOS_KILLS", "200"))
ROOT = Path(__file__).resolve().parents[2]


def start(store: str, chat_id: str, ledger: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.chaos.swarm_child", store, chat_id, str(ledger)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    ready = process.stdout.readline()
    if ready != "ready\n":
        raise AssertionError(
            f"the child did not start: {ready!r} {process.stderr.read() if process.stderr else ''}"
        )
    return process


def finish(process: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, f"the child failed: {err}"
    return json.loads(out)


def ledger_counts(ledger: Path) -> tuple[int, int]:
    lines = (ledger / "events").read_text().splitlines()
    kinds = Counter(line.split()[0] for line in lines)
    return kinds["model"], kinds["tool"]


def chaos(store: str, tmp_path: Path) -> None:
    reference_ledger = tmp_path / "reference"
    process = start(store, f"reference-{uuid.uuid4().hex}", reference_ledger)
    began = time.monotonic()
    reference = finish(process)
    run_time = time.monotonic() - began
    reference_work = ledger_counts(reference_ledger)

    chat_id = f"chaos-{uuid.uuid4().hex}"
    ledger = tmp_path / "chaos"
    rng = random.Random(20261201)
    points = sorted(rng.uniform(0, run_time) for _ in range(KILLS))
    killed, previous = 0, 0.0
    for point in points:
        process = start(store, chat_id, ledger)
        time.sleep(max(0.0, point - previous))
        previous = point
        if process.poll() is None:
            process.kill()
            process.wait()
            killed += 1
        else:
            finish(process)
            break
    final = finish(start(store, chat_id, ledger))

    assert killed >= KILLS * 0.9, f"only {killed} of {KILLS} runs were killed before they finished"
    assert final["history"] == reference["history"], "the resumed chat differs from an uninterrupted one"
    assert final["context"] == reference["context"]
    model_calls, tool_runs = ledger_counts(ledger)
    extra = (model_calls - reference_work[0]) + (tool_runs - reference_work[1])
    assert 0 <= extra <= killed, (
        f"{extra} model requests and tool runs more than uninterrupted; {killed} kills"
    )
    charges = sorted(path.name for path in (ledger / "charges").iterdir())
    assert charges == sorted(path.name for path in (reference_ledger / "charges").iterdir())


def test_a_killed_swarm_resumes_exactly_on_sqlite(tmp_path: Path) -> None:
    chaos(f"sqlite:///{tmp_path / 'chats.db'}", tmp_path)


def test_a_killed_swarm_resumes_exactly_on_postgresql(tmp_path: Path) -> None:
    chaos(postgres_url(), tmp_path)
