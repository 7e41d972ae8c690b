"""One chat request on a loaded llama.cpp model: the prompt, the KV cache, token-by-token generation.

The prompt is rendered by the model's own chat handler (its chat template, or ``chat_format``), then
generated token by token, so that the text can be streamed as it comes, a tool call whose rest is
forced by the schema can stop early, and usage is exact.

llama.cpp keeps the KV cache of the last prompt and reuses its longest common prefix with the next one.
Agents of one chat take turns on a loaded model, so the previous prompt is usually another agent's;
:class:`PrefixStates` keeps the KV state of recent prompts (their system prompt and tool list, the
conversation so far) and restores the one that shares the longest prefix with a new prompt, so an
agent's turn evaluates only what is new since its last one.

:func:`choose` picks which name a JSON tool-call reply starts with from the model's probabilities of the
names, rather than token by token, with the tools listed in up to three orders: a small model favours
some places in a list, and summing over orders evens that out. Further orders are asked only while the
decision is not yet clear (:func:`is_clear`).
"""

from __future__ import annotations

import codecs
import ctypes
import json
import math
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Request parameters the generation takes (those of llama-cpp-python's ``create_chat_completion``
#: that decide the reply).
GENERATION_PARAMETERS = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "typical_p",
        "stop",
        "seed",
        "max_tokens",
        "presence_penalty",
        "frequency_penalty",
        "repeat_penalty",
        "tfs_z",
        "mirostat_mode",
        "mirostat_tau",
        "mirostat_eta",
        "logit_bias",
        "response_format",
    }
)

#: The KV states kept for reuse, per loaded model, in bytes, and at most how many.
PREFIX_CACHE_BYTES = 512 << 20
PREFIX_CACHE_STATES = 24
#: Buffers of dropped states kept for the next states.
_SPARE_BUFFERS = 4
#: A saved state is restored only when it spares at least this many prompt tokens.
_MIN_REUSE_GAIN = 8


@dataclass
class Generation:
    """What one generation produced, and what it cost."""

    text: str
    finish_reason: str
    """``"stop"``: the model ended its reply (or the rest of a tool call was forced); ``"length"``:
    ``max_tokens`` was reached."""
    prompt_tokens: int
    completion_tokens: int
    evaluated_prompt_tokens: int
    """The prompt tokens run through the model; the others came from the KV cache."""
    seconds: float


@dataclass
class Loaded:
    """One loaded model, shared by every ``LocalModel`` of the same file and settings.

    Calls take turns (llama.cpp is not thread-safe) under :attr:`lock`.
    """

    llama: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    grammars: dict[str, Any] = field(default_factory=dict)
    """Grammars already built, by their JSON schema."""
    prefixes: PrefixStates = field(
        default_factory=lambda: PrefixStates(PREFIX_CACHE_BYTES, PREFIX_CACHE_STATES)
    )


Consumer = Callable[[str], None]
"""Called with each new piece of generated text."""


