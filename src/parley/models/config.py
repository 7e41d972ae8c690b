"""AG2's ``llm_config`` turned into a model client.

``{"config_list": [{"model", "api_key", "base_url", "api_type", "api_version", "price", ...}, ...],
"temperature": ..., "cache_seed": ..., "timeout": ...}``: the configs are tried in order, each through
the client for its ``api_type``, until one answers. Keys beside ``config_list`` are request parameters
for every config (``temperature``, ``max_tokens``...) or settings (``cache_seed``, ``timeout``,
``max_retries``, ``tool_call_mode``...); a config's own keys win over them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from parley.coroutines import run_sync
from parley.messages import Message
from parley.models.base import ModelClient, ModelError, ModelResponse, is_model_client
from parley.models.cache import active_cache
from parley.models.pricing import Price, price_in_advance, worst_price

if TYPE_CHECKING:
    from parley.models.cache import ResponseCache

#: Where the client for each ``api_type`` lives; imported only when a config uses it.
PROVIDERS: dict[str, str] = {
    "openai": "parley.models.openai_client:OpenAIClient",
    "azure": "parley.models.openai_client:OpenAIClient",
    "anthropic": "parley.models.anthropic_client:AnthropicClient",
    "local": "parley.models.local:LocalModel",
}

#: ``gen_ai.provider.name`` (OpenTelemetry's GenAI conventions) of each ``api_type``.
_PROVIDER_NAMES = {
    "openai": "openai",
    "azure": "azure.ai.openai",
    "anthropic": "anthropic",
    "local": "llama.cpp",
}

#: How a model is asked for tool calls: its native tool calling, or a JSON schema (see ``json_tools``).
TOOL_CALL_MODES = ("native", "json_schema")
#: The ways a server takes the JSON schema of the ``json_schema`` tool mode (``json_tools.DIALECTS``).
RESPONSE_FORMAT_TYPES = ("json_schema", "json_object")

#: Keys of a model config that say which model to reach and how; any other key is a request parameter.
CLIENT_KEYS = frozenset(
    {
        "model",
        "api_key",
        "base_url",
        "api_type",
        "api_version",
        "price",
        "tags",
        "tool_call_mode",
        "response_format_type",
        "model_path",
        "sha256",
        "n_ctx",
        "n_threads",
        "chat_format",
        "azure_endpoint",
        "azure_deployment",
        "azure_ad_token",
        "organization",
        "project",
        "default_headers",
        "default_query",
        "timeout",
        "max_retries",
        "cache_seed",
        "cache_path_root",
        "http_client",
        "model_client_cls",
    }
)

#: Keys of ``llm_config`` itself that are neither request parameters nor per-config defaults.
SETTINGS_KEYS = frozenset(
    {"config_list", "routing_method", "check_every_ms", "allow_format_str_template", "tools", "functions"}
)

#: Config keys that do not change a model's answer, so they are left out of cache keys.
_NOT_IN_CACHE_KEY = frozenset(
    {
        "api_key",
        "azure_ad_token",
        "price",
        "tags",
        "timeout",
        "max_retries",
        "cache_seed",
        "cache_path_root",
        "default_headers",
        "default_query",
        "http_client",
        "organization",
        "project",
    }
)

#: Request parameters that change how an answer arrives, not what it is, so they are left out of cache keys.
_NOT_IN_REQUEST_KEY = frozenset({"stream", "stream_options"})

_DEFAULT_ENDPOINTS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}


class AllConfigsFailedError(ModelError):
    """Every config of an ``llm_config`` failed; :attr:`failures` has each config's error, in order.

    As in AG2, where the last config's error is what the call raises, the error is also an instance of
    that error's class, with its attributes: ``except openai.RateLimitError`` catches it, and
    ``status_code`` is there.
    """

    def __init__(self, message: str, failures: list[tuple[str, str, Exception]]) -> None:
        super().__init__(message)
        self.failures = failures

    __str__ = ModelError.__str__  # not the last error's (a KeyError's quotes its text)


_failed_as: dict[type[BaseException], type[AllConfigsFailedError]] = {}


def _failed_class(last: type[BaseException]) -> type[AllConfigsFailedError]:
    """:class:`AllConfigsFailedError`, also a subclass of ``last`` (the last config's error class) where
    the two can be combined."""
    if issubclass(last, ModelError):
        return AllConfigsFailedError
    found = _failed_as.get(last)
    if found is None:
        try:
            found = type(AllConfigsFailedError.__name__, (AllConfigsFailedError, last), {})
        except TypeError:  # exception classes whose instances are laid out differently
            found = AllConfigsFailedError
        else:
            found.__module__ = AllConfigsFailedError.__module__
            found.__qualname__ = AllConfigsFailedError.__qualname__
        _failed_as[last] = found
    return found


current_llm_config: ContextVar[Any] = ContextVar("parley_current_llm_config", default=None)
"""The ``LLMConfig`` of the enclosing ``with LLMConfig(...):`` block, or ``None``."""


def resolve_llm_config(llm_config: Any) -> Any:
    """An agent's ``llm_config``: the one given, or for ``None`` that of an enclosing ``with LLMConfig(...)``
    block (``None`` outside one)."""
    return current_llm_config.get() if llm_config is None else llm_config


def model_client_from_llm_config(llm_config: Any) -> ModelClient | None:
    """The model an agent's ``llm_config`` describes.

    ``False`` or ``None`` means no model; a :class:`ModelClient` (such as a ``ScriptedModel``) is used as
    it is; a dict in AG2's format (``{"config_list": [...], "temperature": ..., "cache_seed": ...}``, or
    a single config with ``"model"``), a list of configs, an ``LLMConfig`` or one of its entries (such
    as ``OpenAILLMConfigEntry``) becomes a client that tries each config in order.
    """
    if llm_config is None or llm_config is False:
        return None
    if isinstance(llm_config, dict):
        return ConfigListClient(llm_config)
    classes = _llm_config_classes()
    if classes is not None:
        if isinstance(llm_config, list) and any(
            isinstance(item, classes.LLMConfigEntry) for item in llm_config
        ):
            llm_config = classes.LLMConfig(*llm_config)
        if isinstance(llm_config, classes.LLMConfigEntry):
            llm_config = classes.LLMConfig(llm_config)
        if isinstance(llm_config, classes.LLMConfig):
            return ConfigListClient(llm_config.for_clients())
    if isinstance(llm_config, list):
        return ConfigListClient({"config_list": llm_config})
    if is_model_client(llm_config):
        return llm_config
    missing = [name for name in ("create", "a_create") if not callable(getattr(llm_config, name, None))]
    if len(missing) == 1:
        raise TypeError(
            f"llm_config is a {type(llm_config).__name__}, which has no {missing[0]}() method: a model "
            "client needs both create(messages, tools=None, **params) and its async twin a_create "
            "(docs/models.md)"
        )
    raise TypeError(
        "llm_config must be False, None, a dict with a 'config_list', a list of configs, an LLMConfig, or a "
        f"model client (such as ScriptedModel), not {type(llm_config).__name__}"
    )


def split_llm_config(llm_config: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Validate AG2's llm_config and split it into its configs and the settings beside them.

    Each config comes back complete: the per-config keys set beside ``config_list`` (``api_key``,
    ``timeout``, ``cache_seed``...) are its defaults, and ``base_url`` has a scheme.

    Raises:
        ValueError: a config has no ``model``, an unknown ``api_type`` or ``tool_call_mode``, or a bad
            ``price``.
    """
    settings = {key: value for key, value in llm_config.items() if key != "config_list"}
    if "config_list" in llm_config:
        entries = llm_config["config_list"]
        if isinstance(entries, dict):  # one config, as AG2 also takes it
            entries = [entries]
        if not isinstance(entries, list) or not entries:
            raise ValueError("llm_config['config_list'] must be a non-empty list of model configs")
    elif "model" in llm_config or llm_config.get("api_type") == "local":
        entries = [{key: settings.pop(key) for key in list(settings) if key in CLIENT_KEYS}]
    else:
        raise ValueError(
            "llm_config needs a 'config_list' (or a 'model'); got keys " + str(sorted(llm_config))
        )
    defaults = {key: value for key, value in settings.items() if key in CLIENT_KEYS}
    configs = []
    for index, entry in enumerate(entries):
        entry = _entry_as_dict(entry)
        local = isinstance(entry, dict) and {**defaults, **entry}.get("api_type") == "local"
        if local and not entry.get("model"):
            entry = {**entry, "model": _local_default_model()}
        if not isinstance(entry, dict) or not entry.get("model"):
            raise ValueError(f"llm_config['config_list'][{index}] must be a dict with a 'model'")
        configs.append(_checked({**defaults, **entry}, index))
    return configs, settings


