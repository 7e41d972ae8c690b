"""AG2's configuration classes: :class:`LLMConfig` and its entries, such as :class:`OpenAILLMConfigEntry`.

An ``LLMConfig`` is accepted wherever an ``llm_config`` dict is, and means the same::

    llm_config = LLMConfig({"model": "gpt-4o-mini", "api_key": "sk-..."}, temperature=0)
    assistant = AssistantAgent("assistant", llm_config=llm_config)

    with LLMConfig({"model": "gpt-4o-mini"}):
        writer = AssistantAgent("writer")  # no llm_config: the enclosing one

The entries are pydantic models, validated when made: a ``model`` is required, ``temperature`` and
``top_p`` lie in [0, 1] and ``max_tokens`` is not negative (as in AG2), and ``api_type`` is one parley
serves. This module imports pydantic; ``import parley`` does not load it until ``LLMConfig`` is used.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextvars import Token
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_serializer, field_validator

from parley.models.config import PROVIDERS, current_llm_config

__all__ = [
    "AnthropicLLMConfigEntry",
    "AzureOpenAILLMConfigEntry",
    "LLMConfig",
    "LLMConfigEntry",
    "LocalLLMConfigEntry",
    "OpenAILLMConfigEntry",
]

_SECRET_FIELDS = re.compile(r"(['\"]?\w*(?:key|token)['\"]?\s*[:=]\s*)(['\"])[^'\"]*\2", re.IGNORECASE)


def _redacted(text: str) -> str:
    return _SECRET_FIELDS.sub(r"\1\2**********\2", text)


class _Sampling(BaseModel):
    """The sampling options an ``LLMConfig`` passes down to each of its entries."""

    max_tokens: int | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    temperature: float | None = Field(default=None, ge=0, le=1)


class LLMConfigEntry(_Sampling):
    """One model config: which model, where, and how. Keys it does not name are kept (request
    parameters such as ``seed``, or parley settings such as ``tool_call_mode``), as in a dict config.

    It reads like a dict as well (``entry["model"]``, ``entry.get("api_key")``, ``"model" in entry``);
    ``model_dump()`` gives the config dict, with the API key in clear; ``repr`` hides it.
    """

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    api_type: str
    model: str = Field(min_length=1)
    api_key: SecretStr | None = None
    api_version: str | None = None
    base_url: str | None = None
    http_client: Any = None
    voice: str | None = None
    model_client_cls: str | None = None
    response_format: Any = None
    default_headers: Mapping[str, Any] | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("base_url", mode="before")
    @classmethod
    def _with_scheme(cls, url: Any) -> Any:
        if url is None:
            return None
        url = str(url)
        return url if url.startswith(("https://", "http://", "wss://", "ws://")) else f"http://{url}"

    @field_serializer("api_key", when_used="unless-none")
    def _clear_key(self, key: SecretStr) -> str:
        return key.get_secret_value()

    def model_dump(self, *args: Any, exclude_none: bool = True, **kwargs: Any) -> dict[str, Any]:
        """The config as a dict (``None`` values left out by default)."""
        return super().model_dump(*args, exclude_none=exclude_none, **kwargs)

    def model_dump_json(self, *args: Any, exclude_none: bool = True, **kwargs: Any) -> str:
        """The config as JSON (``None`` values left out by default)."""
        return super().model_dump_json(*args, exclude_none=exclude_none, **kwargs)

    def with_sampling(self, sampling: _Sampling) -> Self:
        """A copy with the ``LLMConfig``'s sampling options where this entry sets none."""
        entry = self.model_copy()
        for name in ("max_tokens", "top_p", "temperature"):
            if getattr(entry, name) is None:
                setattr(entry, name, getattr(sampling, name))
        return entry

    def get(self, key: str, default: Any = None) -> Any:
        value = getattr(self, key, default)
        return value.get_secret_value() if isinstance(value, SecretStr) else value

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(f"{type(self).__name__} has no key {key!r}")
        return self.get(key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and hasattr(self, key)

    def items(self) -> Iterable[tuple[str, Any]]:
        return self.model_dump().items()

    def keys(self) -> Iterable[str]:
        return self.model_dump().keys()

    def values(self) -> Iterable[Any]:
        return self.model_dump().values()

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self.model_dump().items())
        return _redacted(f"{type(self).__name__}({fields})")

    __str__ = __repr__


