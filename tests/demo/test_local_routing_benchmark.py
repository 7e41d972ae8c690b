"""benchmarks/local_routing.py: triage's routing decisions over written customer requests."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from models.smollm2 import smollm2_path
from parley import AFTER_WORK, ON_CONDITION, AfterWorkOption, ScriptedModel, SwarmAgent, tool_call
from parley.models.local import LocalModel
from parley.tools import Tool

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository root holds benchmarks/

from benchmarks.local_routing import (  # noqa: E402
    REQUEST_SETS,
    Swarm,
    all_orders,
    decide,
    greedy_decoding,
    one_order,
    requests_for,
    summarize,
)
from benchmarks.routing_requests import ACCOUNT, BILLING, TECHNICAL, Request  # noqa: E402


def test_every_set_has_sixty_requests_over_three_specialists_with_ambiguous_ones_and_none_shared():
    sets = {name: load() for name, load in REQUEST_SETS.items()}
    assert set(sets) == {"tuning", "held-out", "fresh", "final", "check"}
    for requests in sets.values():
        assert len(requests) == 60 and len({request.text for request in requests}) == len(requests)
        assert Counter(request.expected for request in requests if not request.ambiguous) == {
            BILLING: 15,
            TECHNICAL: 15,
            ACCOUNT: 15,
        }
        assert sum(request.ambiguous for request in requests) == 15
        assert all(request.ambiguous for request in requests if request.also)
    texts = [request.text for requests in sets.values() for request in requests]
    assert len(set(texts)) == len(texts)


def scripted_swarm(*replies: object) -> Swarm:
    triage = SwarmAgent("triage", llm_config=ScriptedModel(list(replies)))
    billing = SwarmAgent("billing", llm_config=ScriptedModel([]))
    technical = SwarmAgent("technical_support", llm_config=ScriptedModel([]))
    triage.register_hand_off([ON_CONDITION(billing, "money"), ON_CONDITION(technical, "bugs")])
    for specialist in (billing, technical):
        specialist.register_hand_off(AFTER_WORK(AfterWorkOption.TERMINATE))
    routes = {"transfer_to_billing": BILLING, "transfer_to_technical_support": TECHNICAL}
    return Swarm(triage, [triage, billing, technical], routes, (BILLING, TECHNICAL))


def test_a_decision_is_the_specialist_triage_hands_off_to_and_an_answer_of_its_own_is_a_miss():
    swarm = scripted_swarm([tool_call("transfer_to_technical_support")], "Let me help you with that.")

    handed = decide(swarm, Request("The app crashes", TECHNICAL))
    answered = decide(swarm, Request("I was charged twice", BILLING))
    figures = summarize([handed, answered])

    assert (handed.target, handed.right) == (TECHNICAL, True)
    assert (answered.target, answered.right) == ("(answered itself)", False)
    assert (figures["right"], figures["total"], figures["answered_itself"]) == (1, 2, 1)


def test_a_swarm_is_asked_only_the_requests_it_has_a_specialist_for():
    swarm = scripted_swarm()
    requests = [
        Request("Change my email", ACCOUNT),
        Request("Close my account and refund me", ACCOUNT, (BILLING,), ambiguous=True),
        Request("Crash", TECHNICAL),
    ]

    kept = requests_for(swarm, requests)

    assert [(request.text, request.expected, request.also) for request in kept] == [
        ("Close my account and refund me", BILLING, ()),
        ("Crash", TECHNICAL, ()),
    ]


def test_greedy_decoding_is_patched_in_only_while_it_runs():
    original = LocalModel.create

    with greedy_decoding("content"):
        assert LocalModel.create is not original

    assert LocalModel.create is original


def test_all_orders_asks_every_order_and_one_order_the_given_order_only():
    def transfer_to_billing() -> str:
        """Money."""
        return "billing"

    def transfer_to_technical_support() -> str:
        """Bugs."""
        return "technical"

    tools = [Tool(transfer_to_billing).schema, Tool(transfer_to_technical_support).schema]
    model = LocalModel(smollm2_path(), n_ctx=1024, params={"temperature": 0, "max_tokens": 16})
    messages = [{"role": "user", "content": "I was charged twice."}]

    model.create(messages, tools)
    adaptive = model.last_stats.orders if model.last_stats else None
    with all_orders():
        model.create(messages, tools)
    every = model.last_stats.orders if model.last_stats else None
    with one_order():
        model.create(messages, tools)
    one = model.last_stats.orders if model.last_stats else None

    assert adaptive in (1, 2)
    assert (every, one) == (2, 1)


def test_the_benchmark_runs_on_the_embedded_model():
    path = smollm2_path()

    figures = []
    for swarm, decoding in (("seed", "orders"), ("demo", "greedy-content")):
        command = [sys.executable, "-m", "benchmarks.local_routing", "--model-path", str(path), "--json"]
        command += ["--swarm", swarm, "--decoding", decoding, "--limit", "2", "--show-orders"]
        completed = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert completed.returncode in (0, 1), completed.stderr
        assert (
            "routed right: " in completed.stdout
            and "prompt tokens evaluated per decision" in completed.stdout
        )
        assert ("order 1: transfer_to_" in completed.stdout) == (decoding == "orders")
        figures.append(json.loads(completed.stdout.strip().splitlines()[-1]))

    assert [(f["swarm"], f["decoding"], f["total"]) for f in figures] == [
        ("seed", "orders", 2),
        ("demo", "greedy-content", 2),
    ]
    assert all(f["median_prompt_tokens"] > f["median_evaluated_prompt_tokens"] > 0 for f in figures)
    assert figures[0]["median_orders"] >= 1 and figures[1]["median_orders"] == 0