def _local_default_model() -> str:
    """The ``model`` of a local config that names none: the embedded model's default weights."""
    from parley.models.weights import DEFAULT_WEIGHTS

    return DEFAULT_WEIGHTS.name


def _entry_as_dict(entry: Any) -> Any:
    """A config entry object (such as ``OpenAILLMConfigEntry``) as the dict it stands for; anything
    else as it is."""
    classes = _llm_config_classes()
    if classes is not None and isinstance(entry, classes.LLMConfigEntry):
        return classes.LLMConfig(entry).for_clients()["config_list"][0]
    return entry


def keeps_tools(llm_config: Any) -> bool:
    """Whether ``llm_config`` lists an agent's tools and functions as AG2 keeps them (its ``tools`` and
    ``functions`` keys): a dict or an ``LLMConfig``."""
    if isinstance(llm_config, dict):
        return True
    classes = _llm_config_classes()
    return classes is not None and isinstance(llm_config, classes.LLMConfig)


def _llm_config_classes() -> Any:
    """The module of ``LLMConfig`` and its entries, if it is loaded (it needs pydantic, so it is loaded
    only when used: an object can only be one of them if it was)."""
    return sys.modules.get("parley.models.llm_config")


def _checked(config: dict[str, Any], index: int) -> dict[str, Any]:
    where = f"llm_config['config_list'][{index}] (model {config['model']!r})"
    if config.get("model_client_cls") is not None:
        raise ValueError(
            f"{where}: model_client_cls {config['model_client_cls']!r} names an AG2 custom client class, "
            "which parley does not load; give the client object itself as llm_config (an object with "
            "create and a_create, see docs/models.md)"
        )
    api_type = config.get("api_type") or "openai"
    if api_type.startswith("azure"):
        api_type = "azure"
    if api_type not in PROVIDERS:
        raise ValueError(f"{where}: unknown api_type {api_type!r}; parley supports {sorted(PROVIDERS)}")
    config["api_type"] = api_type
    mode = config.get("tool_call_mode", "native")
    if mode not in TOOL_CALL_MODES:
        raise ValueError(f"{where}: tool_call_mode must be one of {TOOL_CALL_MODES}, not {mode!r}")
    if api_type == "anthropic" and mode not in (None, "native"):
        raise ValueError(
            f"{where}: tool_call_mode {mode!r} is for OpenAI-compatible servers and the local model; "
            "Anthropic's models call tools natively"
        )
    dialect = config.get("response_format_type")
    if dialect is not None and dialect not in RESPONSE_FORMAT_TYPES:
        raise ValueError(
            f"{where}: response_format_type must be one of {RESPONSE_FORMAT_TYPES}, not {dialect!r}"
        )
    from parley.models.pricing import parse_price

    try:
        parse_price(config.get("price"))
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    base_url = config.get("base_url")
    if isinstance(base_url, str) and base_url and "://" not in base_url:
        config["base_url"] = f"http://{base_url}"
    check_numbers(config, where)
    return config


