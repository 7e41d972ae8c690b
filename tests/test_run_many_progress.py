"""run_many's progress line: live at a terminal (done, failed, running, chats per second, tokens, cost);
nothing elsewhere unless asked, and then one plain line at the end."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

BATCH = """
import sys
from parley import run_many
from run_many_items import support_chat

customers = [{"customer": f"broken-{n}" if n % 7 == 3 else f"c{n:02d}"} for n in range(20)]
outcomes = run_many(support_chat, customers, concurrency=4, progress=PROGRESS)
print("outcomes", sum(outcome.ok for outcome in outcomes), file=sys.stdout, flush=True)
"""


def environment() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
        "COLUMNS": "160",
        "TERM": "xterm-256color",
    }


def run_at_a_terminal(progress: str) -> str:
    """Run the batch with standard output and error on a pseudo-terminal; what the terminal received."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", BATCH.replace("PROGRESS", progress)],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=environment(),
    )
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    assert process.wait(timeout=60) == 0, received.decode(errors="replace")
    return received.decode(errors="replace")


def run_piped(progress: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BATCH.replace("PROGRESS", progress)],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=True,
    )


def test_at_a_terminal_the_progress_line_shows_done_failed_running_rate_tokens_and_cost():
    shown = run_at_a_terminal("None")

    assert "outcomes 17" in shown
    assert "20/20 done" in shown
    assert "3 failed" in shown
    assert "0 running" in shown
    assert "chats/s" in shown
    # 17 finished chats of 19 tokens ($0.013) each, and the 11 or 12 tokens of the failed ones' first call
    assert "358 tokens" in shown
    assert "$0.2500" in shown
    assert "━" in shown, "a bar"


def test_progress_false_shows_nothing_even_at_a_terminal():
    shown = run_at_a_terminal("False")

    assert "outcomes 17" in shown
    assert "done" not in shown


def test_not_at_a_terminal_nothing_is_shown_unless_asked_and_then_one_plain_line():
    quiet = run_piped("None")
    assert quiet.stdout == "outcomes 17\n"
    assert quiet.stderr == ""

    asked = run_piped("True")
    lines = asked.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("run_many: 20/20 done, 3 failed, 0 running, ")
    assert "\x1b[" not in asked.stderr, "plain text"
