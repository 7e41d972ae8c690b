"""The triage swarm and transfer tools the embedded-model and local-server tests route with."""

from __future__ import annotations

from typing import Any

from parley import AFTER_WORK, ON_CONDITION, AfterWorkOption, SwarmAgent
from parley.tools import Tool


def transfer_to_billing() -> str:
    """Billing questions: charges, invoices, refunds."""
    return "billing"


def transfer_to_technical_support() -> str:
    """Technical problems: errors, crashes, logins."""
    return "technical"


TOOLS = [Tool(transfer_to_billing).schema, Tool(transfer_to_technical_support).schema]
NAMES = {"transfer_to_billing", "transfer_to_technical_support"}
ROUTE = [
    {"role": "system", "content": "You route customers to the right team."},
    {"role": "user", "content": "I was charged twice for my subscription."},
]


def triage_swarm(config: dict[str, Any], billing_prompt: str) -> list[SwarmAgent]:
    """Triage, told to transfer every request, and billing and technical support, which end the chat
    after they answer; every agent on ``config``."""
    triage = SwarmAgent("triage", system_message="Transfer every request to a specialist.", llm_config=config)
    billing = SwarmAgent("billing", system_message=billing_prompt, llm_config=config)
    technical = SwarmAgent("technical_support", system_message="You fix problems.", llm_config=config)
    triage.register_hand_off(
        [ON_CONDITION(billing, "Charges, invoices, refunds."), ON_CONDITION(technical, "Errors, crashes.")]
    )
    for specialist in (billing, technical):
        specialist.register_hand_off(AFTER_WORK(AfterWorkOption.TERMINATE))
    return [triage, billing, technical]
