"""The demo's customer-support swarm: triage routes the customer to billing or technical support.

Triage hands off with a tool that also records the customer's name and issue in the context variables;
the specialists act with one of their tools (refunds and invoices; service status and tickets) and
answer the customer, and then their after-work gives the conversation back to the customer or ends it.
A specialist asked about the other's area hands the customer over with the same kind of tool. The prompts
are short and the tools few, so that a 1.5B-parameter model on a laptop CPU routes and acts reliably.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from parley import (
    AFTER_WORK,
    UPDATE_SYSTEM_MESSAGE,
    AfterWorkOption,
    ConversableAgent,
    SwarmAgent,
    SwarmResult,
)

Message = dict[str, Any]

TRIAGE = "triage"
BILLING = "billing"
TECHNICAL = "technical_support"

#: The customer's account in this pretend company: charge id -> (date, what, amount, note).
CHARGES = {
    "CH-302": ("2025-03-01", "Pro subscription, March", 29.0, "same as CH-301: likely a duplicate"),
    "CH-301": ("2025-03-01", "Pro subscription, March", 29.0, ""),
    "CH-288": ("2025-02-01", "Pro subscription, February", 29.0, ""),
}
SERVICES = {
    "login": "degraded: some sign-ins fail with 'invalid token' since 09:10 UTC; a fix is rolling out",
    "api": "operational",
    "desktop app": "operational; version 4.2.1 fixes a crash when exporting",
    "sync": "operational",
    "web dashboard": "operational",
}
Service = Literal["login", "api", "desktop app", "sync", "web dashboard"]

TRIAGE_PROMPT = """You are the triage agent of Acme's customer support. You never solve problems yourself: \
transfer the customer to the team for their request, or ask what they need when they have not said it."""

SPECIALIST_PROMPT = """You are Acme's {team} agent, in a chat with a customer. Speak to them directly, \
as "you".
{facts}
First call the one tool that fits what they need. After its result, tell them in one or two friendly \
sentences what you did, with the details the result gives, and what happens next. If they ask about \
{elsewhere}, transfer them.{customer}"""


@dataclass
class SupportSwarm:
    """The agents of the demo, ready for ``initiate_swarm_chat``."""

    triage: SwarmAgent
    billing: SwarmAgent
    technical: SwarmAgent

    @property
    def agents(self) -> list[ConversableAgent]:
        return [self.triage, self.billing, self.technical]

    @property
    def routes(self) -> dict[str, str]:
        """Which agent each of triage's tools hands the customer to."""
        return {"transfer_to_billing": BILLING, "transfer_to_technical_support": TECHNICAL}


def initial_context() -> dict[str, Any]:
    """The context variables a demo conversation starts with."""
    return {
        "customer_name": "unknown",
        "issue": "unknown",
        "subscription": "active",
        "refunds": [],
        "tickets": [],
    }


# ----------------------------------------------------------------------------------------------------
# triage's tools


# The strings are bounded, so that a small model's tool call always ends within max_tokens.
CustomerName = Annotated[str, "The customer's first name if they said it, else unknown", Field(max_length=40)]
Issue = Annotated[str, "The customer's problem in at most eight words", Field(max_length=60)]
ChargeId = Annotated[str, "The id of the charge, such as CH-301", Field(max_length=10)]


def transfer_to_billing(customer_name: CustomerName, issue: Issue) -> SwarmResult:
    """Money: charges, payments, refunds, invoices, receipts, prices, discounts, plans, subscriptions,
    cancelling, credit cards."""
    return _transfer(BILLING, customer_name, issue)


def transfer_to_technical_support(customer_name: CustomerName, issue: Issue) -> SwarmResult:
    """The product does not work: errors, crashes, bugs, login or password problems, slowness,
    installing, the app, the API, syncing."""
    return _transfer(TECHNICAL, customer_name, issue)


def ask_customer(question: Annotated[str, "One short question", Field(max_length=120)]) -> SwarmResult:
    """Ask what the customer needs, only when their message is a greeting or does not say it."""
    return SwarmResult(values=question, agent=AfterWorkOption.REVERT_TO_USER)


def _transfer(agent: str, customer_name: str, issue: str) -> SwarmResult:
    name = customer_name.strip()
    if name.lower() in ("", "unknown", "customer", "none", "n/a"):
        name = "unknown"
    return SwarmResult(
        values=f"Transferred to {agent}.",
        agent=agent,
        context_variables={"customer_name": name, "issue": issue.strip() or "unknown"},
    )


# ----------------------------------------------------------------------------------------------------
# billing


def refund_charge(charge_id: ChargeId, context_variables: dict[str, Any]) -> SwarmResult:
    """Refund a charge that was a mistake, such as a duplicate charge."""
    charge_id = charge_id.strip().upper()
    if charge_id not in CHARGES:
        return SwarmResult(values=f"There is no charge {charge_id}.")
    refunds = list(context_variables.get("refunds", []))
    if charge_id in refunds:
        return SwarmResult(values=f"{charge_id} was already refunded.")
    amount = CHARGES[charge_id][2]
    return SwarmResult(
        values=f"Refunded ${amount:.2f} for {charge_id}; it reaches the card in 3-5 days.",
        context_variables={"refunds": [*refunds, charge_id]},
    )


