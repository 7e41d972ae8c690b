"""How a finished chat is summarized: ``last_msg``, ``reflection_with_llm``, or a callable."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from parley.messages import Message, MessageSequence, content_str, flatten_for_model
from parley.termination import StopReason

if TYPE_CHECKING:
    from parley.agent import ConversableAgent
    from parley.models.base import ModelClient

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
    If the model call fails, the summary is empty and a ``UserWarning`` says why, as in AG2: the chat
    itself went well, and its result is kept.
    """
    return await summarize_with_model(
        conversation_of(sender, recipient),
        summary_args,
        model_of=recipient,
        fallback=sender,
        no_model=no_reflection_model(sender, recipient),
        sync=sync,
        empty_if_the_call_fails=True,
    )


def no_reflection_model(sender: ConversableAgent, recipient: ConversableAgent) -> str:
    """Why ``reflection_with_llm`` cannot summarize a chat between two agents without models."""
    return (
        f"summary_method='reflection_with_llm' needs a model, but neither {recipient.name} nor "
        f"{sender.name} has one (llm_config=False)"
    )


async def summarize_with_model(
    messages: list[Message],
    summary_args: dict[str, Any],
    *,
    model_of: ConversableAgent,
    fallback: ConversableAgent,
    no_model: str,
    sync: bool,
    empty_if_the_call_fails: bool = False,
) -> str:
    """The summary a model gives of ``messages`` (see :func:`summary_request`); the call counts on the
    agent whose model it is. With ``empty_if_the_call_fails`` (a chat's ``reflection_with_llm``
    summary, as in AG2: the chat itself went well), a failing model call gives :func:`empty_summary`."""
    owner, client, request = summary_request(
        messages, summary_args, model_of=model_of, fallback=fallback, no_model=no_model
    )
    params = _within_budgets(owner, client, request)
    if isinstance(params, StopReason):
        return empty_summary(f"the call would go past the chat's budget: {params.detail}")
    from parley.engine import current_chat

    chat = current_chat.get()  # the call is one of the chat's: its listeners see it
    started = owner._model_requested(chat, client, request, []) if chat is not None else 0.0
    try:
        response = client.create(request, **params) if sync else await client.a_create(request, **params)
    except Exception as error:
        if not empty_if_the_call_fails:
            raise
        return empty_summary(repr(error))
    owner._record_usage(response)  # counts against the chat's budgets too
    if chat is not None:
        owner._model_responded(chat, client, response, started)
    return content_str(response.message.get("content"))


def _within_budgets(
    owner: ConversableAgent, client: ModelClient, request: MessageSequence
) -> dict[str, Any] | StopReason:
    """The parameters that keep the summary call within the budgets of the chat it summarizes, or why it
    must not be made (the summary is a model call of that chat: a hard budget holds for it too)."""
    from parley.engine import current_chat

    chat = current_chat.get()
    if chat is None or chat.budgets is None:
        return {}
    from parley.budgets import NO_TOOLS

    return chat.budgets.before_model_call(owner.name, client, request, NO_TOOLS, chat.state.messages)


def empty_summary(why: str) -> str:
    """The empty summary of a chat ``reflection_with_llm`` could not summarize, with a ``UserWarning``."""
    warnings.warn(
        f"could not summarize the chat with reflection_with_llm: {why}; the summary is empty",
        UserWarning,
        stacklevel=3,
    )
    return ""


def summary_request(
    messages: list[Message],
    summary_args: dict[str, Any],
    *,
    model_of: ConversableAgent,
    fallback: ConversableAgent,
    no_model: str,
) -> tuple[ConversableAgent, ModelClient, MessageSequence]:
    """Who asks for a summary of ``messages``, with which model, and the request: the messages followed
    by ``summary_args["summary_prompt"]`` as a ``summary_role`` (``system``) message, to ``model_of``'s
    model (``fallback``'s if it has none).

    Raises:
        ValueError: neither agent has a model (``no_model`` says so), or a bad prompt or role.
    """
    prompt = summary_args.get("summary_prompt") or DEFAULT_SUMMARY_PROMPT
    if not isinstance(prompt, str):
        raise ValueError(f"summary_args['summary_prompt'] must be a string, not {prompt!r}")
    role = summary_args.get("summary_role") or "system"
    if not isinstance(role, str):
        raise ValueError(f"summary_args['summary_role'] must be a string, not {role!r}")
    owner = model_of if model_of.client is not None else fallback
    if owner.client is None:
        raise ValueError(no_model)
    return (
        owner,
        owner.client,
        MessageSequence(flatten_for_model(messages), [{"role": role, "content": prompt}]),
    )
