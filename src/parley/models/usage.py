"""Usage and cost summed over a chat, in AG2's shape."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter, itemgetter
from typing import Any

from parley.models.base import ModelResponse, Usage

_COST, _PROMPT, _COMPLETION, _CALLS = range(4)
_CACHED = 4
"""Each model's counts: cost, prompt and completion tokens and calls, then the same for cached calls."""
_PENDING_LIMIT = 64
_KIND = attrgetter("model", "cached")
_COST_OF = attrgetter("cost")
_PROMPT_OF = attrgetter("usage.prompt_tokens")
_COMPLETION_OF = attrgetter("usage.completion_tokens")
_OF_RESPONSE = (_COST_OF, _PROMPT_OF, _COMPLETION_OF)

Call = tuple[str, int, int, float, bool]
"""One model call's counts, as :meth:`UsageSummary.add_calls` takes them: ``(model, prompt tokens,
completion tokens, cost, cached)``."""
_CALL_KIND = itemgetter(0, 4)
_OF_CALL = (itemgetter(3), itemgetter(1), itemgetter(2))


class UsageSummary:
    """Sums model calls by model, keeping apart the calls answered from the cache.

    Adding a call only keeps the response; the sums are made when read (or every
    ``_PENDING_LIMIT`` calls), so that counting costs a model call next to nothing.
    """

    __slots__ = ("_pending", "_totals")

    def __init__(self) -> None:
        self._totals: dict[str, list[float]] = {}
        self._pending: list[ModelResponse] = []

    def add(self, response: ModelResponse) -> None:
        """Count one model call."""
        pending = self._pending
        pending.append(response)
        if len(pending) >= _PENDING_LIMIT:
            self._fold()

    def add_calls(self, calls: Sequence[Call]) -> None:
        """Count model calls given by their counts: the same sums, added in the same order, as :meth:`add`
        makes of a response for each (a chat's records give back its calls so)."""
        pending = self._pending
        start = 0
        while len(pending) + len(calls) - start >= _PENDING_LIMIT:
            end = start + _PENDING_LIMIT - len(pending)
            if pending:
                pending.extend(map(call_response, calls[start:end]))
                self._fold()
                pending = self._pending
            else:
                self._count_by_kind(calls[start:end], _CALL_KIND, _OF_CALL)
            start = end
        pending.extend(map(call_response, calls[start:]))

    def _fold(self) -> dict[str, list[float]]:
        pending = self._pending
        if pending:
            self._pending = []
            if len(pending) == 1:  # one call: nothing to group
                only = pending[0]
                self._count(only.model, only.cached, pending, _OF_RESPONSE)
            else:
                self._count_by_kind(pending, _KIND, _OF_RESPONSE)
        return self._totals

    def _count_by_kind(
        self,
        calls: Sequence[Any],
        kind_of: Callable[[Any], tuple[Any, Any]],
        getters: tuple[Callable[[Any], Any], ...],
    ) -> None:
        """Add calls (responses, or the counts of :data:`Call`), grouped by their model and whether they
        were answered from the cache, read with ``kind_of`` and ``getters`` (see :meth:`_count`)."""
        kinds = set(map(kind_of, calls))
        if len(kinds) == 1:
            self._count(*kinds.pop(), calls, getters)
        else:
            for model, cached in kinds:
                self._count(
                    model, cached, [call for call in calls if kind_of(call) == (model, cached)], getters
                )

    def _count(
        self,
        model: str | None,
        cached: bool,
        calls: Sequence[Any],
        getters: tuple[Callable[[Any], Any], ...],
    ) -> None:
        """Add calls of one model, all answered from the cache or none (summed in C: no loop here), whose
        cost, prompt and completion tokens ``getters`` read."""
        counts = self._totals.get(model or "unknown")
        if counts is None:
            counts = self._totals[model or "unknown"] = [0.0, 0, 0, 0, 0.0, 0, 0, 0]
        offset = _CACHED if cached else 0
        cost_of, prompt_of, completion_of = getters
        counts[offset + _COST] += sum(map(cost_of, calls))
        counts[offset + _PROMPT] += sum(map(prompt_of, calls))
        counts[offset + _COMPLETION] += sum(map(completion_of, calls))
        counts[offset + _CALLS] += len(calls)

    def merge(self, other: UsageSummary) -> None:
        """Add everything ``other`` counted."""
        for model, theirs in other._fold().items():
            mine = self._fold().setdefault(model, [0.0, 0, 0, 0, 0.0, 0, 0, 0])
            for index, value in enumerate(theirs):
                mine[index] += value

    @property
    def empty(self) -> bool:
        """Whether no model call has been counted."""
        return not self._pending and not self._totals

    def totals(self) -> dict[str, Any]:
        """Every call's tokens and cost: ``{"prompt_tokens", "completion_tokens", "cost", "calls"}``."""
        prompt = completion = calls = 0
        cost = 0.0
        for counts in self._fold().values():
            cost += counts[_COST] + counts[_CACHED + _COST]
            prompt += int(counts[_PROMPT] + counts[_CACHED + _PROMPT])
            completion += int(counts[_COMPLETION] + counts[_CACHED + _COMPLETION])
            calls += int(counts[_CALLS] + counts[_CACHED + _CALLS])
        return {"prompt_tokens": prompt, "completion_tokens": completion, "cost": cost, "calls": calls}

    def to_dict(self) -> dict[str, Any]:
        """``{"usage_including_cached_inference": {...}, "usage_excluding_cached_inference": {...}}``."""
        including: dict[str, Any] = {"total_cost": 0}
        excluding: dict[str, Any] = {"total_cost": 0}
        for model, counts in self._fold().items():
            cost, prompt, completion, calls, cached_cost, cached_prompt, cached_completion, _ = counts
            if calls:
                excluding[model] = _model_usage(cost, prompt, completion)
                excluding["total_cost"] += cost
            cost += cached_cost
            including[model] = _model_usage(cost, prompt + cached_prompt, completion + cached_completion)
            including["total_cost"] += cost
        return {"usage_including_cached_inference": including, "usage_excluding_cached_inference": excluding}


def call_response(call: Sequence[Any]) -> ModelResponse:
    """A model response that counts as ``call``, ``(model, prompt tokens, completion tokens, cost, cached)``
    as a durable chat records it (its message is empty)."""
    model, prompt, completion, cost, cached = call
    return ModelResponse({}, Usage(prompt, completion), cost, model, cached)


def _model_usage(cost: float, prompt: float, completion: float) -> dict[str, Any]:
    return {
        "cost": cost,
        "prompt_tokens": int(prompt),
        "completion_tokens": int(completion),
        "total_tokens": int(prompt + completion),
    }


def gather_usage_summary(agents: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The usage and cost of ``agents``' models summed, in AG2's shape: ``usage_including_cached_inference``
    and ``usage_excluding_cached_inference``, each ``{"total_cost": ..., model: {"cost", "prompt_tokens",
    "completion_tokens", "total_tokens"}}``. Agents without a model add nothing."""
    summed: dict[str, dict[str, Any]] = {
        "usage_including_cached_inference": {"total_cost": 0},
        "usage_excluding_cached_inference": {"total_cost": 0},
    }
    for agent in agents:
        if getattr(agent, "client", None) is None:
            continue
        for kind, usage in agent.usage_summary.to_dict().items():
            into = summed[kind]
            for model, counts in usage.items():
                if model == "total_cost":
                    into["total_cost"] += counts
                    continue
                known = into.setdefault(model, dict.fromkeys(counts, 0))
                for key, value in counts.items():
                    known[key] += value
    return summed
