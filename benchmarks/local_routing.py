"""How well a triage agent on the embedded model routes customers, and how fast.

Each request starts a new swarm chat whose first reply is the triage agent's routing decision: a
transfer to a specialist the request belongs to is right; a transfer elsewhere, or an answer of its own,
is a miss. The chat ends right after the decision (``max_rounds=2``).

Two swarms, as users run them, without any wrapper around the model:

- ``seed``: the swarm the AG2 API invites: a triage agent told to transfer every request, three
  specialists (billing, technical_support, account) handed to through ``ON_CONDITION`` descriptions,
  ``AFTER_WORK`` TERMINATE, every agent on ``{"api_type": "local"}``;
- ``demo``: the agents of ``parley demo`` (billing and technical support; account requests are left out).

Prints every decision, the share routed right (the goal is 90%), the seconds per decision (median and
mean of the warm ones; the first, with a cold KV cache, apart), the prompt tokens llama.cpp evaluated
per decision (the rest came from its KV cache) and how many orders of the tool list it was asked with.

    .venv/bin/python -m benchmarks.local_routing [--swarm seed|demo] [--set tuning|held-out|fresh|final|check]
        [--model-path FILE.gguf] [--threads N]
        [--decoding orders|all-orders|one-order|greedy-named|greedy-content]
        [--limit N] [--show-orders] [--json]

``--decoding`` compares how the reply is decoded: parley's (names chosen by their probability, the tools
listed in up to three orders, the further ones asked only while the choice is not clear), the same with
every order asked (``all-orders``) or with the tools listed only in the order given (``one-order``), or
the whole reply generated token by token under the schema's grammar, with the plain reply offered as the
``reply_to_user`` name or as a separate ``{"content": ...}`` shape. ``--show-orders`` prints, under
each decision, every name's probability in each order of the tool list the model was asked with.
Needs ``parley-llm[local]`` (``./scripts/demo`` installs it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.routing_requests import ACCOUNT, BILLING, HELD_OUT, SPECIALISTS, TECHNICAL, TUNING, Request
from parley import (
    AFTER_WORK,
    ON_CONDITION,
    AfterWorkOption,
    ConversableAgent,
    SwarmAgent,
    initiate_swarm_chat,
)
from parley.models import json_tools
from parley.models.local import LocalModel

GOAL = 0.9


def _fresh() -> list[Request]:
    from benchmarks.routing_requests_fresh import FRESH

    return FRESH


def _final() -> list[Request]:
    from benchmarks.routing_requests_final import FINAL

    return FINAL


def _check() -> list[Request]:
    from benchmarks.routing_requests_check import CHECK

    return CHECK


#: The request sets, by name: the one tuned on, the one held out, and three written afterwards.
REQUEST_SETS: dict[str, Callable[[], list[Request]]] = {
    "tuning": lambda: TUNING,
    "held-out": lambda: HELD_OUT,
    "fresh": _fresh,
    "final": _final,
    "check": _check,
}

TRIAGE_PROMPT = (
    "You are the triage agent of a software company's customer support. Transfer every customer "
    "request to the specialist who handles it. Never answer a request yourself."
)
SPECIALIST_PROMPT = (
    "You are the {name} specialist of a software company's customer support. Help the customer."
)
CONDITIONS = {
    BILLING: "Questions about charges, payments, refunds, invoices, prices and subscription plans.",
    TECHNICAL: (
        "Technical problems: errors, crashes, bugs, login trouble, slowness, installing the app, the API "
        "and integrations."
    ),
    ACCOUNT: (
        "Changes to the account itself: its email address, names, team members and roles, data export, "
        "closing or deleting the account."
    ),
}


@dataclass
class Swarm:
    """A triage agent, everyone in its swarm, and which specialist each of triage's tools hands to."""

    triage: ConversableAgent
    agents: list[ConversableAgent]
    routes: dict[str, str]
    specialists: tuple[str, ...]