class OpenAILLMConfigEntry(LLMConfigEntry):
    """A model behind OpenAI's API or any OpenAI-compatible server."""

    api_type: Literal["openai"] = "openai"
    price: list[float] | None = Field(default=None, min_length=2, max_length=2)
    tool_choice: Literal["none", "auto", "required"] | None = None
    user: str | None = None
    stream: bool = False
    extra_body: dict[str, Any] | None = None
    extra_headers: dict[str, str] | None = None
    reasoning_effort: Literal["none", "low", "minimal", "medium", "high", "xhigh"] | None = None
    max_completion_tokens: int | None = None


class AzureOpenAILLMConfigEntry(LLMConfigEntry):
    """A deployment on Azure OpenAI (``model`` is the deployment name)."""

    api_type: Literal["azure"] = "azure"
    price: list[float] | None = Field(default=None, min_length=2, max_length=2)
    azure_ad_token_provider: Any = None
    tool_choice: Literal["none", "auto", "required"] | None = None
    user: str | None = None
    stream: bool = False
    extra_headers: dict[str, str] | None = None
    reasoning_effort: Literal["low", "minimal", "medium", "high"] | None = None
    max_completion_tokens: int | None = None


class AnthropicLLMConfigEntry(LLMConfigEntry):
    """A Claude model behind Anthropic's messages API."""

    api_type: Literal["anthropic"] = "anthropic"
    max_tokens: int = Field(default=4096, ge=1)
    timeout: int | None = Field(default=None, ge=1)
    top_k: int | None = Field(default=None, ge=1)
    stop_sequences: list[str] | None = None
    stream: bool = False
    price: list[float] | None = Field(default=None, min_length=2, max_length=2)
    tool_choice: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None


class LocalLLMConfigEntry(LLMConfigEntry):
    """parley's embedded model (a GGUF file run inside the process)."""

    api_type: Literal["local"] = "local"


_ENTRY_TYPES: dict[str, type[LLMConfigEntry]] = {
    "openai": OpenAILLMConfigEntry,
    "azure": AzureOpenAILLMConfigEntry,
    "anthropic": AnthropicLLMConfigEntry,
    "local": LocalLLMConfigEntry,
}

#: The options an ``LLMConfig`` holds beside its entries, in the order ``model_dump`` gives them.
_OPTIONS = (
    "max_tokens",
    "top_p",
    "temperature",
    "check_every_ms",
    "seed",
    "allow_format_str_template",
    "response_format",
    "timeout",
    "cache_seed",
    "parallel_tool_calls",
    "tools",
    "functions",
    "routing_method",
)


def _entry(config: LLMConfigEntry | Mapping[str, Any], sampling: _Sampling, index: int) -> LLMConfigEntry:
    if isinstance(config, LLMConfigEntry):
        return config.with_sampling(sampling)
    if not isinstance(config, Mapping):
        raise TypeError(
            f"LLMConfig config {index} must be a dict or a config entry (such as OpenAILLMConfigEntry), "
            f"not {type(config).__name__}"
        )
    api_type = str(config.get("api_type") or "openai")
    kind = _ENTRY_TYPES.get("azure" if api_type.startswith("azure") else api_type)
    if kind is None:
        raise ValueError(
            f"LLMConfig config {index} (model {config.get('model')!r}): unknown api_type {api_type!r}; "
            f"parley supports {sorted(PROVIDERS)}"
        )
    api_type = kind.model_fields["api_type"].default
    return kind.model_validate({**sampling.model_dump(exclude_none=True), **config, "api_type": api_type})


