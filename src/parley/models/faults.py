"""What goes wrong with a model server's answer, said clearly and without secrets.

Every error a model client raises names the model, the endpoint, the HTTP status and the start of the
body, with API keys and other credentials replaced by ``**********``: the key the client was given
(whatever it looks like), and anything shaped like a key or a bearer token that a server quotes back.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import Any, TypeVar

from parley.models.base import ModelError

REDACTED = "**********"

E = TypeVar("E", bound=BaseException)

#: Keys shorter than this are not searched for verbatim (``"x"`` would blank out every x); the key
#: patterns below still catch real keys of any provider.
MIN_SECRET_LENGTH = 6

# patterns, compiled by ``re`` (and kept in its cache) the first time an error is redacted
_KEY_SHAPES = (
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"  # OpenAI, Anthropic (sk-ant-...), and look-alikes
    r"|\bAIza[0-9A-Za-z_\-]{20,}"  # Google
)
#: Secrets that follow a marker, which is kept: bearer tokens, a URL's password, keys in a query string.
_AFTER_MARKERS = (
    r"(?i)(Bearer\s+)[A-Za-z0-9._~+/=\-]{8,}"
    r"|(://[^/\s:@]+:)[^/\s@]+(?=@)"
    r"|([?&](?:key|api_key|api-key|token|access_token)=)[^&\s\"']+"
)


def _keep_marker(match: re.Match[str]) -> str:
    return next(group for group in match.groups() if group is not None) + REDACTED


#: How much of a bad body an error quotes.
EXCERPT_LENGTH = 300
_REDACTION_MARGIN = 4096


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every one of ``secrets``, and anything shaped like a key or token, blanked out."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_LENGTH and secret in text:
            text = text.replace(secret, REDACTED)
    return re.sub(_AFTER_MARKERS, _keep_marker, re.sub(_KEY_SHAPES, REDACTED, text))


def excerpt(body: Any, secrets: Iterable[str | None] = (), length: int = EXCERPT_LENGTH) -> str:
    """The start of a response body (text, bytes or decoded JSON), redacted, on one line."""
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    if not isinstance(body, str):
        import json

        body = json.dumps(body, default=str, ensure_ascii=False)
    # Redact before cutting, so that a key at the cut is not left half-shown: what is redacted goes on
    # well past what is shown, by more than any key is long.
    text = " ".join(redact(body[: length * 4 + _REDACTION_MARGIN], secrets).split())
    return repr(text[:length] + ("..." if len(text) > length else ""))


def redact_error(error: E, secrets: Iterable[str | None] = ()) -> E:
    """Blank out secrets in ``error`` (its message, the SDK's ``message`` and ``body``) and its causes.

    The exception is changed in place, so a traceback printed later shows no key either.
    """
    known = tuple(secret for secret in secrets if secret)
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.args = tuple(redact(arg, known) if isinstance(arg, str) else arg for arg in current.args)
        for attribute in ("message", "body"):
            value = getattr(current, attribute, None)
            if value is not None:
                with contextlib.suppress(AttributeError):  # a read-only property
                    setattr(current, attribute, _redacted_value(value, known))
        current = current.__cause__ or current.__context__
    return error


def _redacted_value(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _redacted_value(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted_value(item, secrets) for item in value]
    return value


class ModelResponseError(ModelError):
    """A model server answered, but not with a usable reply.

    The message names the model, the endpoint, the HTTP status and the start of the body. ``retryable``
    says whether asking again may help (a proxy's error page may; an empty choices list will not).
    """

    def __init__(
        self,
        problem: str,
        *,
        model: str,
        endpoint: str,
        status: int | None = None,
        body: Any = None,
        retryable: bool = False,
        secrets: Iterable[str | None] = (),
    ) -> None:
        secrets = tuple(secrets)
        self.model = model
        self.endpoint = redact(endpoint, secrets)
        self.status = status
        self.body = None if body is None else excerpt(body, secrets)
        self.retryable = retryable
        where = f"model {model!r} at {self.endpoint}"
        answered = f" (HTTP {status})" if status is not None else ""
        quoted = f": {self.body}" if self.body is not None else ""
        super().__init__(f"{where} {problem}{answered}{quoted}")
