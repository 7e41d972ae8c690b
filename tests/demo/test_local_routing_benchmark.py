"""benchmarks/local_routing.py: twenty fixed requests through the demo's triage agent."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from models.smollm2 import smollm2_path
from parley import ScriptedModel, tool_call
from parley.demo.models import on_track
from parley.demo.support import BILLING, TECHNICAL, build_support_swarm

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root holds benchmarks/

from benchmarks.local_routing import REQUESTS, route  # noqa: E402


def test_the_requests_are_twenty_and_cover_both_teams():
    assert len(REQUESTS) == 20 == len({request for request, _ in REQUESTS})
    assert Counter(agent for _, agent in REQUESTS) == {BILLING: 10, TECHNICAL: 10}


def test_a_decision_is_the_agent_triage_hands_off_to():
    replies = [
        [tool_call("transfer_to_technical_support", {"customer_name": "unknown", "issue": "crash"})],
        [tool_call("ask_customer", {"question": "What is wrong?"})],
    ]
    swarm = build_support_swarm(lambda name: on_track(ScriptedModel(list(replies)), name), with_user=False)

    assert route(swarm.triage, swarm.routes, "The app crashes")[0] == TECHNICAL
    assert route(swarm.triage, swarm.routes, "hello")[0] == "(no handoff: ask_customer)"


def test_the_benchmark_runs_on_the_embedded_model():
    path = smollm2_path()

    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.local_routing",
            "--model-path",
            str(path),
            "--json",
            "--limit",
            "3",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )

    assert completed.returncode in (0, 1), completed.stderr
    assert "routed right: " in completed.stdout
    assert '"total": 3' in completed.stdout and "median seconds per routing decision" in completed.stdout
