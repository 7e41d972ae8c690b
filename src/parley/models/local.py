"""An embedded model: a GGUF file run in this process by llama.cpp (``pip install 'parley-llm[local]'``).

Tool calls go through the JSON-schema tool-call mode (:mod:`parley.models.json_tools`): small local
models do not emit native tool calls reliably, so the reply is constrained to a schema of the offered
tools, and their names and descriptions are rendered into the system prompt. Without a ``model_path``
(or without a ``model``) the model is the default weights (:mod:`parley.models.weights`).

As an ``llm_config``::

    {"config_list": [{"api_type": "local"}]}
    {"config_list": [{"api_type": "local", "model": "my-model", "model_path": "/models/my-model.gguf"}]}

While tools are offered every reply is JSON that names a tool or ``reply_to_user``, whose text comes back
as a plain reply; ``tool_choice`` narrows the names: ``"auto"`` (all), ``"required"`` or a named tool (no
plain reply), ``"none"`` (only the plain reply). A request without tools is answered in plain text. A
plain reply cut off at ``max_tokens`` is returned as far as it got, as a plain-text reply would be; a
tool call cut off is a :class:`ModelError`. With ``stream=True`` the text goes to
:data:`parley.models.streaming.token_sink` as it is generated.

Every ``LocalModel`` of a file, with the same load settings, shares one loaded model, so a swarm's agents
load it once, and share its KV cache (:mod:`parley.models.local_runner`). llama.cpp is not thread-safe:
calls to one loaded model take turns.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import io
import json
import logging
import os
import re
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parley.messages import Message, content_str
from parley.models import json_tools
from parley.models.base import ModelError, ModelResponse, Usage
from parley.models.local_runner import GENERATION_PARAMETERS, Choice, Generation, Loaded, choose, generate
from parley.models.reply_limits import LOCAL_DEFAULT_MAX_TOKENS
from parley.models.streaming import StreamedText, token_sink
from parley.models.weights import DEFAULT_WEIGHTS, Progress, verify, weights_path

DEFAULT_MODEL = DEFAULT_WEIGHTS.name
"""The ``model`` name that means the default weights."""

#: Replies are cut at this many tokens unless ``max_tokens`` says otherwise.
DEFAULT_MAX_TOKENS = LOCAL_DEFAULT_MAX_TOKENS

#: Config keys that say how the model is loaded, not what each request asks.
LOAD_KEYS = ("model_path", "sha256", "n_ctx", "n_threads", "chat_format")

#: Request parameters the model client sets itself.
_RESERVED = frozenset(
    {"messages", "tools", "tool_choice", "parallel_tool_calls", "functions", "function_call", "stream"}
)
_ROLES = frozenset({"system", "user", "assistant"})
_warned: set[str] = set()


@dataclass(frozen=True)
class LocalStats:
    """What a call of the embedded model cost: tokens, how many of the prompt's were evaluated (the
    others were found in the KV cache), and time."""

    prompt_tokens: int
    evaluated_prompt_tokens: int
    """Counts every order of the tool list the model was asked with."""
    completion_tokens: int
    seconds: float
    orders: int = 0
    """How many orders of the tool list the model was asked with to choose a name (0: no choice)."""

    @classmethod
    def of(cls, generation: Generation, choice: Choice | None = None) -> LocalStats:
        return cls(
            generation.prompt_tokens,
            generation.evaluated_prompt_tokens + (choice.evaluated_prompt_tokens if choice else 0),
            generation.completion_tokens,
            generation.seconds + (choice.seconds if choice else 0.0),
            choice.orders if choice else 0,
        )


_loaded: dict[tuple[Any, ...], Loaded] = {}
_loading = threading.Lock()


@atexit.register
def _free_loaded_models() -> None:
    """Free the loaded models at exit while llama.cpp can still do it (its own finalizers, run later,
    find its library functions gone and print errors)."""
    with _loading:
        for loaded in _loaded.values():
            close = getattr(loaded.llama, "close", None)
            if callable(close):
                close()
        _loaded.clear()


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

    reply_token_limit = DEFAULT_MAX_TOKENS
    """The most tokens a reply has when neither the config nor the call sets ``max_tokens``."""
    token_price = (0.0, 0.0)
    """Calls cost nothing."""

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
        self._loaded: Loaded | None = None
        self.last_stats: LocalStats | None = None
        """Tokens and time of this model's latest call."""

    @classmethod
    def from_config(cls, config: dict[str, Any], settings: dict[str, Any] | None = None) -> LocalModel:
        """The model for one entry of an AG2 ``config_list`` (``api_type`` ``"local"``).

        ``model_path`` names the GGUF file; without it, ``model`` is either a path to a ``.gguf`` file
        or :data:`DEFAULT_MODEL` (also the default when there is no ``model``). ``n_ctx``,
        ``n_threads``, ``chat_format`` and ``sha256`` are load settings; the other keys that are not
        client settings are request parameters.
        """
        from parley.models.config import request_params_of

        model = str(config.get("model") or DEFAULT_MODEL)
        mode = config.get("tool_call_mode") or "json_schema"
        if mode != "json_schema":
            raise ValueError(
                f"the local model {model!r} takes tools only in the 'json_schema' tool_call_mode, "
                f"not {mode!r}"
            )
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

    provider = "llama.cpp"
    """The provider, as OpenTelemetry's GenAI conventions name it (``gen_ai.provider.name``)."""

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
        """Generate one reply (a tool call, when ``tools`` are offered and the model chooses one).

        With ``stream=True`` the reply's text (or a tool call's arguments) goes to the
        :data:`~parley.models.streaming.token_sink` as it is generated; the response is the same.
        """
        engine = self._engine()
        sent, request, offered, tool_choice, stream = self._request(messages, tools, params)
        sink = token_sink.get() if stream else None
        if not offered:
            with engine.lock:
                generation = generate(engine, sent, request, consume=_consumer(None, sink))
            self.last_stats = LocalStats.of(generation)
            return self._response(generation, offered, request.get("max_tokens"))
        named = json_tools.choices(offered, tool_choice)
        self._grammar(
            engine, json_tools.tool_call_schema(offered, tool_choice)
        )  # refuses what it cannot express
        reader = json_tools.ToolJsonReader(offered)
        with engine.lock:
            choice = None
            if len(named) > 1:
                variants = [
                    [_wire(message) for message in json_tools.with_tools_prompt(messages, order, tool_choice)]
                    for order in _orders(offered)
                ]
                choice = choose(engine, variants, list(named), request)
            name = choice.name if choice is not None else next(iter(named))
            generation = generate(
                engine,
                sent,
                request,
                grammar=self._rest_grammar(engine, named[name]),
                consume=_consumer(reader, sink),
                forced=reader.forced_call,
                prefill=json_tools.call_head(name),
            )
        self.last_stats = LocalStats.of(generation, choice)
        return self._response(generation, offered, request.get("max_tokens"))

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """:meth:`create` in a worker thread, so the event loop keeps running while the model thinks."""
        return await asyncio.to_thread(self.create, list(messages), tools, **params)

    # ------------------------------------------------------------------------------------------------

    def _engine(self) -> Loaded:
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
                loaded = _loaded[key] = Loaded(
                    _load_quietly(llama_cpp, path, self.n_ctx, self.n_threads, self.chat_format)
                )
        self._loaded = loaded
        return loaded

    def _request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> tuple[list[dict[str, str]], dict[str, Any], list[dict[str, Any]], Any, bool]:
        merged = {"max_tokens": DEFAULT_MAX_TOKENS, **params, **self.params}
        tool_choice = merged.pop("tool_choice", None)
        stream = bool(merged.get("stream"))
        offered = list(tools or ())
        if offered:
            sent = json_tools.with_tools_prompt(messages, offered, tool_choice)
            merged.pop("response_format", None)
        else:
            sent = json_tools.without_native_tool_calls(messages)
        request: dict[str, Any] = {}
        for key, value in merged.items():
            if key in _RESERVED:
                continue
            if key not in GENERATION_PARAMETERS:
                _warn_once(key)
                continue
            request[key] = value
        return [_wire(message) for message in sent], request, offered, tool_choice, stream

    def _grammar(self, engine: Loaded, schema: dict[str, Any], *, closing: bool = False) -> Any:
        """The grammar that constrains replies to ``schema`` (followed by the ``}`` that closes the call
        when ``closing``), built once per loaded model."""
        text = json.dumps([schema, closing], sort_keys=True)
        grammar = engine.grammars.get(text)
        if grammar is not None:
            return grammar
        from llama_cpp import llama_grammar

        try:
            rules = llama_grammar.json_schema_to_gbnf(json.dumps(schema))
        except Exception as error:
            raise ModelError(
                f"llama.cpp cannot constrain replies to these tools' JSON schema ({type(error).__name__}: "
                f"{error}); simplify the tool parameters (keywords such as 'not' and 'if' are unsupported)"
            ) from error
        if closing:
            rules = _ROOT_RULE.sub("parley-arguments ::=", rules) + '\nroot ::= parley-arguments "}"\n'
        grammar = engine.grammars[text] = llama_grammar.LlamaGrammar.from_string(rules, verbose=False)
        return grammar

    def _rest_grammar(self, engine: Loaded, arguments: dict[str, Any]) -> Any:
        """The grammar of what follows :func:`~parley.models.json_tools.call_head`: the arguments, then
        the ``}`` that closes the call."""
        return self._grammar(engine, arguments, closing=True)

    def _response(
        self, generation: Generation, offered: list[dict[str, Any]], max_tokens: int | None
    ) -> ModelResponse:
        text = generation.text
        usage = Usage(generation.prompt_tokens, generation.completion_tokens)
        if offered:
            cut_off = generation.finish_reason == "length"
            try:
                reply = json_tools.parse_tool_json(text, offered, cut_off=cut_off)
            except ModelError as error:
                if not cut_off:
                    raise
                raise ModelError(f"{self.model!r}, max_tokens={max_tokens}: {error}") from None
        else:
            if not text:
                raise ModelError(
                    f"{self.model!r} returned an empty reply (finish_reason={generation.finish_reason!r})"
                )
            reply = {"role": "assistant", "content": text}
        return ModelResponse(reply, usage, cost=0.0, model=self.model)


_ROOT_RULE = re.compile(r"^root ::=", re.MULTILINE)


def _orders(tools: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The tool list, and up to two rotations of it, so that each tool is asked about in other places."""
    count = len(tools)
    shifts = sorted({index * count // min(count, 3) for index in range(min(count, 3))})
    return [tools[shift:] + tools[:shift] for shift in shifts]


def _consumer(reader: json_tools.ToolJsonReader | None, sink: Any) -> Any:
    """What takes the generated text: the JSON reader of a tool-call reply (which passes what there is
    to show to the sink), or the sink itself."""
    if reader is None:
        return None if sink is None else (lambda piece: sink(StreamedText(piece)))

    def consume(piece: str) -> None:
        for shown in reader.feed(piece):
            if sink is not None:
                sink(shown)

    return consume


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as error:
        raise ImportError(
            "the local model needs llama-cpp-python: pip install 'parley-llm[local]' "
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


def _warn_once(key: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"the local model ignores the request parameter {key!r}", stacklevel=4)


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1
