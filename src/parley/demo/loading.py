"""Getting the embedded model ready, with progress: first-use assembly, the checksum, the load."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn

from parley.demo.models import ModelFor, local_models

STAGES = {
    "assembling": "assembling the model from its packages (first use only)",
    "verifying": "checking the model's SHA-256",
}


class _Bars:
    """A progress bar per stage of :mod:`parley.models.weights`."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        task = self.tasks.get(stage)
        if task is None:
            task = self.tasks[stage] = self.progress.add_task(
                STAGES.get(stage, stage), total=total, detail=""
            )
        self.progress.update(task, completed=done, detail=f"{done / 1e9:.2f}/{total / 1e9:.2f} GB")


def load_local_models(model_path: str | Path | None, console: Console) -> ModelFor:
    """Assemble (on first use), verify and load the embedded model, showing progress on ``console``."""
    started = time.perf_counter()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[detail]}"),
        console=console,
        transient=True,
    )
    with progress:
        bars = _Bars(progress)
        progress.add_task("loading the model", total=None, detail="")
        model_for = local_models(model_path, progress=bars)
    if "assembling" in bars.tasks:
        console.print("[dim]assembled the model into the cache[/]")
    console.print(
        f"[dim]model ready in {time.perf_counter() - started:.1f}s: {escape(_label(model_path))}[/]"
    )
    return model_for


def _label(model_path: str | Path | None) -> str:
    return str(model_path) if model_path else "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0)"