def cancel_subscription(context_variables: dict[str, Any]) -> SwarmResult:
    """Cancel the customer's subscription at the end of the paid month."""
    return SwarmResult(
        values="Cancelled the Pro subscription; it stays active until the end of the paid month.",
        context_variables={"subscription": "cancelled"},
    )


def email_invoice(charge_id: ChargeId) -> str:
    """Email the invoice (receipt) of a charge to the customer."""
    charge_id = charge_id.strip().upper()
    if charge_id not in CHARGES:
        return f"There is no charge {charge_id}."
    return f"Emailed the invoice for {charge_id} to the address on the account."


def billing_prompt(agent: ConversableAgent, messages: list[Message]) -> str:
    """Billing's system message: the customer's recent charges, and their name."""
    charges = "\n".join(
        f"- {charge_id}: {date}, {what}, ${amount:.2f}" + (f" ({note})" if note else "")
        for charge_id, (date, what, amount, note) in CHARGES.items()
    )
    return SPECIALIST_PROMPT.format(
        team="billing",
        facts=f"Their recent charges:\n{charges}",
        elsewhere="a problem with the product (errors, crashes, logins, the app)",
        **_customer(agent),
    )


# ----------------------------------------------------------------------------------------------------
# technical support


def service_status(service: Annotated[Service, "The service the customer has trouble with"]) -> str:
    """Check whether a service has a known problem right now."""
    return f"{service}: {SERVICES[service]}"


def open_ticket(
    summary: Annotated[str, "What goes wrong, in one sentence", Field(max_length=120)],
    context_variables: dict[str, Any],
) -> SwarmResult:
    """Open a ticket for the engineers about a problem that is not a known one."""
    tickets = list(context_variables.get("tickets", []))
    ticket = f"T-{1042 + len(tickets)}"
    return SwarmResult(
        values=f"Opened ticket {ticket}. Engineers answer within one business day.",
        context_variables={"tickets": [*tickets, ticket]},
    )


def technical_prompt(agent: ConversableAgent, messages: list[Message]) -> str:
    """Technical support's system message, with the customer's name."""
    return SPECIALIST_PROMPT.format(
        team="technical support",
        facts="Check the service first; open a ticket only for a problem that is not known.",
        elsewhere="money (charges, refunds, invoices, plans)",
        **_customer(agent),
    )


def _customer(agent: ConversableAgent) -> dict[str, str]:
    """The customer's name, last in a specialist's prompt. The prompt stays the same for the rest of the
    chat (what the customer needs is in the conversation), so the model evaluates only what is new
    on each turn."""
    name = agent.get_context("customer_name", "unknown")
    return {"customer": "" if name == "unknown" else f"\nTheir name is {name}."}


# ----------------------------------------------------------------------------------------------------


def only_the_conversation(agent_name: str) -> Callable[[list[Message]], list[Message]]:
    """A hook that hides the other agents' tool calls and results from an agent: a specialist reads
    the customer, not triage's handoff."""

    def hide(messages: list[Message]) -> list[Message]:
        return [
            message
            for message in messages
            if message.get("name") == agent_name
            or not (message.get("tool_calls") or message.get("role") == "tool")
        ]

    return hide


def build_support_swarm(llm_config: Callable[[str], Any], *, with_user: bool) -> SupportSwarm:
    """The three agents; ``llm_config(agent_name)`` gives each its model.

    Each specialist can hand the customer to the other when they ask about the other's area. With
    ``with_user`` the specialists give the conversation back to the customer when they are done, else
    their after-work ends the chat.
    """
    triage = SwarmAgent(
        TRIAGE,
        system_message=TRIAGE_PROMPT,
        llm_config=llm_config(TRIAGE),
        functions=[transfer_to_billing, transfer_to_technical_support, ask_customer],
        human_input_mode="NEVER",
    )
    billing = SwarmAgent(
        BILLING,
        llm_config=llm_config(BILLING),
        functions=[refund_charge, email_invoice, cancel_subscription, transfer_to_technical_support],
        update_agent_state_before_reply=[UPDATE_SYSTEM_MESSAGE(billing_prompt)],
        human_input_mode="NEVER",
    )
    technical = SwarmAgent(
        TECHNICAL,
        llm_config=llm_config(TECHNICAL),
        functions=[service_status, open_ticket, transfer_to_billing],
        update_agent_state_before_reply=[UPDATE_SYSTEM_MESSAGE(technical_prompt)],
        human_input_mode="NEVER",
    )
    for specialist in (billing, technical):
        specialist.register_hook("process_all_messages_before_reply", only_the_conversation(specialist.name))
    after_work = AFTER_WORK(AfterWorkOption.REVERT_TO_USER if with_user else AfterWorkOption.TERMINATE)
    billing.register_hand_off(after_work)
    technical.register_hand_off(after_work)
    return SupportSwarm(triage, billing, technical)