def generate(
    loaded: Loaded,
    messages: list[dict[str, str]],
    params: dict[str, Any],
    *,
    grammar: Any = None,
    consume: Consumer | None = None,
    forced: Callable[[], str | None] | None = None,
    prefill: str = "",
) -> Generation:
    """Generate the reply to ``messages`` (call under ``loaded.lock``).

    ``params`` are request parameters (:data:`GENERATION_PARAMETERS`); ``grammar`` constrains the reply.
    ``consume`` gets the text as it is generated. ``forced``, asked after every token, returns the whole
    reply once the rest of it is forced (and the generation stops there), else ``None``. ``prefill`` is
    the start of the reply, already decided: it is added to the prompt, and ``grammar`` constrains what
    follows it.

    Raises:
        ValueError: the prompt does not fit the context window.
    """
    started = time.perf_counter()
    llama = loaded.llama
    request = _rendered(llama, messages, params)
    rendered: list[int] = request["prompt"]
    prefilled = llama.tokenize(prefill.encode("utf-8"), add_bos=False, special=False) if prefill else []
    prompt = rendered + prefilled
    if len(prompt) >= llama.n_ctx():
        raise ValueError(
            f"the prompt is {len(prompt)} tokens, and the context window (n_ctx) is {llama.n_ctx()}: "
            "raise n_ctx or send a shorter conversation"
        )
    if consume is not None and prefill:
        consume(prefill)
    whole = forced() if forced is not None and prefill else None
    if whole is not None:  # nothing is left to generate
        return Generation(
            whole, "stop", len(rendered), len(prefilled), 0, seconds=time.perf_counter() - started
        )
    max_tokens = request.get("max_tokens")
    room = llama.n_ctx() - len(prompt)
    max_tokens = room if max_tokens is None or max_tokens <= 0 else min(max_tokens, room)

    loaded.prefixes.restore(llama, prompt)
    evaluated = len(prompt) - _reused_prefix(llama, prompt)
    seed = request.get("seed")
    llama.set_seed(seed if seed is not None else random.Random(llama._seed).randint(0, 2**32))

    def rest_forced() -> str | None:
        reply = forced() if forced is not None else None
        return None if reply is None else reply[len(prefill) :]

    text, finish_reason, completion = _sample(
        llama, prompt, request, grammar or request.get("grammar"), max_tokens, consume, rest_forced
    )
    loaded.prefixes.save(llama)
    return Generation(
        text=prefill + text,
        finish_reason=finish_reason,
        prompt_tokens=len(rendered),
        completion_tokens=len(prefilled) + completion,
        evaluated_prompt_tokens=evaluated,
        seconds=time.perf_counter() - started,
    )


@dataclass
class Choice:
    """Which name a JSON tool-call reply starts with, and what choosing it cost."""

    name: str
    probabilities: dict[str, float]
    """Each name's probability, averaged over the orders asked (a geometric mean, normalized)."""
    orders: int
    """How many orders of the tool list the model was asked with."""
    evaluated_prompt_tokens: int
    seconds: float


#: The lead, in summed log-probability, that makes a choice clear: the leading name is then about
#: e**3 = 20 times as likely as the runner-up (chosen on the tuning set of ``benchmarks/local_routing.py``).
CLEAR_MARGIN = 3.0


def is_clear(log_probabilities: dict[str, float], margin: float = CLEAR_MARGIN) -> bool:
    """Whether the leading name is ahead of the runner-up by at least ``margin`` in
    ``log_probabilities`` (each name's log-probability summed over the orders asked so far)."""
    ranked = sorted(log_probabilities.values(), reverse=True)
    return len(ranked) < 2 or ranked[0] - ranked[1] >= margin


def choose(
    loaded: Loaded,
    variants: Sequence[list[dict[str, str]]],
    names: Sequence[str],
    params: dict[str, Any],
    *,
    margin: float = CLEAR_MARGIN,
) -> Choice:
    """Choose among ``names`` the one the reply ``{"name": ...`` goes on with (call under ``loaded.lock``).

    ``variants`` are the request's messages with the tools listed in different orders. They are asked
    one after the other until the choice :func:`is_clear` by ``margin`` (``math.inf``: ask them all);
    the name with the highest log-probability summed over those asked wins. A name's probability is
    the product, over the points where the names part ways, of the model's probability of the token
    that leads to it among the tokens that lead to a name, as constrained decoding sees it.
    """
    started = time.perf_counter()
    llama = loaded.llama
    total = dict.fromkeys(names, 0.0)
    evaluated = asked = 0
    for messages in variants:
        prompt = _rendered(llama, messages, params)["prompt"]
        log_probabilities, spent = _name_log_probabilities(loaded, prompt, names)
        evaluated += spent
        asked += 1
        for name, value in log_probabilities.items():
            total[name] += value
        if is_clear(total, margin):
            break
    best = max(total.values())
    weights = {name: math.exp((value - best) / asked) for name, value in total.items()}
    whole = sum(weights.values())
    probabilities = {name: weight / whole for name, weight in weights.items()}
    return Choice(
        max(probabilities, key=lambda name: probabilities[name]),
        probabilities,
        asked,
        evaluated,
        time.perf_counter() - started,
    )


