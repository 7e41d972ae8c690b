"""The Ray runner's options (plain data: nothing here imports Ray)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class RayRunner:
    """Run a batch on Ray: ``run_many(fn, inputs, runner=RayRunner(actors=8))``; ``runner="ray"`` is
    ``RayRunner()``.

    Each actor is a process running many items at once on its own event loop; the batch's
    ``concurrency`` is shared out between the actors. Items go to the actors in batches (one call per
    batch) and their outcomes stream back as they finish.

    Attributes:
        actors: how many actors (default: one per CPU of the Ray cluster).
        batch_size: items per call to an actor (default: the actor's share of ``concurrency``, so that
            each actor holds about two calls' worth of items).
        max_attempts: how many times an item is started before it is given up, when the actors running
            it die (a killed process, a lost node); the item's outcome is then the actor's death.
        actor_options: options for the actors, as Ray's ``.options()`` takes them (``num_cpus``,
            ``resources``, ``runtime_env``, ``scheduling_strategy``...); by default each takes one CPU
            and they are spread over the nodes.
    """

    actors: int | None = None
    batch_size: int | None = None
    max_attempts: int = 3
    actor_options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("actors", "batch_size"):
            value = getattr(self, name)
            if value is not None and not _positive_int(value):
                raise ValueError(f"RayRunner({name}=...) must be an int of at least 1 or None, not {value!r}")
        if not _positive_int(self.max_attempts):
            raise ValueError(
                f"RayRunner(max_attempts=...) must be an int of at least 1, not {self.max_attempts!r}"
            )
        if not isinstance(self.actor_options, dict):
            raise TypeError(f"RayRunner(actor_options=...) must be a dict, not {self.actor_options!r}")


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
