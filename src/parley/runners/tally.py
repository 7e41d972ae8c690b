"""The running counts of a batch, which the progress display reads."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from parley.runners.outcome import Outcome


@dataclass(slots=True)
class Tally:
    """How far a batch is: items done and failed, items running, chats finished, tokens and cost."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    chats: int = 0
    tokens: int = 0
    cost: float = 0.0
    started_at: float = field(default_factory=time.monotonic)

    def start(self, count: int = 1) -> None:
        """``count`` items started."""
        self.running += count

    def requeue(self, count: int = 1) -> None:
        """``count`` started items went back to the queue (their Ray actor died)."""
        self.running -= count

    def finish(self, outcome: Outcome[object], *, was_running: bool = True) -> None:
        """An item finished (or was given up without running, if not ``was_running``)."""
        if was_running:
            self.running -= 1
        self.done += 1
        if not outcome.ok:
            self.failed += 1
        self.chats += len(outcome.chat_ids)
        self.tokens += outcome.tokens
        self.cost += outcome.cost

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    @property
    def chats_per_second(self) -> float:
        elapsed = self.elapsed
        return self.chats / elapsed if elapsed > 0 else 0.0
