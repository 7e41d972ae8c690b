"""The runnable examples work as their docstrings say."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from parley import StopKind

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_customer_support_swarm_routes_to_billing_and_refunds_with_a_scripted_model():
    example = load("customer_support_swarm")

    result = example.run("I was charged twice", example.scripted_models(), interactive=False, silent=True)

    speakers = [m.get("name") for m in result.chat_history if m["role"] != "tool"]
    assert speakers[0] is None
    assert set(speakers[1:]) == {"triage", "billing"}
    assert "refunded" in result.summary
    assert result.stop_reason.kind is StopKind.TERMINATE_TARGET


def test_customer_support_swarm_runs_as_a_script():
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / "customer_support_swarm.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert completed.returncode == 0, completed.stderr
    assert "stopped: billing's after-work ends the chat" in completed.stdout
    assert "'refunds': ['INV-1002']" in completed.stdout


def test_customer_support_swarm_runs_on_an_openai_compatible_server(capsys):
    from models.fake_servers import FakeServer, completion

    example = load("customer_support_swarm")
    with FakeServer() as server:
        server.script(
            completion(None, [("record_issue", {"customer_name": "Bo", "issue": "app crashes on login"})]),
            completion(None, [("transfer_to_technical_support", {})]),
            completion(None, [("create_ticket", {"summary": "crash on login"})]),
            completion("I opened ticket T-100 for the crash, Bo."),
        )
        exit_code = example.main(
            ["--base-url", server.url, "--model", "served-model", "--message", "It crashes"]
        )
        sent = server.requests

    assert exit_code == 0
    printed = capsys.readouterr().out
    assert "stopped: technical_support's after-work ends the chat" in printed
    assert "'tickets': ['T-100']" in printed
    assert [request.body["model"] for request in sent] == ["served-model"] * 4
    assert sent[2].messages[0]["content"].startswith("You are the technical agent")
    assert "Bo" in sent[2].messages[0]["content"]