_NAME_HEAD = '{"name": '


def _name_log_probabilities(
    loaded: Loaded, prompt: list[int], names: Sequence[str]
) -> tuple[dict[str, float], int]:
    """Each name's log-probability after ``prompt``, and how many tokens that took to evaluate."""
    llama = loaded.llama
    paths = {
        name: llama.tokenize((_NAME_HEAD + json.dumps(name)).encode("utf-8"), add_bos=False, special=False)
        for name in names
    }
    shared = _shared_prefix(list(paths.values()))
    loaded.prefixes.restore(llama, prompt)
    evaluated = _evaluate(llama, prompt + shared)
    loaded.prefixes.save(llama)
    log_probabilities, more = _walk(llama, {name: path[len(shared) :] for name, path in paths.items()})
    return log_probabilities, evaluated + more


def _walk(llama: Any, rests: dict[str, list[int]]) -> tuple[dict[str, float], int]:
    """The log-probabilities of the names whose paths go on with ``rests`` from the model's current
    state, and the tokens evaluated to find them; the state is left where it was."""
    import llama_cpp
    import numpy as np

    if len(rests) == 1:
        return dict.fromkeys(rests, 0.0), 0
    by_token: dict[int, dict[str, list[int]]] = {}
    for name, rest in rests.items():
        by_token.setdefault(rest[0] if rest else -1, {})[name] = rest[1:]
    pointer = llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1)
    logits = np.ctypeslib.as_array(pointer, shape=(llama.n_vocab(),))
    tokens = [token for token in by_token if token >= 0]
    chosen = logits[tokens].astype(np.float64)
    chosen = chosen - chosen.max()
    log_shares = dict(zip(tokens, chosen - math.log(float(np.exp(chosen).sum())), strict=True))
    start = llama.n_tokens
    result: dict[str, float] = {}
    evaluated = 0
    for token, group in by_token.items():
        share = float(log_shares.get(token, 0.0))
        if len(group) == 1 or token < 0:
            result.update(dict.fromkeys(group, share))
            continue
        shared = _shared_prefix(list(group.values()))
        llama.n_tokens = start
        llama.eval([token, *shared])
        evaluated += 1 + len(shared)
        below, more = _walk(llama, {name: rest[len(shared) :] for name, rest in group.items()})
        evaluated += more
        result.update({name: share + value for name, value in below.items()})
    llama.n_tokens = start
    return result, evaluated


def _evaluate(llama: Any, tokens: list[int]) -> int:
    """Bring the model's state to ``tokens``, evaluating what its KV cache lacks (at least the last
    token, for fresh logits); return how many tokens were evaluated."""
    keep = min(_common_prefix(llama.input_ids[: llama.n_tokens].tolist(), tokens), len(tokens) - 1)
    llama.n_tokens = keep
    llama.eval(tokens[keep:])
    return len(tokens) - keep


def _shared_prefix(sequences: list[list[int]]) -> list[int]:
    shortest = min(sequences, key=len)
    length = 0
    while length < len(shortest) and all(sequence[length] == shortest[length] for sequence in sequences):
        length += 1
    return shortest[:length]


