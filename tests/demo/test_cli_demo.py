"""``parley demo`` from the command line: against an OpenAI-compatible server, and on SmolLM2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from models.fake_servers import FakeServer, completion
from models.smollm2 import smollm2_path
from parley import StopKind

MESSAGE = "Hi, I'm Ada. I was charged twice for my subscription."


def parley(*arguments: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    return subprocess.run(
        [sys.executable, "-m", "parley", *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**env, "COLUMNS": "120"},
        stdin=subprocess.DEVNULL,
    )


def test_the_demo_runs_against_an_openai_compatible_server():
    with FakeServer() as server:
        server.script(
            completion(
                tool_calls=[("transfer_to_billing", {"customer_name": "Ada", "issue": "charged twice"})]
            ),
            completion(tool_calls=[("refund_charge", {"charge_id": "CH-302"})]),
            completion("Sorry, Ada: I refunded the duplicate charge CH-302.", prompt_tokens=30),
        )
        completed = parley("demo", "--base-url", server.url, "--model", "x", "--message", MESSAGE)

    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    for text in ("customer", "triage", "billing", "triage → billing", "refund_charge", "CH-302"):
        assert text in out
    assert "refunds = ['CH-302']" in out and "customer_name = 'Ada'" in out
    assert "summary" in out and "terminate_target: billing's after-work ends the chat" in out
    assert "tokens             65 (50 prompt, 15 completion)" in out
    first, second, third = (request.body for request in server.requests)
    assert first["model"] == "x" and "tool_choice" not in first, "triage chooses on its own"
    assert [tool["function"]["name"] for tool in first["tools"]] == [
        "transfer_to_billing",
        "transfer_to_technical_support",
        "ask_customer",
    ]
    assert second["tool_choice"] == "required" and third["tool_choice"] == "none"
    assert "transfer_to_technical_support" in [tool["function"]["name"] for tool in second["tools"]]
    assert MESSAGE in json.dumps(first["messages"])


def test_the_demo_refuses_incomplete_options():
    no_model = parley("demo", "--base-url", "http://127.0.0.1:9/v1", "--message", "hi")
    no_terminal = parley("demo", "--base-url", "http://127.0.0.1:9/v1", "--model", "x")

    assert no_model.returncode == 2 and "--base-url needs --model" in no_model.stderr
    assert no_terminal.returncode == 2 and "pass --message" in no_terminal.stderr


def test_the_demo_runs_on_the_embedded_model_with_smollm2():
    path = smollm2_path()

    completed = parley("demo", "--model-path", str(path), "--message", MESSAGE)

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stderr == ""
    out = completed.stdout
    assert "model ready" in out and "customer" in out and "triage" in out
    reason = next(line for line in out.splitlines() if line.startswith("stop reason"))
    assert reason.split()[2].rstrip(":") in {kind.value for kind in StopKind} - {"error"}


def test_several_messages_are_said_in_turn_and_each_reaches_the_right_specialist():
    later = ("The desktop app crashes when I export.", "Please email me the invoice for CH-288.")
    with FakeServer() as server:
        server.script(
            completion(
                tool_calls=[("transfer_to_billing", {"customer_name": "Ada", "issue": "charged twice"})]
            ),
            completion(tool_calls=[("refund_charge", {"charge_id": "CH-302"})]),
            completion("I refunded the duplicate charge CH-302."),
            completion(
                tool_calls=[
                    ("transfer_to_technical_support", {"customer_name": "Ada", "issue": "export crash"})
                ]
            ),
            completion(tool_calls=[("service_status", {"service": "desktop app"})]),
            completion("Version 4.2.1 fixes that crash."),
            completion(tool_calls=[("transfer_to_billing", {"customer_name": "Ada", "issue": "invoice"})]),
            completion(tool_calls=[("email_invoice", {"charge_id": "CH-288"})]),
            completion("I emailed you the invoice for CH-288."),
        )
        arguments = ["demo", "--base-url", server.url, "--model", "x", "-m", MESSAGE]
        completed = parley(*arguments, "-m", later[0], "-m", later[1])

    assert completed.returncode == 0, completed.stdout + completed.stderr
    out = completed.stdout
    for text in (*later, "billing → technical_support", "technical_support → billing", "CH-288"):
        assert text in out
    assert "human_exit" in out and len(server.requests) == 9
