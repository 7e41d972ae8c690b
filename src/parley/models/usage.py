"""Usage and cost summed over a chat, in AG2's shape."""

from __future__ import annotations

from typing import Any

from parley.models.base import ModelResponse


class UsageSummary:
    """Sums model calls by model, including and excluding calls answered from the cache."""

    __slots__ = ("_excluding", "_including")

    def __init__(self) -> None:
        self._including: dict[str, dict[str, float]] = {}
        self._excluding: dict[str, dict[str, float]] = {}

    def add(self, response: ModelResponse) -> None:
        """Count one model call."""
        _add_to(self._including, response)
        if not response.cached:
            _add_to(self._excluding, response)

    def merge(self, other: UsageSummary) -> None:
        """Add everything ``other`` counted."""
        for mine, theirs in ((self._including, other._including), (self._excluding, other._excluding)):
            for model, counts in theirs.items():
                into = mine.setdefault(model, dict.fromkeys(counts, 0))
                for key, value in counts.items():
                    into[key] = into.get(key, 0) + value

    def to_dict(self) -> dict[str, Any]:
        """``{"usage_including_cached_inference": {...}, "usage_excluding_cached_inference": {...}}``."""
        return {
            "usage_including_cached_inference": _shape(self._including),
            "usage_excluding_cached_inference": _shape(self._excluding),
        }


def _add_to(totals: dict[str, dict[str, float]], response: ModelResponse) -> None:
    model = response.model or "unknown"
    counts = totals.get(model)
    if counts is None:
        counts = totals[model] = {"cost": 0.0, "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    counts["cost"] += response.cost
    counts["prompt_tokens"] += response.usage.prompt_tokens
    counts["completion_tokens"] += response.usage.completion_tokens
    counts["total_tokens"] += response.usage.total_tokens


def _shape(totals: dict[str, dict[str, float]]) -> dict[str, Any]:
    shaped: dict[str, Any] = {"total_cost": sum(counts["cost"] for counts in totals.values())}
    for model, counts in totals.items():
        shaped[model] = dict(counts)
    return shaped