def _sample(
    llama: Any,
    prompt: list[int],
    request: dict[str, Any],
    grammar: Any,
    max_tokens: int,
    consume: Consumer | None,
    forced: Callable[[], str | None] | None,
) -> tuple[str, str, int]:
    import llama_cpp

    stops = [stop for stop in _stop_list(request.get("stop")) if stop]
    decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
    text = ""
    shown = 0
    completion = 0
    finish_reason = "length"
    tokens = llama.generate(
        prompt,
        top_k=request.get("top_k", 40),
        top_p=request.get("top_p", 0.95),
        min_p=request.get("min_p", 0.05),
        typical_p=request.get("typical_p", 1.0),
        temp=request.get("temperature", 0.8),
        repeat_penalty=request.get("repeat_penalty", 1.0),
        frequency_penalty=request.get("frequency_penalty", 0.0),
        presence_penalty=request.get("presence_penalty", 0.0),
        tfs_z=request.get("tfs_z", 1.0),
        mirostat_mode=request.get("mirostat_mode", 0),
        mirostat_tau=request.get("mirostat_tau", 5.0),
        mirostat_eta=request.get("mirostat_eta", 0.1),
        logits_processor=_with_logit_bias(request.get("logits_processor"), request.get("logit_bias")),
        stopping_criteria=request.get("stopping_criteria"),
        grammar=grammar,
    )
    try:
        for token in tokens:
            if llama_cpp.llama_vocab_is_eog(llama._model.vocab, token):
                finish_reason = "stop"
                break
            completion += 1
            text += decoder.decode(llama.detokenize([token]))
            cut = min((text.index(stop) for stop in stops if stop in text), default=None)
            if cut is not None:
                text, finish_reason = text[:cut], "stop"
                break
            safe = len(text) - _partial_stop(text, stops)
            if consume is not None and safe > shown:
                piece, shown = text[shown:safe], safe
                consume(piece)
            whole = forced() if forced is not None else None
            if whole is not None:
                text, shown, finish_reason = whole, len(whole), "stop"
                break
            if completion >= max_tokens:
                break
    finally:
        tokens.close()
    text += decoder.decode(b"", final=True)
    if consume is not None and len(text) > shown:
        consume(text[shown:])
    return text, finish_reason, completion


def _rendered(llama: Any, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
    """The completion request the model's chat handler makes of ``messages``: the prompt tokens, the
    template's stop strings, and the sampling parameters with the handler's defaults."""
    from llama_cpp import llama_chat_format

    handler = (
        llama.chat_handler
        or llama._chat_handlers.get(llama.chat_format)
        or llama_chat_format.get_chat_completion_handler(llama.chat_format)
    )
    capture = _CapturingLlama(llama)
    handler(llama=capture, messages=messages, **{**params, "stream": True})  # type: ignore[arg-type]
    if capture.request is None:
        raise RuntimeError(f"the chat format {llama.chat_format!r} did not make a completion request")
    return capture.request


class _CapturingLlama:
    """Stands in for the model in a chat handler and keeps the completion request it makes."""

    def __init__(self, llama: Any) -> None:
        self._llama = llama
        self.request: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llama, name)

    def create_completion(self, **request: Any) -> Any:
        self.request = request
        return iter(())


def _stop_list(stop: Any) -> list[str]:
    if stop is None:
        return []
    return [stop] if isinstance(stop, str) else list(stop)


def _partial_stop(text: str, stops: Sequence[str]) -> int:
    """How many characters at the end of ``text`` could be the start of a stop string."""
    longest = 0
    for stop in stops:
        for length in range(min(len(stop) - 1, len(text)), longest, -1):
            if text.endswith(stop[:length]):
                longest = length
                break
    return longest


def _with_logit_bias(processors: Any, logit_bias: dict[Any, float] | None) -> Any:
    if not logit_bias:
        return processors
    import numpy as np
    from llama_cpp import LogitsProcessorList

    bias = {int(token): float(value) for token, value in logit_bias.items()}

    def add_bias(input_ids: Any, scores: Any) -> Any:
        biased = np.copy(scores)
        for token, value in bias.items():
            biased[token] += value
        return biased

    return LogitsProcessorList([*(processors or []), add_bias])


