"""The progress of a batch: a live line at a terminal (rich), nothing elsewhere unless asked."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import TYPE_CHECKING, Any

from parley.runners.tally import Tally

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live


class ProgressDisplay:
    """Shows a :class:`Tally` while a batch runs, on standard error.

    ``show``: ``None`` shows it only at a terminal; ``True`` always (where standard error is not a
    terminal, as one plain line when the batch ends); ``False`` never.
    """

    def __init__(self, tally: Tally, show: bool | None, *, label: str = "run_many") -> None:
        self.tally = tally
        self.label = label
        self._live: Live | None = None
        at_terminal = _stderr_is_a_terminal()
        self.live = at_terminal and show is not False
        self.summary = not at_terminal and show is True

    def __enter__(self) -> ProgressDisplay:
        if self.live:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(self, console=Console(stderr=True), refresh_per_second=4)
            self._live.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self.summary:
            print(f"{self.label}: {self.counts()}", file=sys.stderr, flush=True)

    def counts(self) -> str:
        """The figures, as plain text."""
        tally = self.tally
        return (
            f"{tally.done}/{tally.total} done, {tally.failed} failed, {tally.running} running, "
            f"{tally.chats_per_second:,.1f} chats/s, {tally.tokens:,} tokens, ${tally.cost:,.4f}, "
            f"{_clock(tally.elapsed)}"
        )

    def __rich_console__(self, console: Console, options: Any) -> Any:
        yield self.render()

    def render(self) -> RenderableType:
        """The progress line: a bar, done of total, failed, running, chats per second, tokens, cost."""
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        tally = self.tally
        line = Table.grid(padding=(0, 1))
        line.add_row(
            Text(self.label, style="bold"),
            ProgressBar(total=max(tally.total, 1), completed=tally.done, width=24),
            Text.assemble(
                (f"{tally.done}/{tally.total} done", "green"),
                "  ",
                (f"{tally.failed} failed", "red" if tally.failed else "dim"),
                "  ",
                f"{tally.running} running",
                "  ",
                f"{tally.chats_per_second:,.1f} chats/s",
                "  ",
                f"{tally.tokens:,} tokens",
                "  ",
                f"${tally.cost:,.4f}",
                "  ",
                (_clock(tally.elapsed), "dim"),
            ),
        )
        return line


def _stderr_is_a_terminal() -> bool:
    stream = sys.stderr
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"
