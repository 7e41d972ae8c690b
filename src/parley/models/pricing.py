"""What a model call costs: list prices for common models, or the price a config gives.

Prices are in US dollars per 1,000 tokens, ``(prompt, completion)``, as AG2's ``price`` field has them.
A config's ``"price": [prompt_per_1k, completion_per_1k]`` wins over the table; a model in neither costs
0 (and a warning says how to set its price).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from parley.models.base import Usage

Price = tuple[float, float]

#: List prices per 1,000 tokens (prompt, completion). Dated snapshots match their undated name.
PRICES_PER_1K: dict[str, Price] = {
    # OpenAI
    "gpt-5": (0.00125, 0.01),
    "gpt-5-mini": (0.00025, 0.002),
    "gpt-5-nano": (0.00005, 0.0004),
    "gpt-5.1": (0.00125, 0.01),
    "gpt-4.1": (0.002, 0.008),
    "gpt-4.1-mini": (0.0004, 0.0016),
    "gpt-4.1-nano": (0.0001, 0.0004),
    "gpt-4o": (0.0025, 0.01),
    "gpt-4o-2024-05-13": (0.005, 0.015),
    "gpt-4o-mini": (0.00015, 0.0006),
    "o1": (0.015, 0.06),
    "o1-mini": (0.0011, 0.0044),
    "o3": (0.002, 0.008),
    "o3-mini": (0.0011, 0.0044),
    "o4-mini": (0.0011, 0.0044),
    "gpt-4-turbo": (0.01, 0.03),
    "gpt-4-turbo-preview": (0.01, 0.03),
    "gpt-4-0125-preview": (0.01, 0.03),
    "gpt-4-1106-preview": (0.01, 0.03),
    "gpt-4": (0.03, 0.06),
    "gpt-4-0613": (0.03, 0.06),
    "gpt-4-0314": (0.03, 0.06),
    "gpt-4-32k": (0.06, 0.12),
    "gpt-4-32k-0613": (0.06, 0.12),
    "gpt-4-32k-0314": (0.06, 0.12),
    "gpt-3.5-turbo": (0.0005, 0.0015),
    "gpt-3.5-turbo-0125": (0.0005, 0.0015),
    "gpt-3.5-turbo-1106": (0.001, 0.002),
    "gpt-3.5-turbo-0613": (0.0015, 0.002),
    "gpt-3.5-turbo-16k": (0.003, 0.004),
    "gpt-3.5-turbo-16k-0613": (0.003, 0.004),
    # Azure OpenAI deployment names
    "gpt-35-turbo": (0.0005, 0.0015),
    "gpt-35-turbo-0125": (0.0005, 0.0015),
    "gpt-35-turbo-1106": (0.001, 0.002),
    "gpt-35-turbo-0613": (0.0015, 0.002),
    "gpt-35-turbo-16k": (0.003, 0.004),
    "gpt-35-turbo-16k-0613": (0.003, 0.004),
    # Anthropic
    "claude-opus-4-6": (0.005, 0.025),
    "claude-opus-4-5": (0.005, 0.025),
    "claude-opus-4-1": (0.015, 0.075),
    "claude-opus-4": (0.015, 0.075),
    "claude-sonnet-4-5": (0.003, 0.015),
    "claude-sonnet-4": (0.003, 0.015),
    "claude-3-7-sonnet": (0.003, 0.015),
    "claude-3-5-sonnet": (0.003, 0.015),
    "claude-haiku-4-5": (0.001, 0.005),
    "claude-3-5-haiku": (0.0008, 0.004),
    "claude-3-haiku": (0.00025, 0.00125),
    # DeepSeek
    "deepseek-chat": (0.00027, 0.0011),
}

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")
_warned: set[str] = set()


def parse_price(price: Any) -> Price | None:
    """A config's ``price`` as ``(prompt, completion)`` per 1,000 tokens (one number: both).

    Raises:
        ValueError: ``price`` is neither a number nor two numbers.
    """
    if price is None:
        return None
    if isinstance(price, int | float) and not isinstance(price, bool):
        return float(price), float(price)
    if (
        isinstance(price, list | tuple)
        and len(price) == 2
        and all(isinstance(item, int | float) and not isinstance(item, bool) for item in price)
    ):
        return float(price[0]), float(price[1])
    raise ValueError(
        f"price must be [prompt_price_per_1k, completion_price_per_1k] (or one number), not {price!r}"
    )


def undated(model: str) -> str:
    """A model's name without its snapshot's date (``gpt-4o-2024-08-06``: ``gpt-4o``)."""
    return _SNAPSHOT.sub("", model)


def price_of(model: str) -> Price | None:
    """The table's price for ``model`` (or for its undated name), if it has one."""
    if model in PRICES_PER_1K:
        return PRICES_PER_1K[model]
    return PRICES_PER_1K.get(undated(model))


def cost_of(usage: Usage, *models: str, price: Price | None = None, warn: bool = True) -> float:
    """What ``usage`` costs at ``price``, else at the table's price of the first of ``models`` it knows.

    An unknown model costs 0; with ``warn``, a warning (once per model) says how to give its price.
    """
    if price is None:
        price = next((found for model in models if model and (found := price_of(model))), None)
    if price is None:
        name = next((model for model in models if model), "")
        if warn and name not in _warned:
            _warned.add(name)
            import logging  # only to warn: most processes never do

            logging.getLogger("parley.models").warning(
                "no price known for model %r: its cost counts as 0. Add "
                '"price": [prompt_price_per_1k, completion_price_per_1k] to its config.',
                name,
            )
        return 0.0
    return (usage.prompt_tokens * price[0] + usage.completion_tokens * price[1]) / 1000


def price_in_advance(config_price: Any, model: str | None, api_type: str | None = None) -> Price | None:
    """The price a call of this model will be charged at, known before the call: the config's ``price``,
    else the table's for ``model``; the embedded model is free. ``None``: not known."""
    if api_type == "local":
        return 0.0, 0.0
    price = parse_price(config_price)
    if price is None and model:
        price = price_of(model)
    return price


def worst_price(prices: Sequence[Price | None]) -> Price | None:
    """A price no call at any of ``prices`` costs more than (``None`` if one is not known)."""
    if not prices or any(price is None for price in prices):
        return None
    known = [price for price in prices if price is not None]
    return max(price[0] for price in known), max(price[1] for price in known)
