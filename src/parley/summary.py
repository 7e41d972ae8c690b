"""How a finished chat is summarized: ``last_msg``, ``reflection_with_llm``, or a callable."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from parley.messages import Message, MessageSequence, content_str, flatten_for_model

if TYPE_CHECKING:
    from parley.agent import ConversableAgent

SummaryMethod = Literal["last_msg", "reflection_with_llm"] | Callable[..., Any] | None

DEFAULT_SUMMARY_PROMPT = (
    "Summarize what the conversation above established, in a few sentences. Start directly with the summary."
)
SUMMARY_METHODS = ("last_msg", "reflection_with_llm")


def check_summary_method(summary_method: Any) -> None:
    """Fail early, naming it, on a summary method that does not exist."""
    if summary_method is None or callable(summary_method) or summary_method in SUMMARY_METHODS:
        return
    raise ValueError(
        f"summary_method must be one of {SUMMARY_METHODS} or a callable (sender, recipient, summary_args), "
        f"not {summary_method!r}"
    )


async def summarize(
    sender: ConversableAgent,
    recipient: ConversableAgent,
    summary_method: SummaryMethod,
    summary_args: dict[str, Any],
    *,
    sync: bool,
) -> Any:
    """The summary of the chat between ``sender`` (the initiator) and ``recipient``, as text (see
    :func:`summary_text`)."""
    if summary_method is None:
        return ""
    if summary_method == "last_msg":
        return last_message_summary(conversation_of(sender, recipient))
    if summary_method == "reflection_with_llm":
        return await reflect_with_llm(sender, recipient, summary_args, sync=sync)
    assert callable(summary_method)
    return summary_text(summary_method(sender, recipient, summary_args))


def summary_text(value: Any) -> str:
    """A summary method's result as text: a message dict gives its ``content``, ``None`` gives ``""``,
    anything else its ``str``."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict):
        return summary_text(value.get("content", ""))
    return str(value)


def conversation_of(sender: ConversableAgent, recipient: ConversableAgent) -> list[Message]:
    """The chat as the recipient saw it, or as the sender saw it if the recipient keeps no view
    (a group chat manager)."""
    view = recipient._find_view(sender)
    return (
        view.messages if view is not None and view.messages else sender.chat_messages_for_summary(recipient)
    )


def last_message_summary(messages: list[Message]) -> str:
    """The last message's text, without the word ``TERMINATE``."""
    if not messages:
        return ""
    return content_str(messages[-1].get("content")).replace("TERMINATE", "")


async def reflect_with_llm(
    sender: ConversableAgent, recipient: ConversableAgent, summary_args: dict[str, Any], *, sync: bool
) -> str:
    """Ask a model to summarize the conversation.

    The recipient's model is used (the sender's if the recipient has none); the request is the
    conversation followed by ``summary_args["summary_prompt"]`` as a ``summary_role`` (``system``) message.
    """
    return await summarize_with_model(
        conversation_of(sender, recipient),
        summary_args,
        model_of=recipient,
        fallback=sender,
        usage_on=sender,
        no_model=f"summary_method='reflection_with_llm' needs a model, but neither {recipient.name} nor "
        f"{sender.name} has one (llm_config=False)",
        sync=sync,
    )


async def summarize_with_model(
    messages: list[Message],
    summary_args: dict[str, Any],
    *,
    model_of: ConversableAgent,
    fallback: ConversableAgent,
    usage_on: ConversableAgent,
    no_model: str,
    sync: bool,
) -> str:
    """The summary a model gives of ``messages``: they are sent followed by
    ``summary_args["summary_prompt"]`` as a ``summary_role`` (``system``) message, to ``model_of``'s model
    (``fallback``'s if it has none); the call counts on ``usage_on``.

    Raises:
        ValueError: neither agent has a model (``no_model`` says so), or a bad prompt or role.
    """
    prompt = summary_args.get("summary_prompt") or DEFAULT_SUMMARY_PROMPT
    if not isinstance(prompt, str):
        raise ValueError(f"summary_args['summary_prompt'] must be a string, not {prompt!r}")
    role = summary_args.get("summary_role") or "system"
    if not isinstance(role, str):
        raise ValueError(f"summary_args['summary_role'] must be a string, not {role!r}")
    client = model_of.client or fallback.client
    if client is None:
        raise ValueError(no_model)
    request = MessageSequence(flatten_for_model(messages), [{"role": role, "content": prompt}])
    response = client.create(request) if sync else await client.a_create(request)
    usage_on._record_usage(response)  # counts against the chat's budgets too
    return content_str(response.message.get("content"))
