"""How long a model's reply can be, for the budgets that must allow for it.

A token or cost budget bounds a reply by sending ``max_tokens``. Model APIs refuse a ``max_tokens``
above what the model can write (OpenAI answers 400 "max_tokens is too large"; vLLM refuses one that
does not fit the context), so a budget sends one only when it binds: below the model's own limit, when
parley knows it, and never above :data:`UNKNOWN_MODEL_CAP` otherwise.
"""

from __future__ import annotations

import math
from typing import Any

from parley.models.pricing import undated

#: The most tokens these models write in one reply, by name; a dated snapshot (``gpt-4o-2024-08-06``)
#: has its undated name's limit unless it is listed itself.
REPLY_TOKEN_LIMITS: dict[str, int] = {
    "gpt-3.5-turbo": 4_096,
    "gpt-4": 8_192,
    "gpt-4-turbo": 4_096,
    "gpt-4-turbo-preview": 4_096,
    "gpt-4-1106-preview": 4_096,
    "gpt-4-0125-preview": 4_096,
    "gpt-4o": 16_384,
    "gpt-4o-2024-05-13": 4_096,
    "gpt-4o-mini": 16_384,
    "gpt-4.1": 32_768,
    "gpt-4.1-mini": 32_768,
    "gpt-4.1-nano": 32_768,
    "o1": 100_000,
    "o1-mini": 65_536,
    "o1-preview": 32_768,
    "o3": 100_000,
    "o3-mini": 100_000,
    "o4-mini": 100_000,
    "gpt-5": 128_000,
    "gpt-5-mini": 128_000,
    "gpt-5-nano": 128_000,
}

#: The most a budget asks for in one reply of a model whose limit parley does not know: every current
#: chat model accepts it. Set ``max_tokens`` in the model's config to bound its replies otherwise.
UNKNOWN_MODEL_CAP = 4_096

#: ``max_tokens`` when a config sets none: the Anthropic messages API requires one.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4_096
#: ``max_tokens`` of the embedded model when a config sets none.
LOCAL_DEFAULT_MAX_TOKENS = 512

_LIMIT_KEYS = ("max_tokens", "max_completion_tokens")


def known_reply_limit(model: str | None) -> int | None:
    """The most tokens ``model`` writes in one reply, if parley knows it (a fine-tune,
    ``ft:gpt-4o-mini-2024-07-18:org::id``, has its base model's)."""
    if not model:
        return None
    if model.startswith("ft:"):
        model = model.split(":")[1]
    found = REPLY_TOKEN_LIMITS.get(model)
    return found if found is not None else REPLY_TOKEN_LIMITS.get(undated(model))


class ReplyBounds:
    """How long a client's replies can be, as a budget sees it.

    Attributes:
        fixed: the largest ``max_tokens`` a config sets itself (a budget's ``max_tokens`` does not
            change it), ``None`` if none does.
        takes_cap: whether some config takes the budget's ``max_tokens`` (it sets none of its own).
        open_limit: the most those configs write when no ``max_tokens`` is sent (``None``: not known).
    """

    __slots__ = ("fixed", "open_limit", "takes_cap")

    def __init__(self, fixed: int | None, takes_cap: bool, open_limit: int | None) -> None:
        self.fixed = fixed
        self.takes_cap = takes_cap
        self.open_limit = open_limit

    def __repr__(self) -> str:
        return f"ReplyBounds(fixed={self.fixed}, takes_cap={self.takes_cap}, open_limit={self.open_limit})"

    def ceiling(self) -> tuple[float, int | None]:
        """From how many tokens on a budget's bound on the reply no longer binds, and the ``max_tokens``
        to send from there on (``None``: none): a budget that leaves less sends what it leaves."""
        if not self.takes_cap:
            return math.inf, None
        if self.open_limit is not None:
            return self.open_limit, None
        return UNKNOWN_MODEL_CAP, UNKNOWN_MODEL_CAP


def reply_bounds(client: Any) -> ReplyBounds:
    """What a budget must allow for in ``client``'s replies: an AG2 config list (each config by its
    ``api_type`` and model, ``max_tokens`` beside ``config_list`` counting for every config), or one
    client (its ``params``, and its ``reply_token_limit`` when it has one)."""
    shared = _set_limit(getattr(client, "params", None))
    configs = getattr(client, "config_list", None)
    if not isinstance(configs, list):
        if shared is not None:
            return ReplyBounds(shared, False, None)
        limit = getattr(client, "reply_token_limit", None)
        return ReplyBounds(None, True, limit if isinstance(limit, int) else None)
    fixed: int | None = None
    takes_cap = False
    limits: list[int | None] = []
    for config in configs:
        own = _set_limit(config) or shared
        if own is not None:
            fixed = own if fixed is None else max(fixed, own)
        else:
            takes_cap = True
            limits.append(_default_limit(config))
    known = [limit for limit in limits if limit is not None]
    open_limit = max(known) if known and len(known) == len(limits) else None
    return ReplyBounds(fixed, takes_cap, open_limit)


def _set_limit(params: Any) -> int | None:
    if isinstance(params, dict):
        for key in _LIMIT_KEYS:
            value = params.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _default_limit(config: dict[str, Any]) -> int | None:
    api_type = config.get("api_type")
    if api_type == "anthropic":
        return ANTHROPIC_DEFAULT_MAX_TOKENS
    if api_type == "local":
        return LOCAL_DEFAULT_MAX_TOKENS
    return known_reply_limit(config.get("model"))
