"""The store benchmark runs at tiny sizes and measures every figure it promises. No timing is asserted:
the goals are checked by ``python -m benchmarks.store_append``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root holds benchmarks/

from benchmarks import store_append

TINY = store_append.Sizes(
    appends=10,
    power_appends=2,
    short_chat=30,
    long_chat=60,
    concurrent_chats=4,
    appends_per_concurrent_chat=2,
)


def test_the_records_look_like_a_conversation():
    records = store_append.message_records(8)

    decoded = [json.loads(record.data) for record in records]
    assert [record.seq for record in records] == list(range(1, 9))
    assert {entry["message"]["role"] for entry in decoded} == {"user", "assistant", "tool"}
    assert any(entry["message"].get("tool_calls") for entry in decoded)
    assert any(entry.get("usage") for entry in decoded)
    assert store_append.message_records(8) == records  # the same every run


def test_every_figure_is_measured_for_sqlite_and_postgresql(postgres_database: str):
    figures = store_append.run(TINY, postgres_database)

    labels = [figure.label for figure in figures]
    for store in ("SQLite", "PostgreSQL"):
        mine = [label for label in labels if label.startswith(f"{store}: ")]
        assert len(mine) == 12
        assert f"{store}: open and load a 60-message chat" in mine
    assert all(figure.value > 0 for figure in figures)
    with_goals = [figure for figure in figures if figure.goal is not None]
    assert len(with_goals) == 6 and all(figure.met is not None for figure in with_goals)


def test_a_figure_says_whether_it_meets_its_goal():
    assert store_append.Figure("append", 50, "us", 100).line().endswith("goal ≤ 100 us: met")
    assert store_append.Figure("append", 150, "us", 100).met is False
    assert store_append.Figure("linear", 1.2, "x", 0.25, ratio=True).met is True
    assert store_append.Figure("linear", 0.7, "x", 0.25, ratio=True).met is False
