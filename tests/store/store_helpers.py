"""Records as the engine stores them, and child processes that hold chats, for the store tests."""

from __future__ import annotations

import json
import subprocess
import sys

from parley.store import StoredRecord


def message_record(seq: int, speaker: str = "assistant", content: str | None = None) -> StoredRecord:
    """A message record as the engine stores one."""
    data = {
        "kind": "message",
        "speaker": speaker,
        "message": {"role": "user", "name": speaker, "content": content or f"message {seq} from {speaker}"},
    }
    return StoredRecord(seq, "message", json.dumps(data))


def record(seq: int, kind: str, **fields: object) -> StoredRecord:
    """A record of ``kind`` with ``fields``."""
    return StoredRecord(seq, kind, json.dumps({"kind": kind, **fields}))


class Child:
    """A Python child process running ``code`` that prints ``ready`` and then waits for a line of input."""

    def __init__(self, code: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if line != "ready\n":
            self.process.kill()
            _, errors = self.process.communicate()
            raise AssertionError(f"the child process did not get ready: {line!r} {errors}")

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        self.process.kill()
        self.process.wait()

    def finish(self) -> None:
        """Let it end on its own."""
        self.process.communicate("\n", timeout=60)


def support_chat_records() -> list[StoredRecord]:
    """A finished customer-support swarm, as the engine records one."""
    usage = {
        "model": "gpt-4o-mini",
        "prompt_tokens": 300,
        "completion_tokens": 20,
        "cost": 0.0001,
        "cached": False,
    }
    transfer = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "transfer_to_billing", "arguments": '{"issue": "charged twice"}'},
    }
    refund = {
        "id": "call_2",
        "type": "function",
        "function": {"name": "refund_charge", "arguments": '{"charge_id": "CH-301"}'},
    }
    return [
        StoredRecord(seq, kind, json.dumps({"kind": kind, **fields}))
        for seq, (kind, fields) in enumerate(
            [
                (
                    "chat_started",
                    {"shape": "swarm", "agents": ["triage", "billing"], "context": {"refunds": []}},
                ),
                (
                    "message",
                    {
                        "speaker": "customer",
                        "message": {"role": "user", "name": "customer", "content": "I was charged twice"},
                    },
                ),
                ("turn", {"speaker": "triage", "some_future_key": True}),
                (
                    "message",
                    {
                        "speaker": "triage",
                        "message": {
                            "role": "assistant",
                            "name": "triage",
                            "content": None,
                            "tool_calls": [transfer],
                        },
                        "usage": [usage],
                    },
                ),
                (
                    "message",
                    {
                        "speaker": "_Swarm_Tool_Executor",
                        "message": {
                            "role": "tool",
                            "name": "_Swarm_Tool_Executor",
                            "content": "Transferred to billing.",
                            "tool_responses": [
                                {
                                    "tool_call_id": "call_1",
                                    "role": "tool",
                                    "content": "Transferred to billing.",
                                }
                            ],
                        },
                        "context_set": {"issue": "charged twice"},
                        "handoff": "billing",
                    },
                ),
                (
                    "message",
                    {
                        "speaker": "billing",
                        "message": {
                            "role": "assistant",
                            "name": "billing",
                            "content": None,
                            "tool_calls": [refund],
                        },
                        "usage": [usage],
                    },
                ),
                ("tool_result", {"tool_call_id": "call_2", "content": "Refunded $29.00 for CH-301."}),
                (
                    "message",
                    {
                        "speaker": "_Swarm_Tool_Executor",
                        "message": {
                            "role": "tool",
                            "name": "_Swarm_Tool_Executor",
                            "content": "Refunded $29.00 for CH-301.",
                            "tool_responses": [
                                {
                                    "tool_call_id": "call_2",
                                    "role": "tool",
                                    "content": "Refunded $29.00 for CH-301.",
                                }
                            ],
                        },
                    },
                ),
                ("context", {"agent": "billing", "set": {"refunds": ["CH-301"]}, "removed": ["issue"]}),
                (
                    "message",
                    {
                        "speaker": "billing",
                        "message": {
                            "role": "user",
                            "name": "billing",
                            "content": "Refunded.\nIt reaches your card in 3-5 days.",
                        },
                        "usage": [{**usage, "cached": True}],
                    },
                ),
                (
                    "stopped",
                    {
                        "stop_reason": {
                            "kind": "terminate_target",
                            "detail": "billing's after-work ends the chat",
                            "agent": "billing",
                        }
                    },
                ),
                ("result", {"summary": "Refunded.\nIt reaches your card in 3-5 days.", "chat_history": []}),
            ]
        )
    ]
