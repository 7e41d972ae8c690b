"""Running the demo's swarm on a customer's message, shown live."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.console import Console
from rich.markup import escape

from parley import ChatResult, UserProxyAgent, initiate_swarm_chat
from parley.demo.display import LiveDisplay, Thinking
from parley.demo.models import ModelFor
from parley.demo.support import build_support_swarm, initial_context
from parley.events import listening

MAX_ROUNDS = 20

Ask = Callable[[str], str]
"""Asks the human at the keyboard: ``ask(prompt) -> answer``."""


def run_demo(
    message: str,
    model_for: ModelFor,
    *,
    console: Console,
    ask: Ask | None = None,
    max_rounds: int = MAX_ROUNDS,
) -> ChatResult:
    """Run the support swarm on ``message`` and show it on ``console``; return the chat's result.

    With ``ask``, the specialists hand the conversation back to the customer, who answers through
    ``ask`` (``exit`` or nothing ends the chat); without it, the chat ends when a specialist is done.
    Raises what the chat raised (a model error, say), after showing the summary of the chat so far.
    """
    display = LiveDisplay(console)
    swarm = build_support_swarm(
        lambda name: Thinking(model_for(name), name, display), with_user=ask is not None
    )
    customer = None
    if ask is not None:
        customer = UserProxyAgent("customer", code_execution_config=False)
        customer.get_human_input = _human(ask)  # type: ignore[method-assign]
    context = initial_context()
    started = time.perf_counter()
    try:
        with listening(display):
            result, context, _ = initiate_swarm_chat(
                initial_agent=swarm.triage,
                messages=message,
                agents=swarm.agents,
                user_agent=customer,
                max_rounds=max_rounds,
                context_variables=context,
                silent=True,
            )
    except Exception as error:
        partial: ChatResult | None = getattr(error, "chat_result", None)
        if partial is not None:
            display.summary(partial, context, time.perf_counter() - started)
        raise
    display.summary(result, context, time.perf_counter() - started)
    return result


def _human(ask: Ask) -> Callable[..., str]:
    def get_human_input(prompt: str, **kwargs: object) -> str:
        answer = ask("you (exit to end)").strip()
        return answer or "exit"

    return get_human_input


def console_ask(console: Console) -> Ask:
    """Ask on the console."""
    return lambda prompt: console.input(f"[bold yellow]{escape(prompt)}[/] > ")


def scripted_ask(answers: Sequence[str]) -> Ask:
    """Answer from ``answers`` in turn, then end the chat (``exit``)."""
    remaining = list(answers)
    return lambda prompt: remaining.pop(0) if remaining else "exit"