class LLMConfig:
    """AG2's ``LLMConfig``: model configs, tried in order, and the options that apply to all of them.

    Args:
        *configs: config dicts (``{"model": ..., "api_key": ..., "base_url": ..., "api_type": ...}``) or
            entries (:class:`OpenAILLMConfigEntry`...), in the order they are tried.
        temperature, top_p, max_tokens: sampling options for every config that sets none itself.
        cache_seed, timeout, seed, response_format, parallel_tool_calls, routing_method, ...: as in an
            ``llm_config`` dict.
        config_list: the configs as one list, as AG2 before 0.11 took them (also ``model=...`` and the
            other keys of a single config as keyword arguments).

    Options read and write like a dict's keys or attributes (``config["temperature"]``,
    ``config.cache_seed = 41``). ``with config:`` makes it the ``llm_config`` of every agent created
    inside the block without one (as AG2 did before 0.11).
    """

    __slots__ = ("_options", "_tokens", "config_list")

    def __init__(
        self,
        *configs: LLMConfigEntry | Mapping[str, Any],
        top_p: float | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        check_every_ms: int | None = None,
        allow_format_str_template: bool | None = None,
        response_format: Any = None,
        timeout: int | None = None,
        seed: int | None = None,
        cache_seed: int | str | None = None,
        parallel_tool_calls: bool | None = None,
        tools: Iterable[Any] = (),
        functions: Iterable[Any] = (),
        routing_method: Literal["fixed_order", "round_robin"] | None = None,
        config_list: Iterable[LLMConfigEntry | Mapping[str, Any]] | None = None,
        **single_config: Any,
    ) -> None:
        sampling = _Sampling(max_tokens=max_tokens, top_p=top_p, temperature=temperature)
        all_configs = [*configs, *(config_list or ())]
        if single_config:
            if "model" not in single_config:
                raise TypeError(
                    f"LLMConfig got unexpected keyword arguments {sorted(single_config)}; a config is a dict "
                    "passed positionally: LLMConfig({'model': ..., 'api_key': ...})"
                )
            all_configs.append(single_config)
        entries = [_entry(config, sampling, index) for index, config in enumerate(all_configs) if config]
        if not entries:
            raise ValueError("LLMConfig needs at least one model config: LLMConfig({'model': ..., ...})")
        if routing_method not in (None, "fixed_order", "round_robin"):
            raise ValueError(f"routing_method must be 'fixed_order' or 'round_robin', not {routing_method!r}")
        options = {
            **sampling.model_dump(),
            "check_every_ms": check_every_ms,
            "seed": seed,
            "allow_format_str_template": allow_format_str_template,
            "response_format": response_format,
            "timeout": timeout,
            "cache_seed": cache_seed,
            "parallel_tool_calls": parallel_tool_calls,
            "tools": list(tools or ()),
            "functions": list(functions or ()),
            "routing_method": routing_method,
        }
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "config_list", entries)
        object.__setattr__(self, "_tokens", [])

    # ------------------------------------------------------------------------------------------------
    # AG2's ways of making one

    @classmethod
    def ensure_config(cls, config: Any, /) -> LLMConfig:
        """An ``LLMConfig`` from an ``LLMConfig`` (a copy), an entry, a config dict (with or without a
        ``config_list``) or a list of configs."""
        if isinstance(config, LLMConfig):
            return config.copy()
        if isinstance(config, LLMConfigEntry):
            return cls(config)
        if isinstance(config, Mapping):
            if "config_list" in config:
                options = dict(config)
                entries = options.pop("config_list")
                return cls(*([entries] if isinstance(entries, Mapping) else entries), **options)
            return cls(config)
        return cls(*config)

    @classmethod
    def from_json(
        cls,
        *,
        env: str | None = None,
        path: str | Path | None = None,
        file_location: str | None = None,
        filter_dict: dict[str, Any] | None = None,
        **options: Any,
    ) -> LLMConfig:
        """An ``LLMConfig`` from a JSON list of configs: in the file ``path`` (under ``file_location``),
        or in the environment variable ``env`` (its value the JSON, or the path of a file holding it),
        keeping only the configs ``filter_dict`` selects (see :meth:`where`)."""
        if (env is None) == (path is None):
            raise ValueError("LLMConfig.from_json needs exactly one of env= and path=")
        if env is not None:
            value = os.environ.get(env)
            if value is None:
                raise ValueError(f"the environment variable {env!r} is not set")
            file = Path(file_location or "") / value
            text = file.read_text() if file.is_file() else value
            source = f"the environment variable {env!r}"
        else:
            file = Path(file_location or "") / str(path)
            text = file.read_text()
            source = str(file)
        try:
            configs = json.loads(text)
        except ValueError as error:
            raise ValueError(f"{source} does not hold JSON: {error}") from None
        if isinstance(configs, dict):
            configs = [configs]
        if not isinstance(configs, list):
            raise ValueError(f"{source} must hold a list of model configs")
        if filter_dict:
            configs = [config for config in configs if _selected(config, filter_dict, exclude=False)]
        return cls(*configs, **options)

    def where(self, *, exclude: bool = False, **criteria: Any) -> LLMConfig:
        """A new ``LLMConfig`` with the configs whose keys have the given values (any of a list of
        values; a list-valued key such as ``tags`` matches if it shares one), or with the others when
        ``exclude``."""
        kept = [
            entry for entry in self.config_list if _selected(entry.model_dump(), criteria, exclude=exclude)
        ]
        if not kept:
            raise ValueError(f"no config of this LLMConfig matches {criteria}")
        return LLMConfig(*kept, **self._options)

    # ------------------------------------------------------------------------------------------------
    # reading it like AG2's

    def model_dump(self, *args: Any, exclude_none: bool = True, **kwargs: Any) -> dict[str, Any]:
        """The ``llm_config`` dict this stands for: options (without unset ones and empty lists) and
        ``config_list``, API keys in clear."""
        dumped: dict[str, Any] = {}
        for key, value in self._options.items():
            if key == "routing_method":
                dumped["config_list"] = [
                    entry.model_dump(exclude_none=exclude_none) for entry in self.config_list
                ]
            if (value is None and exclude_none) or (isinstance(value, list) and not value):
                continue
            dumped[key] = value
        return dumped

    def model_dump_json(self, *args: Any, exclude_none: bool = True, **kwargs: Any) -> str:
        return json.dumps(self.model_dump(exclude_none=exclude_none), default=str)

    def get(self, key: str, default: Any = None) -> Any:
        if key == "config_list":
            return self.config_list
        return self._options.get(key, default)

    def __getitem__(self, key: str) -> Any:
        if key not in self:
            raise KeyError(f"LLMConfig has no key {key!r}")
        return self.get(key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key not in self:
            raise ValueError(f"LLMConfig has no key {key!r}; its keys are {['config_list', *_OPTIONS]}")
        if key == "config_list":
            object.__setattr__(
                self, "config_list", [_entry(item, _Sampling(), i) for i, item in enumerate(value)]
            )
        else:
            self._options[key] = value

    def __getattr__(self, name: str) -> Any:
        options = object.__getattribute__(self, "_options")
        if name in options:
            return options[name]
        raise AttributeError(f"'LLMConfig' object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value

    def __contains__(self, key: object) -> bool:
        return key == "config_list" or key in self._options

    def items(self) -> Iterable[tuple[str, Any]]:
        return self.model_dump().items()

    def keys(self) -> Iterable[str]:
        return self.model_dump().keys()

    def values(self) -> Iterable[Any]:
        return self.model_dump().values()

    def __iter__(self) -> Iterator[str]:
        return iter(self.model_dump())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LLMConfig):
            return NotImplemented
        return self._options == other._options and self.config_list == other.config_list

    __hash__ = None  # type: ignore[assignment]

    def copy(self) -> LLMConfig:
        """A copy (the entries copied too)."""
        copied = LLMConfig.__new__(LLMConfig)
        object.__setattr__(copied, "_options", dict(self._options))
        object.__setattr__(copied, "config_list", [entry.model_copy() for entry in self.config_list])
        object.__setattr__(copied, "_tokens", [])
        return copied

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> LLMConfig:
        return self.copy()

    def deepcopy(self, memo: dict[int, Any] | None = None) -> LLMConfig:
        return self.copy()

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self.model_dump().items())
        return _redacted(f"LLMConfig({fields})")

    __str__ = __repr__

    # ------------------------------------------------------------------------------------------------
    # the default for agents created in a ``with`` block

    def __enter__(self) -> LLMConfig:
        self._tokens.append(current_llm_config.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        token: Token[Any] = self._tokens.pop()
        current_llm_config.reset(token)

    @classmethod
    def get_current_llm_config(cls, llm_config: LLMConfig | None = None) -> LLMConfig | None:
        """``llm_config`` if given, else the one of the enclosing ``with LLMConfig(...)`` block, if any."""
        if llm_config is not None:
            return llm_config
        current = current_llm_config.get()
        return current if isinstance(current, LLMConfig) else None

    def for_clients(self) -> dict[str, Any]:
        """The ``llm_config`` dict the model clients take: :meth:`model_dump` without the defaults that say
        nothing (``stream=False``, no ``tags``)."""
        dumped = self.model_dump()
        for config in dumped["config_list"]:
            if config.get("stream") is False:
                del config["stream"]
            if not config.get("tags"):
                config.pop("tags", None)
        return dumped


def _selected(config: Mapping[str, Any], criteria: Mapping[str, Any], *, exclude: bool) -> bool:
    return all(_matches(config.get(key), wanted) != exclude for key, wanted in criteria.items())


def _matches(value: Any, wanted: Any) -> bool:
    if value is None:
        return False
    wanted_many = isinstance(wanted, list | set | tuple)
    if isinstance(value, list):
        return bool(set(value) & set(wanted)) if wanted_many else wanted in value
    return value in wanted if wanted_many else value == wanted
