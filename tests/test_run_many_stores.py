"""run_many with the durable stores: a batch whose process is killed part-way (SIGKILL), run again on
the same SQLite or PostgreSQL store, finishes every item; no model call whose reply was recorded is made
again, so only the calls under way at the kill (at most one per running chat) are repeated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from parley import run_many
from parley.store import open_store
from run_many_items import support_chat
from services import postgres_url

TESTS = Path(__file__).resolve().parent

CHILD = """
import json, sys
from parley import run_many
from run_many_items import support_chat

run_many(support_chat, json.loads(sys.argv[3]), concurrency=4, store=sys.argv[1], batch_id=sys.argv[2])
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/chats.db"
    return postgres_url()


def calls_by_customer(ledger: Path) -> Counter[str]:
    """Model calls so far, by customer (a line each; a line being written when the process died is not
    a call that returned)."""
    return Counter({path.name: path.read_text().count("\n") for path in ledger.iterdir()})


def test_a_killed_batch_run_again_finishes_every_item_and_repeats_only_the_calls_under_way(
    store_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    tag = uuid.uuid4().hex[:8]
    batch = f"killed-{tag}"
    items = [{"customer": f"broken-{tag}-{n}" if n % 9 == 4 else f"c-{tag}-{n}"} for n in range(40)]
    ledger = tmp_path / "ledger"
    ledger.mkdir()
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "PARLEY_RUN_MANY_DELAY": "0.02",
        "PARLEY_RUN_MANY_LEDGER": str(ledger),
    }
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, store_url, batch, json.dumps(items)],
        env=environment,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while sum(calls_by_customer(ledger).values()) < 40:
        assert child.poll() is None, f"the batch ended before it was killed: {child.stderr.read()!r}"
        assert time.monotonic() < deadline, "the batch made no progress"
        time.sleep(0.005)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert child.stderr is not None
    child.stderr.close()
    store = open_store(store_url)
    good = [item["customer"] for item in items if not item["customer"].startswith("broken")]
    finished_before = [
        item["customer"]
        for n, item in enumerate(items)
        if [record.kind for record in store.load(f"{batch}/{n}")][-1:] == ["result"]
    ]
    assert finished_before and len(finished_before) < len(good), "the kill left work done and undone"

    monkeypatch.setenv("PARLEY_RUN_MANY_LEDGER", str(ledger))
    outcomes = run_many(support_chat, items, concurrency=4, store=store_url, batch_id=batch)

    after = calls_by_customer(ledger)
    repeated = {customer: after[customer] - 3 for customer in good}
    assert set(repeated.values()) <= {0, 1}, "a chat repeats at most the call under way when it was killed"
    assert sum(repeated.values()) <= 4, "at most one call per running chat (concurrency 4)"
    lines = {customer: (ledger / customer).read_text() for customer in finished_before}
    assert all(str(os.getpid()) not in text for text in lines.values()), "finished chats called nothing"
    assert [outcome.ok for outcome in outcomes] == [not i["customer"].startswith("broken") for i in items]
    assert [outcome.chat_id for outcome in outcomes] == [f"{batch}/{n}" for n in range(40)]
    reference = run_many(support_chat, [dict(item) for item in items])
    assert [o.value["history"] for o in outcomes if o.ok] == [o.value["history"] for o in reference if o.ok]
    for n in range(40):
        kinds = [record.kind for record in store.load(f"{batch}/{n}")]
        assert kinds.count("chat_started") == 1, f"item {n} was started once"


def test_outcomes_of_a_finished_batch_come_back_the_same_from_the_store(store_url: str):
    tag = uuid.uuid4().hex[:8]
    items: list[dict[str, Any]] = [{"customer": f"again-{tag}-{n}"} for n in range(10)]
    first = run_many(support_chat, items, store=store_url, batch_id=f"again-{tag}")
    second = run_many(support_chat, items, store=store_url, batch_id=f"again-{tag}")

    assert [(o.value["history"], o.usage, o.stop_reason) for o in second] == [
        (o.value["history"], o.usage, o.stop_reason) for o in first
    ]
