"""Usage and cost summed over a chat, in AG2's shape."""

from __future__ import annotations

from typing import Any

from parley.models.base import ModelResponse

_COST, _PROMPT, _COMPLETION, _CALLS = range(4)
_CACHED = 4
"""Each model's counts: cost, prompt and completion tokens and calls, then the same for cached calls."""


class UsageSummary:
    """Sums model calls by model, keeping apart the calls answered from the cache."""

    __slots__ = ("_totals",)

    def __init__(self) -> None:
        self._totals: dict[str, list[float]] = {}

    def add(self, response: ModelResponse) -> None:
        """Count one model call."""
        model = response.model or "unknown"
        counts = self._totals.get(model)
        if counts is None:
            counts = self._totals[model] = [0.0, 0, 0, 0, 0.0, 0, 0, 0]
        usage = response.usage
        offset = _CACHED if response.cached else 0
        counts[offset + _COST] += response.cost
        counts[offset + _PROMPT] += usage.prompt_tokens
        counts[offset + _COMPLETION] += usage.completion_tokens
        counts[offset + _CALLS] += 1

    def merge(self, other: UsageSummary) -> None:
        """Add everything ``other`` counted."""
        for model, theirs in other._totals.items():
            mine = self._totals.setdefault(model, [0.0, 0, 0, 0, 0.0, 0, 0, 0])
            for index, value in enumerate(theirs):
                mine[index] += value

    def totals(self) -> dict[str, Any]:
        """Every call's tokens and cost: ``{"prompt_tokens", "completion_tokens", "cost", "calls"}``."""
        prompt = completion = calls = 0
        cost = 0.0
        for counts in self._totals.values():
            cost += counts[_COST] + counts[_CACHED + _COST]
            prompt += int(counts[_PROMPT] + counts[_CACHED + _PROMPT])
            completion += int(counts[_COMPLETION] + counts[_CACHED + _COMPLETION])
            calls += int(counts[_CALLS] + counts[_CACHED + _CALLS])
        return {"prompt_tokens": prompt, "completion_tokens": completion, "cost": cost, "calls": calls}

    def to_dict(self) -> dict[str, Any]:
        """``{"usage_including_cached_inference": {...}, "usage_excluding_cached_inference": {...}}``."""
        return {
            "usage_including_cached_inference": self._shape(include_cached=True),
            "usage_excluding_cached_inference": self._shape(include_cached=False),
        }

    def _shape(self, *, include_cached: bool) -> dict[str, Any]:
        shaped: dict[str, Any] = {"total_cost": 0}
        for model, counts in self._totals.items():
            cost, prompt, completion, calls = counts[:_CACHED]
            if include_cached:
                cost += counts[_CACHED + _COST]
                prompt += counts[_CACHED + _PROMPT]
                completion += counts[_CACHED + _COMPLETION]
            elif not calls:
                continue
            shaped[model] = {
                "cost": cost,
                "prompt_tokens": int(prompt),
                "completion_tokens": int(completion),
                "total_tokens": int(prompt + completion),
            }
            shaped["total_cost"] += cost
        return shaped
