"""Shared helpers: scripted humans and speaker sequences."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from parley import ChatResult, ConversableAgent


class ScriptedHuman:
    """Answers an agent's human-input prompts from a list, and records the prompts it was shown."""

    def __init__(self, answers: Iterable[str]) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str, **kwargs: Any) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise AssertionError(f"the human was asked more often than scripted; last prompt: {prompt!r}")
        return self.answers.pop(0)


def human(agent: ConversableAgent, *answers: str) -> ScriptedHuman:
    """Script the human behind ``agent``."""
    scripted = ScriptedHuman(answers)
    agent.get_human_input = scripted  # type: ignore[method-assign]
    return scripted


def speakers(result: ChatResult) -> list[str]:
    """The names of the speakers of a chat, in order."""
    return [message["name"] for message in result.chat_history]


def contents(result: ChatResult) -> list[Any]:
    return [message.get("content") for message in result.chat_history]


@pytest.fixture
def quiet_agent():
    """Build a model-less agent that never asks a human and replies with a fixed text."""

    def build(name: str, reply: str = "", **kwargs: Any) -> ConversableAgent:
        kwargs.setdefault("human_input_mode", "NEVER")
        return ConversableAgent(
            name, llm_config=False, default_auto_reply=reply or f"{name} says hi", **kwargs
        )

    return build