_NUMBERS = ("temperature", "top_p", "frequency_penalty", "presence_penalty")
_WHOLE_NUMBERS = ("max_tokens", "max_completion_tokens", "n", "seed", "max_retries")


def check_numbers(params: dict[str, Any], where: str) -> None:
    """Fail, naming it, on a common request parameter that is not a number (a model API would refuse it
    only once asked, or a client would misread it)."""
    for key in _NUMBERS:
        value = params.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"{where}: {key} must be a number, not {value!r}")
    timeout = params.get("timeout")
    if isinstance(timeout, str | bool):  # an SDK's timeout object is taken as it is
        raise ValueError(f"{where}: timeout must be a number of seconds, not {timeout!r}")
    for key in _WHOLE_NUMBERS:
        value = params.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{where}: {key} must be a whole number, not {value!r}")


def request_params_of(config: dict[str, Any], client_keys: frozenset[str] = CLIENT_KEYS) -> dict[str, Any]:
    """The request parameters a config sets: every key that is not one of ``client_keys`` (a key set to
    ``None`` is not set: ``"max_tokens": None`` leaves the bound to the model, or to a budget)."""
    return {key: value for key, value in config.items() if key not in client_keys and value is not None}


class ConfigListClient:
    """Tries each config of an AG2 ``config_list`` in order and answers with the first that works.

    With a ``cache_seed``, a request answered before (by any of the configs) is answered from the disk
    cache without calling a model. ``routing_method="round_robin"`` starts each request at the next
    config instead of the first.
    """

    def __init__(self, llm_config: dict[str, Any]) -> None:
        self.config_list, self.settings = split_llm_config(llm_config)
        self.params = request_params_of(self.settings, CLIENT_KEYS | SETTINGS_KEYS)
        check_numbers(self.params, "llm_config")
        routing = self.settings.get("routing_method") or "fixed_order"
        if routing not in ("fixed_order", "round_robin"):
            raise ValueError(f"routing_method must be 'fixed_order' or 'round_robin', not {routing!r}")
        self.routing_method: str = routing
        self._clients: list[ModelClient | None] = [None] * len(self.config_list)
        self._caches = [_cache_for(config) for config in self.config_list]
        self._identities = [
            {key: value for key, value in config.items() if key not in _NOT_IN_CACHE_KEY}
            for config in self.config_list
        ]
        self._start = 0

    @property
    def token_price(self) -> Price | None:
        """Dollars per 1,000 prompt and completion tokens that no config charges more than, if every
        config's price is known (budgets check a cost budget before each call with it)."""
        return worst_price(
            [price_in_advance(c.get("price"), c.get("model"), c.get("api_type")) for c in self.config_list]
        )

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        return run_sync(self._create(messages, tools, params, sync=True))

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        return await self._create(messages, tools, params, sync=False)

    async def _create(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        params: dict[str, Any],
        *,
        sync: bool,
    ) -> ModelResponse:
        request = {**self.params, **params}
        order = self._order()
        shared = active_cache.get()
        keys = self._keys(messages, tools, request, shared is not None)
        caches = self._caches if shared is None else [shared.cache] * len(self._caches)
        cached = self._cached(order, keys, caches)
        if cached is not None:
            if request.get("stream"):
                from parley.models.stream_assembly import emit_whole
                from parley.models.streaming import token_sink

                emit_whole(cached.message, token_sink.get())
            return cached
        failures: list[tuple[str, str, Exception]] = []
        for index in order:
            try:
                client = self._client(index)
                if sync:
                    response = client.create(messages, tools, **request)
                else:
                    response = await client.a_create(messages, tools, **request)
            except Exception as error:
                failures.append(self._failure(index, error))
                _tell_sink_broken_off()
                if index != order[-1]:
                    _warn_of_fallback(*failures[-1])
                continue
            self._store(index, keys, caches, response)
            return response
        raise _all_failed(failures)

    @property
    def provider(self) -> str:
        """The provider of the config the next request is sent to first, as OpenTelemetry's GenAI
        conventions name it."""
        api_type = self.config_list[self._next()].get("api_type") or "openai"
        return _PROVIDER_NAMES.get(api_type, api_type)

    @property
    def streams(self) -> bool:
        """Whether its requests may ask for a streamed reply (``"stream": True`` beside the config list or
        in one of its configs)."""
        return bool(self.params.get("stream")) or any(config.get("stream") for config in self.config_list)

    @property
    def next_model(self) -> str:
        """The model of the config the next request is sent to first (the first config's, or with
        ``round_robin`` the next one's; another config answers if it fails)."""
        return str(self.config_list[self._next()].get("model"))

    def _next(self) -> int:
        return self._start if self.routing_method == "round_robin" else 0

    def _client(self, index: int) -> ModelClient:
        client = self._clients[index]
        if client is None:
            client = self._clients[index] = build_provider_client(self.config_list[index], self.settings)
        return client

    def _order(self) -> list[int]:
        count = len(self.config_list)
        if self.routing_method == "fixed_order" or count == 1:
            return list(range(count))
        start, self._start = self._start, (self._start + 1) % count
        return [(start + offset) % count for offset in range(count)]

    def _keys(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        request: dict[str, Any],
        every_config: bool,
    ) -> list[str | None]:
        if not every_config and all(cache is None for cache in self._caches):
            return [None] * len(self._caches)
        from parley.models.cache import request_key

        answer_params = {key: value for key, value in request.items() if key not in _NOT_IN_REQUEST_KEY}
        return [
            None
            if cache is None and not every_config
            else request_key(identity, messages, tools, answer_params)
            for cache, identity in zip(self._caches, self._identities, strict=True)
        ]

    @staticmethod
    def _cached(
        order: list[int], keys: list[str | None], caches: Sequence[ResponseCache | None]
    ) -> ModelResponse | None:
        for index in order:
            cache, key = caches[index], keys[index]
            if cache is not None and key is not None:
                response = cache.get(key)
                if response is not None:
                    return response
        return None

    @staticmethod
    def _store(
        index: int, keys: list[str | None], caches: Sequence[ResponseCache | None], response: ModelResponse
    ) -> None:
        cache, key = caches[index], keys[index]
        if cache is not None and key is not None:
            cache.set(key, response)

    def _failure(self, index: int, error: Exception) -> tuple[str, str, Exception]:
        from parley.models.faults import redact, redact_error

        config = self.config_list[index]
        client = self._clients[index]
        secrets = (config.get("api_key"), config.get("azure_ad_token"), *getattr(client, "secrets", ()))
        endpoint = redact(str(getattr(client, "endpoint", None) or endpoint_of(config)), secrets)
        return str(config.get("model")), endpoint, redact_error(error, secrets)