def seed_swarm(model_path: str | None = None, threads: int | None = None) -> Swarm:
    """The seed-API triage swarm on ``{"api_type": "local"}``."""
    config: dict[str, Any] = {"api_type": "local"}
    if model_path:
        config["model_path"] = model_path
    if threads:
        config["n_threads"] = threads
    llm_config = {"config_list": [config], "temperature": 0, "cache_seed": None}
    triage = SwarmAgent("triage", system_message=TRIAGE_PROMPT, llm_config=llm_config)
    specialists = [
        SwarmAgent(name, system_message=SPECIALIST_PROMPT.format(name=name), llm_config=llm_config)
        for name in SPECIALISTS
    ]
    triage.register_hand_off([ON_CONDITION(agent, CONDITIONS[agent.name]) for agent in specialists])
    for specialist in specialists:
        specialist.register_hand_off(AFTER_WORK(AfterWorkOption.TERMINATE))
    routes = {f"transfer_to_{name}": name for name in SPECIALISTS}
    return Swarm(triage, [triage, *specialists], routes, SPECIALISTS)


def demo_swarm(model_path: str | None = None, threads: int | None = None) -> Swarm:
    """The agents of ``parley demo`` on the embedded model, as the demo runs them."""
    from parley.demo.models import local_models
    from parley.demo.support import build_support_swarm

    support = build_support_swarm(local_models(model_path, n_threads=threads), with_user=False)
    return Swarm(support.triage, support.agents, support.routes, (BILLING, TECHNICAL))


@dataclass
class Decision:
    request: Request
    target: str
    said: str
    seconds: float
    prompt_tokens: int
    evaluated_prompt_tokens: int
    orders: int

    @property
    def right(self) -> bool:
        return self.request.accepts(self.target)


def decide(swarm: Swarm, request: Request) -> Decision:
    """Start a chat with ``request`` and return triage's routing decision."""
    started = time.perf_counter()
    result, _, _ = initiate_swarm_chat(
        initial_agent=swarm.triage, messages=request.text, agents=swarm.agents, max_rounds=2, silent=True
    )
    seconds = time.perf_counter() - started
    reply = result.chat_history[1]
    if reply.get("tool_calls"):
        function = reply["tool_calls"][0]["function"]
        target = swarm.routes.get(function["name"], f"(no handoff: {function['name']})")
        said = f"{function['name']}({function['arguments']})"
    else:
        target, said = "(answered itself)", repr(reply.get("content"))
    stats = _last_stats(swarm.triage)
    tokens = (stats.prompt_tokens, stats.evaluated_prompt_tokens, stats.orders) if stats else (0, 0, 0)
    return Decision(request, target, said, seconds, *tokens)


def _last_stats(agent: ConversableAgent) -> Any:
    try:
        return local_model_of(agent).last_stats
    except TypeError:  # not on the embedded model
        return None


def local_model_of(agent: ConversableAgent) -> LocalModel:
    """The embedded model behind an agent's client (through a config list or the demo's wrappers)."""
    client: Any = agent.client
    while not isinstance(client, LocalModel):
        if hasattr(client, "_client"):
            client = client._client(0)
        elif hasattr(client, "model"):
            client = client.model
        else:
            raise TypeError(f"{agent.name} does not run on the embedded model: {client!r}")
    return client


def requests_for(swarm: Swarm, requests: Sequence[Request]) -> list[Request]:
    """The requests the swarm has a specialist for, each accepting only its specialists."""
    kept = []
    for request in requests:
        accepted = [name for name in (request.expected, *request.also) if name in swarm.specialists]
        if accepted:
            kept.append(Request(request.text, accepted[0], tuple(accepted[1:]), request.ambiguous))
    return kept


