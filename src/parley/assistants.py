"""``AssistantAgent`` and ``UserProxyAgent``: ``ConversableAgent`` with AG2's defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from parley.agent import ConversableAgent, HumanInputMode
from parley.messages import Message


class AssistantAgent(ConversableAgent):
    """An assistant backed by a model: ``human_input_mode="NEVER"`` and an assistant system message."""

    DEFAULT_SYSTEM_MESSAGE = (
        "You are a helpful AI assistant. Solve the task you are given step by step, using your language "
        "skills and the tools you have. Be concise. When the task is done, reply with just TERMINATE."
    )
    DEFAULT_DESCRIPTION = "A general-purpose assistant that solves tasks step by step."

    def __init__(
        self,
        name: str,
        system_message: str | None = DEFAULT_SYSTEM_MESSAGE,
        llm_config: Any = None,
        is_termination_msg: Callable[[Message], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: HumanInputMode = "NEVER",
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name,
            system_message,
            is_termination_msg,
            max_consecutive_auto_reply,
            human_input_mode,
            llm_config=llm_config,
            description=description
            if description is not None
            else (self.DEFAULT_DESCRIPTION if system_message == self.DEFAULT_SYSTEM_MESSAGE else None),
            **kwargs,
        )


class UserProxyAgent(ConversableAgent):
    """A human's proxy: asks the human every time (``human_input_mode="ALWAYS"``) and has no model."""

    DEFAULT_USER_PROXY_AGENT_DESCRIPTIONS = {
        "ALWAYS": "The human user: answers questions about the task and reports the results of what they do.",
        "TERMINATE": "The human user's proxy: lets the conversation run and steps in when it would end.",
        "NEVER": "A proxy that acts for the user without asking them, running the tools it is given.",
    }

    def __init__(
        self,
        name: str,
        is_termination_msg: Callable[[Message], bool] | None = None,
        max_consecutive_auto_reply: int | None = None,
        human_input_mode: HumanInputMode = "ALWAYS",
        function_map: dict[str, Callable[..., Any]] | None = None,
        code_execution_config: dict[str, Any] | Literal[False] = {},  # noqa: B006 (AG2's default)
        default_auto_reply: str | dict[str, Any] = "",
        llm_config: Any = False,
        system_message: str | list[str] = "",
        description: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name=name,
            system_message=system_message,
            is_termination_msg=is_termination_msg,
            max_consecutive_auto_reply=max_consecutive_auto_reply,
            human_input_mode=human_input_mode,
            function_map=function_map,
            code_execution_config=code_execution_config,
            llm_config=llm_config,
            default_auto_reply=default_auto_reply,
            description=description
            if description is not None
            else self.DEFAULT_USER_PROXY_AGENT_DESCRIPTIONS.get(human_input_mode, ""),
            **kwargs,
        )