def _warn_of_fallback(model: str, endpoint: str, error: Exception) -> None:
    """Log, as a warning of ``parley.models``, that a config failed and the next one is tried."""
    import logging  # only when a config fails

    logging.getLogger("parley.models").warning(
        "the model %s at %s failed (%s: %s); trying the next config",
        model,
        endpoint,
        type(error).__name__,
        error,
    )


def endpoint_of(config: dict[str, Any]) -> str:
    """Where a config's requests go, for error messages."""
    api_type = config.get("api_type", "openai")
    found = config.get("base_url") or config.get("azure_endpoint") or config.get("model_path")
    return str(found or _DEFAULT_ENDPOINTS.get(api_type, api_type))


def _tell_sink_broken_off() -> None:
    """Tell the call's token sink, if any, that what a failed config streamed is given up."""
    from parley.models.streaming import StreamedText, token_sink

    sink = token_sink.get()
    if sink is not None:
        sink(StreamedText("", broken_off=True))


def build_provider_client(config: dict[str, Any], settings: dict[str, Any]) -> ModelClient:
    """The client for one config, by its ``api_type`` (``openai`` by default)."""
    api_type = config.get("api_type") or "openai"
    target = PROVIDERS.get(api_type)
    if target is None:
        raise ValueError(
            f"unknown api_type {api_type!r} for model {config.get('model')!r}; known: {sorted(PROVIDERS)}"
        )
    module_name, class_name = target.split(":")
    provider = getattr(importlib.import_module(module_name), class_name)
    client: ModelClient = provider.from_config(config, settings)
    return client


def _cache_for(config: dict[str, Any]) -> ResponseCache | None:
    seed = config.get("cache_seed")
    if seed is None:
        return None
    from parley.models.cache import DEFAULT_CACHE_ROOT, ResponseCache

    return ResponseCache(seed, config.get("cache_path_root") or DEFAULT_CACHE_ROOT)


def _all_failed(failures: list[tuple[str, str, Exception]]) -> AllConfigsFailedError:
    lines = [
        f"model {model!r} at {endpoint}: {type(error).__name__}: {error}"
        for model, endpoint, error in failures
    ]
    if len(failures) == 1:
        message = "the model call failed: " + lines[0]
    else:
        message = f"all {len(failures)} model configs failed, tried in order:\n  " + "\n  ".join(lines)
    last = failures[-1][2]
    kind = _failed_class(type(last))
    if kind is AllConfigsFailedError:
        error = AllConfigsFailedError(message, failures)
    else:
        error = type(last).__new__(kind, message)  # the constructor of the last error's layout
        error.__dict__.update(vars(last))  # the SDK error's status_code, response, body...
        AllConfigsFailedError.__init__(error, message, failures)
    error.__cause__ = last
    return error
