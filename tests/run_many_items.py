"""What the run_many tests run per item: a support swarm whose every reply depends on the item.

A module of its own, so that Ray's workers can import it (the Ray tests put this directory on their
path). The agents are built once per process and shared by every chat in it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from parley import (
    AFTER_WORK,
    FunctionModel,
    ModelRequest,
    SwarmAgent,
    SwarmResult,
    a_initiate_swarm_chat,
    tool_call,
)
from parley.models import ModelResponse, Usage

_agents: list[SwarmAgent] | None = None


def costed(reply: str | list[dict[str, Any]], tokens: int) -> ModelResponse:
    message: dict[str, Any] = (
        {"role": "assistant", "content": reply}
        if isinstance(reply, str)
        else {"role": "assistant", "content": None, "tool_calls": reply}
    )
    return ModelResponse(message, Usage(tokens, 2), cost=tokens / 1000, model="support-model")


def customer_of(request: ModelRequest) -> str:
    return next(m["content"] for m in request.messages if m.get("role") == "user").removeprefix("I am ")


async def model_call(request: ModelRequest, model: str) -> str:
    """The customer a call is for. ``PARLEY_RUN_MANY_DELAY`` (seconds) makes each call wait that long;
    with ``PARLEY_RUN_MANY_LEDGER`` (a directory), each call adds a line to a file named by the customer,
    whichever process makes it."""
    await asyncio.sleep(float(os.environ.get("PARLEY_RUN_MANY_DELAY", "0")))
    customer = customer_of(request)
    ledger = os.environ.get("PARLEY_RUN_MANY_LEDGER")
    if ledger:
        with open(Path(ledger) / customer, "a") as calls:
            calls.write(f"{model} {os.getpid()}\n")
    return customer


async def triage_model(request: ModelRequest) -> ModelResponse:
    customer = await model_call(request, "triage")
    if request.messages[-1].get("role") == "tool":
        return costed("Passing you to billing.", tokens=len(customer))
    return costed([tool_call("look_up", id=f"look-{customer}")], tokens=len(customer) + 1)


async def billing_model(request: ModelRequest) -> ModelResponse:
    customer = await model_call(request, "billing")
    if customer.startswith("broken"):
        raise RuntimeError(f"the billing model is down for {customer}")
    if str(request.messages[-1].get("content") or "").startswith("refunded"):
        return costed(f"Refunded {customer}.", tokens=2 * len(customer))
    return costed([tool_call("refund", {"amount": len(customer)}, id=f"refund-{customer}")], tokens=3)


async def look_up(context_variables: dict[str, Any]) -> SwarmResult:
    """Look the customer up."""
    await asyncio.sleep(0)
    return SwarmResult(
        values=f"{context_variables['customer']} pays monthly",
        context_variables={"looked_up": True},
        agent="billing",
    )


def refund(amount: int, tool_call_id: str, context_variables: dict[str, Any]) -> str:
    """Refund the customer."""
    marks = context_variables.get("die_once_in")
    if marks:  # the process dies the first time this tool runs for this customer
        mark = Path(marks) / context_variables["customer"]
        if not mark.exists():
            mark.write_text(str(os.getpid()))
            os._exit(1)
    context_variables["refunded"] = amount
    return f"refunded {amount} ({tool_call_id})"


def support_agents() -> list[SwarmAgent]:
    global _agents
    if _agents is None:
        triage = SwarmAgent("triage", llm_config=FunctionModel(triage_model), functions=[look_up])
        billing = SwarmAgent("billing", llm_config=FunctionModel(billing_model), functions=[refund])
        billing.register_hand_off(AFTER_WORK("TERMINATE"))
        _agents = [triage, billing]
    return _agents


async def support_chat(item: dict[str, Any]) -> dict[str, Any]:
    """One support conversation for ``item`` (``{"customer": ...}``, and ``die_once_in``: a directory)."""
    agents = support_agents()
    context = {"customer": item["customer"]}
    if "die_once_in" in item:
        context["die_once_in"] = item["die_once_in"]
    result, context_after, last = await a_initiate_swarm_chat(
        agents[0], f"I am {item['customer']}", agents, context_variables=context, silent=True
    )
    return {
        "history": result.chat_history,
        "context": dict(context_after),
        "last": last.name,
        "pid": os.getpid(),
    }
