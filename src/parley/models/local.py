"""An embedded model: a GGUF file run in this process by llama.cpp (``pip install 'parley[local]'``).

Tool calls go through the JSON-schema tool-call mode (:mod:`parley.models.json_tools`): small local
models do not emit native tool calls reliably, so the reply is constrained to a schema of the offered
tools, and their names and descriptions are rendered into the system prompt. Without a ``model_path``
the model is the default weights (:mod:`parley.models.weights`).

As an ``llm_config``::

    {"config_list": [{"api_type": "local", "model": "qwen2.5-coder-1.5b-instruct"}]}
    {"config_list": [{"api_type": "local", "model": "my-model", "model_path": "/models/my-model.gguf"}]}

While tools are offered every reply is JSON, ``tool_choice`` deciding what it may be: a tool call or a
plain reply (``"auto"``), a tool call (``"required"`` or a named tool), or a plain reply (``"none"``: a model
that has been answering in JSON tends to go on writing tool calls when left unconstrained). A request
without tools is answered in plain text. A plain reply cut off at ``max_tokens`` is returned as far as
it got, as a plain-text reply would be; a tool call cut off is a :class:`ModelError`.

Every ``LocalModel`` of a file, with the same load settings, shares one loaded model, so a swarm's agents
load it once. llama.cpp is not thread-safe: calls to one loaded model take turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import io
import json
import logging
import os
import re
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley.messages import Message, content_str
from parley.models import json_tools
from parley.models.base import ModelError, ModelResponse, Usage
from parley.models.weights import DEFAULT_WEIGHTS, Progress, verify, weights_path

DEFAULT_MODEL = DEFAULT_WEIGHTS.name
"""The ``model`` name that means the default weights."""

#: Replies are cut at this many tokens unless ``max_tokens`` says otherwise.
DEFAULT_MAX_TOKENS = 512

#: Config keys that say how the model is loaded, not what each request asks.
LOAD_KEYS = ("model_path", "sha256", "n_ctx", "n_threads", "chat_format")

#: Request parameters the model client sets itself.
_RESERVED = frozenset(
    {"messages", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call", "stream"}
)
_ROLES = frozenset({"system", "user", "assistant"})
_warned: set[str] = set()


@dataclass
class _Loaded:
    """One loaded model, shared by every ``LocalModel`` of the same file and settings."""

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    grammars_checked: set[str] = field(default_factory=set)


_loaded: dict[tuple[Any, ...], _Loaded] = {}
_loading = threading.Lock()


class LocalModel:
    """A GGUF model run in this process by llama.cpp.

    Args:
        model_path: the GGUF file; ``None`` for the default weights (Qwen2.5-Coder-1.5B-Instruct,
            assembled on first use).
        sha256: when set, the file is refused unless its SHA-256 is this (the default weights are always
            checked).
        n_ctx: the context window, in tokens.
        n_threads: CPU threads (default: every CPU this process may use).
        chat_format: a llama-cpp-python chat format; by default the template stored in the file.
        params: request parameters sent with every request (``temperature``, ``max_tokens``...);
            ``max_tokens`` defaults to :data:`DEFAULT_MAX_TOKENS`.
        name: the model name in usage reports (default: the file name).
        progress: called as ``progress(stage, done, total)`` while the default weights are assembled
            or a file is verified.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        sha256: str | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_format: str | None = None,
        params: dict[str, Any] | None = None,
        name: str | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.model_path = Path(model_path).expanduser() if model_path is not None else None
        self.sha256 = sha256
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _available_cpus()
        self.chat_format = chat_format
        self.params = dict(params or {})
        self.progress = progress
        self._name = name
        self._loaded: _Loaded | None = None

    @classmethod
    def from_config(cls, config: dict[str, Any], settings: dict[str, Any] | None = None) -> LocalModel:
        """The model for one entry of an AG2 ``config_list`` (``api_type`` ``"local"``).

        ``model_path`` names the GGUF file; without it, ``model`` is either a path to a ``.gguf`` file
        or :data:`DEFAULT_MODEL`. ``n_ctx``, ``n_threads``, ``chat_format`` and ``sha256`` are load
        settings; the other keys that are not client settings are request parameters.
        """
        from parley.models.config import request_params_of

        mode = config.get("tool_call_mode") or "json_schema"
        if mode != "json_schema":
            raise ValueError(
                f"the local model {config['model']!r} takes tools only in the 'json_schema' tool_call_mode, "
                f"not {mode!r}"
            )
        model = str(config["model"])
        path = config.get("model_path")
        if path is None and model != DEFAULT_MODEL:
            if not (model.endswith(".gguf") or os.sep in model):
                raise ValueError(
                    f"api_type 'local' needs a GGUF file: set 'model_path', or 'model' to a .gguf path "
                    f"or to {DEFAULT_MODEL!r} (the default weights); got model {model!r}"
                )
            path, model = model, Path(model).name
        params = {key: value for key, value in request_params_of(config).items() if key not in LOAD_KEYS}
        return cls(
            path,
            sha256=config.get("sha256"),
            n_ctx=config.get("n_ctx") or 4096,
            n_threads=config.get("n_threads"),
            chat_format=config.get("chat_format"),
            params=params,
            name=None if path is None else model,
        )

    @property
    def model(self) -> str:
        """The model name reported in usage: the file name unless another was given."""
        if self._name:
            return self._name
        if self.model_path is not None:
            return self.model_path.name
        return DEFAULT_WEIGHTS.file_name

    @property
    def endpoint(self) -> str:
        """Where the model runs, for error messages."""
        return f"llama.cpp:{self.model_path or DEFAULT_MODEL}"

    def __repr__(self) -> str:
        return f"LocalModel(model={self.model!r}, path={str(self.model_path or DEFAULT_MODEL)!r})"

    # ------------------------------------------------------------------------------------------------

    def load(self) -> LocalModel:
        """Load the model now (it is otherwise loaded by the first request); returns ``self``.

        The default weights are assembled on first use; the file is checked against its SHA-256 first.

        Raises:
            ImportError: llama-cpp-python is not installed.
            ChecksumMismatchError: the file does not match its expected SHA-256.
            ModelError: llama.cpp cannot load the file.
        """
        self._engine()
        return self

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Generate one reply (a tool call, when ``tools`` are offered and the model chooses one)."""
        engine = self._engine()
        request, offered = self._request(messages, tools, params)
        if offered:
            self._check_grammar(engine, request["response_format"]["schema"])
        with engine.lock:
            completion = engine.llama.create_chat_completion(**request)
        return self._response(completion, offered, request.get("max_tokens"))

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """:meth:`create` in a worker thread, so the event loop keeps running while the model thinks."""
        return await asyncio.to_thread(self.create, list(messages), tools, **params)

    # ------------------------------------------------------------------------------------------------

    def _engine(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        llama_cpp = _import_llama_cpp()
        if self.model_path is None:
            path = weights_path(progress=self.progress)
        else:
            path = self.model_path
            if not path.is_file():
                raise ModelError(f"no model file at {path}")
            if self.sha256:
                verify(path, self.sha256, progress=self.progress)
        key = (str(path.resolve()), self.n_ctx, self.n_threads, self.chat_format)
        with _loading:
            loaded = _loaded.get(key)
            if loaded is None:
                loaded = _loaded[key] = _Loaded(
                    _load_quietly(llama_cpp, path, self.n_ctx, self.n_threads, self.chat_format)
                )
        self._loaded = loaded
        return loaded

    def _request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        merged = {"max_tokens": DEFAULT_MAX_TOKENS, **params, **self.params}
        tool_choice = merged.pop("tool_choice", None)
        offered = list(tools or ())
        if offered:
            schema = json_tools.tool_call_schema(offered, tool_choice)
            merged["response_format"] = {"type": "json_object", "schema": schema}
            sent = json_tools.with_tools_prompt(messages, offered, tool_choice)
        else:
            sent = json_tools.without_native_tool_calls(messages)
        request = {"messages": [_wire(message) for message in sent]}
        for key, value in merged.items():
            if key in _RESERVED:
                continue
            if key not in _request_parameters():
                _warn_once(key)
                continue
            request[key] = value
        return request, offered

    def _check_grammar(self, engine: _Loaded, schema: dict[str, Any]) -> None:
        text = json.dumps(schema, sort_keys=True)
        if text in engine.grammars_checked:
            return
        from llama_cpp import llama_grammar

        try:
            llama_grammar.json_schema_to_gbnf(json.dumps(schema))
        except Exception as error:
            raise ModelError(
                f"llama.cpp cannot constrain replies to these tools' JSON schema ({type(error).__name__}: "
                f"{error}); simplify the tool parameters (keywords such as 'not' and 'if' are unsupported)"
            ) from error
        engine.grammars_checked.add(text)

    def _response(
        self, completion: dict[str, Any], offered: list[dict[str, Any]], max_tokens: int | None
    ) -> ModelResponse:
        choice = (completion.get("choices") or [{}])[0]
        text = (choice.get("message") or {}).get("content")
        finish_reason = choice.get("finish_reason")
        raw_usage = completion.get("usage") or {}
        usage = Usage(raw_usage.get("prompt_tokens") or 0, raw_usage.get("completion_tokens") or 0)
        if offered:
            try:
                reply = json_tools.parse_tool_json(text, offered)
            except ModelError as error:
                if finish_reason != "length":
                    raise
                cut = _cut_plain_reply(text or "")
                if cut is None:
                    raise ModelError(
                        f"{self.model!r} was cut off at max_tokens={max_tokens} before its JSON reply ended: "
                        f"{(text or '')[:300]!r}; raise max_tokens"
                    ) from error
                reply = {"role": "assistant", "content": cut}
        else:
            if not text:
                raise ModelError(f"{self.model!r} returned an empty reply (finish_reason={finish_reason!r})")
            reply = {"role": "assistant", "content": text}
        return ModelResponse(reply, usage, cost=0.0, model=self.model)


_PLAIN_REPLY_START = re.compile(r'\s*\{\s*"' + json_tools.REPLY_KEY + r'"\s*:\s*"')


def _cut_plain_reply(text: str) -> str | None:
    """The text of a JSON plain reply cut off at ``max_tokens``, as far as it got; ``None`` for anything
    else (a tool call cut off has no usable arguments)."""
    start = _PLAIN_REPLY_START.match(text)
    if start is None:
        return None
    partial = text[start.end() :]
    for end in range(len(partial), max(len(partial) - 6, -1), -1):
        try:
            decoded = json.loads(f'"{partial[:end]}"')
        except ValueError:
            continue
        return str(decoded)
    return None


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as error:
        raise ImportError(
            "the local model needs llama-cpp-python: pip install 'parley[local]' "
            "(or ./scripts/demo, which builds it with the right flags)"
        ) from error
    return llama_cpp


def _load_quietly(llama_cpp: Any, path: Path, n_ctx: int, n_threads: int, chat_format: str | None) -> Any:
    """Load a model with llama.cpp's log captured rather than printed.

    ``verbose=False`` would silence it by pointing the process's stdout and stderr at /dev/null while
    loading, which also swallows other threads' output (a progress display's, say); instead the log
    goes to a buffer, and is quoted if loading fails.
    """
    log = io.StringIO()
    try:
        with contextlib.redirect_stderr(log):
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                chat_format=chat_format,
                verbose=True,
            )
    except (ValueError, RuntimeError) as error:
        tail = "\n".join(line for line in log.getvalue().splitlines()[-5:] if line.strip())
        raise ModelError(f"llama.cpp cannot load {path}: {error}" + (f"\n{tail}" if tail else "")) from None
    finally:
        logging.getLogger("llama-cpp-python").setLevel(logging.ERROR)
    llama.verbose = False
    return llama


def _wire(message: Message) -> dict[str, str]:
    role = message.get("role")
    return {"role": role if role in _ROLES else "user", "content": content_str(message.get("content"))}


_parameters: frozenset[str] | None = None


def _request_parameters() -> frozenset[str]:
    global _parameters
    if _parameters is None:
        from llama_cpp import Llama

        _parameters = frozenset(inspect.signature(Llama.create_chat_completion).parameters) - {"self"}
    return _parameters


def _warn_once(key: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"the local model ignores the request parameter {key!r}", stacklevel=4)


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
