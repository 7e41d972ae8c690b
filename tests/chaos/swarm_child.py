"""The program the chaos test kills: a 50-round, tool-using swarm on a deterministic model, kept in a
store, that reports everything it does to the outside world in a ledger directory.

``python -m tests.chaos.swarm_child STORE_URL CHAT_ID LEDGER_DIR`` prints ``ready`` once imported, runs
(or continues) the chat, and prints the chat's history as JSON when it finishes. Every model request
and tool execution appends a line to ``LEDGER_DIR/events``; the ``charge`` tool's side effect is a file
``LEDGER_DIR/charges/<tool_call_id>`` created at most once (the tool is idempotent by its call id).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROUNDS = 50


def note(ledger: Path, line: str) -> None:
    with open(ledger / "events", "a") as events:
        events.write(line + "\n")


def main(store: str, chat_id: str, ledger_dir: str) -> None:
    from parley import (
        AFTER_WORK,
        ON_CONDITION,
        FunctionModel,
        ModelRequest,
        SwarmAgent,
        initiate_swarm_chat,
        tool_call,
    )

    ledger = Path(ledger_dir)
    (ledger / "charges").mkdir(parents=True, exist_ok=True)

    def model_for(name: str, other: str) -> FunctionModel:
        def reply(request: ModelRequest) -> Any:
            note(ledger, f"model {name}")
            time.sleep(0.002)
            step = sum(1 for message in request.messages if message.get("role") == "tool")
            return [
                tool_call("charge", {"step": step}, id=f"charge-{step}"),
                tool_call(f"transfer_to_{other}", id=f"transfer-{step}"),
            ]

        return FunctionModel(reply)

    def charge(step: int, tool_call_id: str, context_variables: dict[str, Any]) -> str:
        note(ledger, f"tool {tool_call_id}")
        time.sleep(0.001)
        try:
            descriptor = os.open(ledger / "charges" / tool_call_id, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            os.close(descriptor)
        context_variables["charged"] = context_variables.get("charged", 0) + step
        return f"charged step {step}"

    ping = SwarmAgent("ping", llm_config=model_for("ping", "pong"), functions=[charge])
    pong = SwarmAgent("pong", llm_config=model_for("pong", "ping"), functions=[charge])
    ping.register_hand_off([ON_CONDITION(pong, "Pass to pong."), AFTER_WORK("TERMINATE")])
    pong.register_hand_off([ON_CONDITION(ping, "Pass to ping."), AFTER_WORK("TERMINATE")])
    print("ready", flush=True)
    result, context, _ = initiate_swarm_chat(
        ping, "start", [ping, pong], max_rounds=ROUNDS, store=store, chat_id=chat_id, silent=True
    )
    print(json.dumps({"history": result.chat_history, "context": dict(context)}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