def _reused_prefix(llama: Any, prompt: Sequence[int]) -> int:
    """How many prompt tokens llama.cpp will take from its KV cache rather than evaluate (its own rule:
    the longest common prefix, less one when that is the whole prompt, to refresh the logits)."""
    common = _common_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt)
    if common == len(prompt) and (llama.n_tokens != len(prompt) or llama._requires_eval):
        common -= 1
    return max(common, 0)


def _common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    length = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        length += 1
    return length


class PrefixStates:
    """The KV states of recent prompts, to restore the one that shares the longest prefix with a new
    prompt. Least recently used states go first once they take more than ``capacity_bytes``, or once
    there are more than ``capacity_states``.

    Each state is kept in a buffer that a later state reuses once this one is superseded or dropped:
    memory the process has not used yet costs a page fault a page, which on virtual machines made a
    new 6 MB buffer take 50 to 130 ms, against 2 ms to copy a state into a buffer used before.
    """

    def __init__(self, capacity_bytes: int, capacity_states: int = PREFIX_CACHE_STATES) -> None:
        self.capacity_bytes = capacity_bytes
        self.capacity_states = capacity_states
        self._states: OrderedDict[tuple[int, ...], tuple[Any, int]] = OrderedDict()
        self._spare: list[Any] = []

    def __len__(self) -> int:
        return len(self._states)

    @property
    def size(self) -> int:
        """The bytes the kept states take."""
        return sum(len(buffer) for buffer, _ in self._states.values())

    def restore(self, llama: Any, prompt: Sequence[int]) -> bool:
        """Load the kept state that spares the most of ``prompt``, if it spares more than the model's
        current KV cache does; return whether one was loaded."""
        current = _common_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt)
        best_tokens, best = None, current + _MIN_REUSE_GAIN - 1
        for tokens in self._states:
            common = _common_prefix(tokens, prompt)
            if common > best:
                best_tokens, best = tokens, common
        if best_tokens is None:
            return False
        import llama_cpp

        buffer, length = self._states[best_tokens]
        self._states.move_to_end(best_tokens)
        llama._ctx.kv_cache_clear()
        if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, buffer, length, 0) != length:
            llama._ctx.kv_cache_clear()
            llama.n_tokens = 0
            return False
        llama.input_ids[: len(best_tokens)] = best_tokens
        llama.n_tokens = len(best_tokens)
        llama._requires_eval = True
        return True

    def save(self, llama: Any) -> None:
        """Keep the model's current KV state, under the tokens it holds."""
        import llama_cpp

        tokens = tuple(llama.input_ids[: llama.n_tokens].tolist())
        if not tokens or self.capacity_bytes <= 0:
            return
        for kept in list(self._states):
            if tokens[: len(kept)] == kept:  # the new state holds all of this one
                self._spare.append(self._states.pop(kept)[0])
            elif kept[: len(tokens)] == tokens:  # this one holds all of the new state
                self._states.move_to_end(kept)
                return
        size = llama_cpp.llama_state_seq_get_size(llama._ctx.ctx, 0)
        while self._states and len(self._states) >= self.capacity_states:
            self._spare.append(self._states.popitem(last=False)[1][0])
        buffer = self._buffer(size)
        written = llama_cpp.llama_state_seq_get_data(llama._ctx.ctx, buffer, size, 0)
        if not written:
            self._spare.append(buffer)
            return
        self._states[tokens] = (buffer, written)
        while self.size > self.capacity_bytes and self._states:
            self._spare.append(self._states.popitem(last=False)[1][0])
        del self._spare[_SPARE_BUFFERS:]

    def _buffer(self, size: int) -> Any:
        """A buffer of at least ``size`` bytes: a spare one if one is large enough, else a new one with
        room to grow."""
        for index, spare in enumerate(self._spare):
            if len(spare) >= size:
                return self._spare.pop(index)
        return (ctypes.c_uint8 * (size + size // 4))()