@contextlib.contextmanager
def greedy_decoding(reply_shape: str) -> Iterator[None]:
    """The embedded model as it decoded tool calls before choosing names by probability: the whole
    reply generated token by token under the grammar of the full schema, with the plain reply offered
    as the ``reply_to_user`` name (``reply_shape="named"``) or as a separate ``{"content": ...}`` shape."""
    from parley.models.base import ModelResponse, Usage
    from parley.models.local import LocalStats
    from parley.models.local_runner import generate

    create, tools_prompt = LocalModel.create, json_tools.tools_prompt

    def content_prompt(tools: Any, tool_choice: Any = None) -> str:
        lines = tools_prompt(tools, tool_choice).splitlines()
        listed = [line for line in lines[:-1] if not line.startswith(f"- {json_tools.REPLY_TOOL}(")]
        call = '{"name": "<tool name>", "arguments": {<the arguments>}}'
        ending = (
            f"Reply with one JSON object. To call a tool: {call}. "
            'To reply without calling a tool: {"content": "<your reply>"}.'
        )
        return "\n".join([*listed, ending])

    def schema_of(tools: Any, tool_choice: Any) -> dict[str, Any]:
        schema = json_tools.tool_call_schema(tools, tool_choice)
        if reply_shape == "named":
            return schema
        options = [
            option for option in schema["anyOf"] if option["properties"]["name"]["const"] != "reply_to_user"
        ]
        content = {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}
        return {"anyOf": [*options, {**content, "additionalProperties": False}]}

    def greedy(self: LocalModel, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
        if not tools:
            return create(self, messages, tools, **params)
        engine = self._engine()
        sent, request, offered, tool_choice, _ = self._request(messages, tools, params)
        grammar = self._grammar(engine, schema_of(offered, tool_choice))
        with engine.lock:
            generation = generate(engine, sent, request, grammar=grammar)
        self.last_stats = LocalStats.of(generation)
        reply = json.loads(generation.text)
        if "content" in reply:
            message = {"role": "assistant", "content": reply["content"]}
        else:
            message = json_tools.parse_tool_json(generation.text, offered)
        usage = Usage(generation.prompt_tokens, generation.completion_tokens)
        return ModelResponse(message, usage, model=self.model)

    LocalModel.create = greedy  # type: ignore[method-assign]
    if reply_shape == "content":
        json_tools.tools_prompt = content_prompt  # type: ignore[assignment]
    try:
        yield
    finally:
        LocalModel.create = create  # type: ignore[method-assign]
        json_tools.tools_prompt = tools_prompt  # type: ignore[assignment]


@contextlib.contextmanager
def all_orders() -> Iterator[None]:
    """parley's decoding with every order of the tool list asked, however clear the choice is after the
    first."""
    from parley.models import local

    choose = local.choose
    local.choose = functools.partial(choose, margin=math.inf)
    try:
        yield
    finally:
        local.choose = choose


@contextlib.contextmanager
def one_order() -> Iterator[None]:
    """parley's decoding with the names' probabilities asked with the tool list in its given order only."""
    from parley.models import local

    orders = local._orders
    local._orders = lambda tools: [tools]  # type: ignore[assignment]
    try:
        yield
    finally:
        local._orders = orders  # type: ignore[assignment]


@contextlib.contextmanager
def recording_orders(asked: list[dict[str, float]]) -> Iterator[None]:
    """Append to ``asked`` each order's name probabilities as the embedded model chooses a name."""
    from parley.models import local_runner

    probabilities_of = local_runner._name_log_probabilities

    def recorded(loaded: Any, prompt: list[int], names: Sequence[str]) -> tuple[dict[str, float], int]:
        log_probabilities, evaluated = probabilities_of(loaded, prompt, names)
        asked.append({name: math.exp(value) for name, value in log_probabilities.items()})
        return log_probabilities, evaluated

    local_runner._name_log_probabilities = recorded  # type: ignore[assignment]
    try:
        yield
    finally:
        local_runner._name_log_probabilities = probabilities_of  # type: ignore[assignment]


def summarize(decisions: Sequence[Decision]) -> dict[str, Any]:
    """The figures of a run."""
    warm = decisions[1:] or decisions
    right = sum(decision.right for decision in decisions)
    return {
        "right": right,
        "total": len(decisions),
        "share": right / len(decisions),
        "ambiguous_right": sum(d.right for d in decisions if d.request.ambiguous),
        "ambiguous_total": sum(d.request.ambiguous for d in decisions),
        "answered_itself": sum(d.target == "(answered itself)" for d in decisions),
        "median_seconds": statistics.median(d.seconds for d in warm),
        "mean_seconds": statistics.fmean(d.seconds for d in warm),
        "first_seconds": decisions[0].seconds,
        "median_prompt_tokens": statistics.median(d.prompt_tokens for d in warm),
        "median_evaluated_prompt_tokens": statistics.median(d.evaluated_prompt_tokens for d in warm),
        "first_evaluated_prompt_tokens": decisions[0].evaluated_prompt_tokens,
        "median_orders": statistics.median(d.orders for d in warm),
        "orders_asked": {count: sum(d.orders == count for d in decisions) for count in (0, 1, 2, 3)},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--swarm", choices=("seed", "demo"), default="seed")
    parser.add_argument("--set", choices=tuple(REQUEST_SETS), default="tuning", dest="request_set")
    parser.add_argument("--model-path", help="a GGUF file instead of the default weights")
    parser.add_argument("--threads", type=int, help="CPU threads for llama.cpp (default: every CPU)")
    parser.add_argument(
        "--decoding",
        choices=("orders", "all-orders", "one-order", "greedy-named", "greedy-content"),
        default="orders",
        help="orders: names chosen by probability over tool orders, asked until the choice is clear "
        "(parley's); all-orders: every order asked; one-order: the given order only; greedy-*: the whole "
        "reply decoded token by token, the plain reply as reply_to_user or as a separate {content} shape",
    )
    parser.add_argument("--limit", type=int, help="only the first LIMIT requests (a smoke run)")
    parser.add_argument(
        "--show-orders", action="store_true", help="print each order's name probabilities per decision"
    )
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    build: Callable[[str | None, int | None], Swarm] = seed_swarm if args.swarm == "seed" else demo_swarm
    swarm = build(args.model_path, args.threads)
    local_model_of(swarm.triage).load()
    print(f"model loaded in {time.perf_counter() - started:.1f}s", flush=True)
    requests = requests_for(swarm, REQUEST_SETS[args.request_set]())
    requests = requests[: args.limit] if args.limit else requests

    decisions = []
    decoding: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
    if args.decoding.startswith("greedy"):
        decoding = greedy_decoding(args.decoding.removeprefix("greedy-"))
    elif args.decoding == "all-orders":
        decoding = all_orders()
    elif args.decoding == "one-order":
        decoding = one_order()
    asked: list[dict[str, float]] = []
    with decoding, recording_orders(asked):
        for request in requests:
            asked.clear()
            decision = decide(swarm, request)
            decisions.append(decision)
            mark = "ok  " if decision.right else "MISS"
            orders = f"{decision.orders} order" + ("s" if decision.orders != 1 else " ")
            tokens = f"{decision.evaluated_prompt_tokens:4d}/{decision.prompt_tokens:<4d} {orders}"
            print(
                f"{mark} {decision.seconds:5.2f}s {tokens} {request.expected:<17} -> {decision.target:<17} "
                f"{request.text!r}\n{'':12}{decision.said}",
                flush=True,
            )
            for number, probabilities in enumerate(asked if args.show_orders else [], 1):
                shown = ", ".join(f"{name} {value:.4g}" for name, value in probabilities.items())
                print(f"{'':12}order {number}: {shown}", flush=True)

    figures = summarize(decisions)
    print(
        f"\nrouted right: {figures['right']}/{figures['total']} ({figures['share']:.0%}; goal {GOAL:.0%}); "
        f"ambiguous: {figures['ambiguous_right']}/{figures['ambiguous_total']}; "
        f"answered itself: {figures['answered_itself']}"
    )
    print(
        f"seconds per routing decision: median {figures['median_seconds']:.2f}, "
        f"mean {figures['mean_seconds']:.2f} (first, with a cold KV cache: {figures['first_seconds']:.2f})"
    )
    print(
        f"prompt tokens evaluated per decision: median {figures['median_evaluated_prompt_tokens']:.0f} "
        f"of {figures['median_prompt_tokens']:.0f} (first: {figures['first_evaluated_prompt_tokens']})"
    )
    counts = ", ".join(f"{number} x {count}" for count, number in figures["orders_asked"].items() if number)
    print(f"orders of the tool list asked per decision: median {figures['median_orders']:g} ({counts})")
    if args.json:
        print(
            json.dumps({"swarm": args.swarm, "set": args.request_set, "decoding": args.decoding, **figures})
        )
    return 0 if figures["share"] >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
