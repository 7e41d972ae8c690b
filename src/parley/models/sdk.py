"""What the provider clients share: importing an SDK on first use, splitting request parameters, and
telling a usable answer from a fault (retrying the faults that may pass)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import Any, TypeVar

from parley.models.faults import ModelResponseError, redact_error

R = TypeVar("R")


def import_sdk(module: str, extra: str) -> ModuleType:
    """Import a provider SDK, or fail saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"this model config needs the {module!r} package: pip install 'parley-llm[{extra}]'"
        ) from error


_parameters: dict[Any, frozenset[str]] = {}


def split_known(function: Callable[..., Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` for ``function``: those it does not name are moved into ``extra_body``.

    Servers accept parameters an SDK does not know (vLLM's ``top_k``, Ollama's ``num_ctx``...); the SDK
    sends them only through ``extra_body``.
    """
    key = getattr(function, "__func__", function)
    known = _parameters.get(key)
    if known is None:
        known = _parameters[key] = frozenset(inspect.signature(function).parameters)
    unknown = {name: value for name, value in params.items() if name not in known}
    if not unknown:
        return params
    kept = {name: value for name, value in params.items() if name in known}
    kept["extra_body"] = {**unknown, **(params.get("extra_body") or {})}
    return kept


class PerEventLoop:
    """Holds one async SDK client per event loop: an async HTTP client must not outlive its loop."""

    __slots__ = ("_client", "_factory", "_loop")

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._loop: Any = None
        self._client: Any = None

    def get(self) -> Any:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._client = self._factory()
            self._loop = loop
        return self._client


#: Seconds before the first retry of an answer that was not a usable reply; doubled for each further one.
UNUSABLE_RETRY_DELAY = 0.5
#: The SDKs' own default number of retries, used for unusable answers too when a config sets none.
DEFAULT_MAX_RETRIES = 2


def retry_unusable(call: Callable[[], R], max_retries: int, secrets: Sequence[str | None]) -> R:
    """``call()``, asked again (with backoff) while it fails with a retryable :class:`ModelResponseError`.

    The SDK retries rate limits, 5xx answers and dropped connections itself; this covers answers with
    status 200 that are not a reply, such as a proxy's HTML error page. Any other error is redacted of
    ``secrets`` and raised as it is.
    """
    import time

    attempt = 0
    while True:
        try:
            return call()
        except ModelResponseError as error:
            if not error.retryable or attempt >= max_retries:
                raise
        except Exception as error:
            redact_error(error, secrets)
            raise
        time.sleep(UNUSABLE_RETRY_DELAY * 2**attempt)
        attempt += 1


async def a_retry_unusable(
    call: Callable[[], Awaitable[R]], max_retries: int, secrets: Sequence[str | None]
) -> R:
    """Async twin of :func:`retry_unusable`."""
    import asyncio

    attempt = 0
    while True:
        try:
            return await call()
        except ModelResponseError as error:
            if not error.retryable or attempt >= max_retries:
                raise
        except Exception as error:
            redact_error(error, secrets)
            raise
        await asyncio.sleep(UNUSABLE_RETRY_DELAY * 2**attempt)
        attempt += 1


def is_event_stream(http_response: Any) -> bool:
    """Whether an HTTP response (``httpx``'s) is a server-sent event stream."""
    return "text/event-stream" in str(http_response.headers.get("content-type", ""))


def decode_json_body(
    http_response: Any, fault: Callable[..., ModelResponseError], expected_key: str
) -> dict[str, Any]:
    """The JSON object of a response body that was read, holding ``expected_key``, or a fault.

    ``fault(problem, status=..., body=..., retryable=...)`` builds the error: an event stream nobody
    asked for, a body that is not JSON (an HTML error page...), or JSON of another shape.
    """
    import json

    status = http_response.status_code
    text = http_response.text
    content_type = str(http_response.headers.get("content-type", "")).split(";")[0] or "no content type"
    start = text.lstrip()[:6]
    if is_event_stream(http_response) or start.startswith(("data:", "event:")):
        raise fault("answered with an event stream, but no stream was asked for", status=status, body=text)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise fault(
            f"answered with a body that is not JSON ({content_type})",
            status=status,
            body=text,
            retryable=True,
        ) from None
    if not isinstance(data, dict) or expected_key not in data:
        raise fault(
            f"answered with JSON that is not a reply (no {expected_key!r})",
            status=status,
            body=text,
            retryable=True,
        )
    return data


async def awaited(value: Any) -> Any:
    """``value``, awaited if it is awaitable (the SDKs' async raw responses differ in whether they parse
    synchronously)."""
    return await value if inspect.isawaitable(value) else value


def header_secrets(headers: Any) -> list[str]:
    """The values of headers whose names say they hold a key, a token or credentials."""
    return [
        str(value)
        for name, value in (headers or {}).items()
        if any(word in str(name).lower() for word in ("key", "auth", "token"))
    ]
