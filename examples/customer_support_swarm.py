"""A customer-support swarm: triage routes the customer to billing or technical support.

Run it with a scripted model (no API key, no network)::

    python examples/customer_support_swarm.py

or with any OpenAI-compatible server::

    python examples/customer_support_swarm.py --base-url http://localhost:8000/v1 --model qwen2.5 \
        --message "I was charged twice for my subscription"

The agents share context variables (the customer's name, the issue, refunds issued). Triage records
them with a tool and hands off with ``ON_CONDITION``; the specialists answer, and after their work the
conversation goes back to the user (interactively) or ends.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    UPDATE_SYSTEM_MESSAGE,
    AfterWorkOption,
    ChatResult,
    ScriptedModel,
    SwarmAgent,
    SwarmResult,
    UserProxyAgent,
    initiate_swarm_chat,
    tool_call,
)

INVOICES = {"INV-1001": 49.0, "INV-1002": 15.5}


def record_issue(
    customer_name: Annotated[str, "The customer's name, if they gave it"],
    issue: Annotated[str, "The customer's problem in a few words"],
    context_variables: dict[str, Any],
) -> SwarmResult:
    """Record who the customer is and what their problem is."""
    return SwarmResult(
        values=f"Recorded: {customer_name} - {issue}",
        context_variables={"customer_name": customer_name, "issue": issue},
    )


def lookup_invoice(invoice_id: Annotated[str, "An invoice number such as INV-1001"]) -> str:
    """Find an invoice's amount."""
    amount = INVOICES.get(invoice_id.upper())
    return f"{invoice_id}: ${amount:.2f}" if amount is not None else f"No invoice {invoice_id}."


def issue_refund(
    invoice_id: Annotated[str, "The invoice to refund"], context_variables: dict[str, Any]
) -> SwarmResult:
    """Refund an invoice in full."""
    amount = INVOICES.get(invoice_id.upper())
    if amount is None:
        return SwarmResult(values=f"Cannot refund: no invoice {invoice_id}.")
    refunds = [*context_variables.get("refunds", []), invoice_id.upper()]
    return SwarmResult(
        values=f"Refunded ${amount:.2f} for {invoice_id}.", context_variables={"refunds": refunds}
    )


def create_ticket(
    summary: Annotated[str, "What is broken"], context_variables: dict[str, Any]
) -> SwarmResult:
    """Open a ticket for the engineering team."""
    ticket = f"T-{100 + len(context_variables.get('tickets', []))}"
    tickets = [*context_variables.get("tickets", []), ticket]
    return SwarmResult(values=f"Opened {ticket}: {summary}", context_variables={"tickets": tickets})


SPECIALIST_PROMPT = (
    "You are the {team} agent of a software company's support desk. The customer is {customer_name}; "
    "their issue: {issue}. Use your tools, then answer the customer in one or two sentences."
)


def build_swarm(
    llm_config: Callable[[str], Any], with_user: bool
) -> tuple[SwarmAgent, list[SwarmAgent], UserProxyAgent | None]:
    """The three agents (and the user proxy, when a human is at the keyboard)."""
    triage = SwarmAgent(
        "triage",
        system_message=(
            "You are the triage agent of a support desk. First record the customer's name and issue with "
            "record_issue. Then transfer billing questions (invoices, charges, refunds) to billing and "
            "technical problems (errors, crashes, logins) to technical_support."
        ),
        llm_config=llm_config("triage"),
        functions=[record_issue],
        human_input_mode="NEVER",
    )
    billing = SwarmAgent(
        "billing",
        llm_config=llm_config("billing"),
        functions=[lookup_invoice, issue_refund],
        update_agent_state_before_reply=[
            UPDATE_SYSTEM_MESSAGE(SPECIALIST_PROMPT.replace("{team}", "billing"))
        ],
        human_input_mode="NEVER",
    )
    technical = SwarmAgent(
        "technical_support",
        llm_config=llm_config("technical_support"),
        functions=[create_ticket],
        update_agent_state_before_reply=[
            UPDATE_SYSTEM_MESSAGE(SPECIALIST_PROMPT.replace("{team}", "technical"))
        ],
        human_input_mode="NEVER",
    )
    triage.register_hand_off(
        [
            ON_CONDITION(billing, "Billing questions: invoices, charges, payments and refunds."),
            ON_CONDITION(technical, "Technical problems: errors, crashes, bugs and logins."),
        ]
    )
    back = AFTER_WORK(AfterWorkOption.REVERT_TO_USER if with_user else AfterWorkOption.TERMINATE)
    billing.register_hand_off(back)
    technical.register_hand_off(back)
    user = UserProxyAgent("customer", code_execution_config=False) if with_user else None
    return triage, [triage, billing, technical], user


def scripted_models() -> Callable[[str], ScriptedModel]:
    """Models that play a double-charge conversation, so the example runs offline."""
    scripts: dict[str, list[Any]] = {
        "triage": [
            [tool_call("record_issue", {"customer_name": "Ada", "issue": "charged twice for INV-1002"})],
            [tool_call("transfer_to_billing")],
        ],
        "billing": [
            [tool_call("lookup_invoice", {"invoice_id": "INV-1002"})],
            [tool_call("issue_refund", {"invoice_id": "INV-1002"})],
            "Sorry about that, Ada: I refunded the duplicate charge of $15.50 for INV-1002.",
        ],
        "technical_support": [],
    }
    return lambda name: ScriptedModel(scripts[name], model=f"scripted-{name}")


def endpoint_models(base_url: str, model: str, api_key: str) -> Callable[[str], dict[str, Any]]:
    """The same model behind an OpenAI-compatible endpoint for every agent."""
    config = {"config_list": [{"model": model, "base_url": base_url, "api_key": api_key}], "cache_seed": None}
    return lambda name: dict(config)


def run(
    message: str, llm_config: Callable[[str], Any], *, interactive: bool, silent: bool = False
) -> ChatResult:
    """Run the swarm on ``message`` and return its result."""
    triage, agents, user = build_swarm(llm_config, with_user=interactive)
    result, context, last = initiate_swarm_chat(
        initial_agent=triage,
        messages=message,
        agents=agents,
        user_agent=user,
        max_rounds=20,
        context_variables={"customer_name": "unknown", "issue": "unknown"},
        silent=silent,
    )
    if not silent:
        print(f"\nstopped: {result.stop_reason}  (last speaker: {last.name})")
        print(f"context: {dict(context)}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--message", default="Hi, I'm Ada. I was charged twice for invoice INV-1002.")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: a scripted model)")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--interactive", action="store_true", help="answer as the customer at the keyboard")
    args = parser.parse_args(argv)
    if args.base_url:
        models: Callable[[str], Any] = endpoint_models(
            args.base_url, args.model, os.environ.get("OPENAI_API_KEY", "none")
        )
    else:
        models = scripted_models()
    run(args.message, models, interactive=args.interactive)
    return 0


if __name__ == "__main__":
    sys.exit(main())
