"""AG2's classic group chat: ``GroupChat`` (who takes part and how the next speaker is chosen) and
``GroupChatManager`` (the agent the group talks through), on the one engine.

``agent.initiate_chat(manager, message=...)`` runs the group chat: every agent's peer is the manager, so
each agent's ``chat_messages[manager]`` holds the whole conversation, its own messages as ``assistant``.
The rule for the next speaker is :class:`~parley.speaker_selection.SpeakerSelection`; the chat ends when
``max_round`` messages were sent (the initial message is round 1), when the manager's
``is_termination_msg`` accepts a message (the initial one included), when no next speaker is found, or
when a speaker ends it as it would end a two-agent chat (its own termination check, ``exit`` typed by its
human, a reply function's final ``None``).
"""

from __future__ import annotations

import json
import operator
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any, Literal

from parley.agent import Agent, ConversableAgent, HumanInputMode, default_is_termination_msg
from parley.coroutines import run_sync
from parley.engine import Chat, current_chat
from parley.events import ConsolePrinter, Listener, Notice
from parley.exceptions import AgentNameConflictError
from parley.messages import Message, as_own, content_str, flatten_for_model, to_logged
from parley.models.base import ModelClient
from parley.models.config import model_client_from_llm_config
from parley.records import FrozenRecord
from parley.reply_chain import function_name
from parley.speaker_selection import (
    DEFAULT_SELECT_SPEAKER_AUTO_MULTIPLE_TEMPLATE,
    DEFAULT_SELECT_SPEAKER_AUTO_NONE_TEMPLATE,
    DEFAULT_SELECT_SPEAKER_MESSAGE_TEMPLATE,
    DEFAULT_SELECT_SPEAKER_PROMPT_TEMPLATE,
    SpeakerSelection,
    agent_list,
    check_method,
    next_in_turn,
)
from parley.termination import StopKind, StopReason, max_round_condition, max_turns_condition

if TYPE_CHECKING:
    from parley.termination import StopCondition

_name_of = operator.attrgetter("name")

SpeakerSelectionMethod = Literal["auto", "manual", "random", "round_robin"] | str | Callable[..., Any]


class GroupChat:
    """The agents of a group chat, its messages, and how its next speaker is chosen.

    Args:
        agents: the agents that take part, with unique names (the selection methods by name need two or
            more; a callable can run a group of one).
        messages: the conversation's messages; the same list is kept and filled as the chat runs.
        max_round: the most messages the chat sends, the initial message included.
        admin_name: a name, besides the manager's, that resumed messages may carry.
        func_call_filter: after a message that calls tools, only agents that can execute them may speak.
        speaker_selection_method: ``"auto"``, ``"manual"``, ``"random"``, ``"round_robin"`` (any case) or a
            callable ``(last_speaker, groupchat)`` returning an agent, a method name, or ``None`` to end.
        max_retries_for_selecting_speaker: how many times ``"auto"`` asks the model again.
        allow_repeat_speaker: ``True`` (default), ``False``, or the agents that may speak twice in a row.
        allowed_or_disallowed_speaker_transitions: ``{agent: [agents]}``, the speakers that may (or may
            not) follow each agent. Every method keeps to it.
        speaker_transitions_type: ``"allowed"`` or ``"disallowed"``, required with a transition graph.
            In an allowed graph, an agent without a key or with an empty list has no successor: the chat
            ends after it speaks.
        enable_clear_history: a reply (a message dict) containing ``clear history`` makes the agents forget
            the conversation so far (see :meth:`GroupChatManager.clear_agents_history`).
        send_introductions: tell every agent who is in the group (name and description) before the first
            message; the introduction is in the agents' views, not in ``messages``.
        select_speaker_message_template: ``"auto"``'s system message; ``{roles}`` and ``{agentlist}``.
        select_speaker_prompt_template: ``"auto"``'s closing instruction; ``{agentlist}``; ``None`` omits it.
        select_speaker_auto_multiple_template: the retry message when the model named several agents.
        select_speaker_auto_none_template: the retry message when the model named no agent.
        select_speaker_transform_messages: rewrites the conversation ``"auto"``'s model reads: an object
            with ``apply_transforms(messages) -> messages`` (as AG2's ``TransformMessages``).
        select_speaker_auto_verbose: tell the chat's listeners (the console) every answer of ``"auto"``'s
            model and what it selected.
        select_speaker_auto_model_client_cls: not supported (AG2's custom model client classes); give a
            model as ``select_speaker_auto_llm_config`` instead.
        select_speaker_auto_llm_config: the model ``"auto"`` asks (any ``llm_config``), instead of the
            manager's.
        role_for_select_speaker_messages: the role of ``"auto"``'s instruction and retry messages.
    """

    DEFAULT_INTRO_MSG = "Hello, everyone. Here is who takes part in this conversation, and what each does:"

    def __init__(
        self,
        agents: Sequence[ConversableAgent],
        messages: list[Message] | None = None,
        max_round: int = 10,
        admin_name: str = "Admin",
        func_call_filter: bool = True,
        speaker_selection_method: SpeakerSelectionMethod = "auto",
        max_retries_for_selecting_speaker: int = 2,
        allow_repeat_speaker: bool | list[ConversableAgent] | None = None,
        allowed_or_disallowed_speaker_transitions: dict[Any, Any] | None = None,
        speaker_transitions_type: Literal["allowed", "disallowed"] | None = None,
        enable_clear_history: bool = False,
        *,
        send_introductions: bool = False,
        select_speaker_message_template: str = DEFAULT_SELECT_SPEAKER_MESSAGE_TEMPLATE,
        select_speaker_prompt_template: str | None = DEFAULT_SELECT_SPEAKER_PROMPT_TEMPLATE,
        select_speaker_auto_multiple_template: str = DEFAULT_SELECT_SPEAKER_AUTO_MULTIPLE_TEMPLATE,
        select_speaker_auto_none_template: str = DEFAULT_SELECT_SPEAKER_AUTO_NONE_TEMPLATE,
        select_speaker_transform_messages: Any = None,
        select_speaker_auto_verbose: bool | None = False,
        select_speaker_auto_model_client_cls: Any = None,
        select_speaker_auto_llm_config: Any = None,
        role_for_select_speaker_messages: str = "system",
    ) -> None:
        if not isinstance(agents, list | tuple):
            raise TypeError(f"agents must be a list of agents, not {type(agents).__name__}")
        self.agents: list[ConversableAgent] = agents if isinstance(agents, list) else list(agents)
        self.check_agents()
        if messages is not None and not isinstance(messages, list):
            raise TypeError(f"messages must be a list of message dicts, not {type(messages).__name__}")
        self.messages: list[Message] = [] if messages is None else messages
        if not isinstance(max_round, int) or isinstance(max_round, bool) or max_round < 1:
            raise ValueError(
                f"max_round must be an int of at least 1 (the initial message), not {max_round!r}"
            )
        self.max_round = max_round
        self.admin_name = admin_name
        self.func_call_filter = _flag("func_call_filter", func_call_filter)
        if not callable(speaker_selection_method):
            check_method(speaker_selection_method)
        self.speaker_selection_method = speaker_selection_method
        if (
            not isinstance(max_retries_for_selecting_speaker, int)
            or isinstance(max_retries_for_selecting_speaker, bool)
            or max_retries_for_selecting_speaker < 0
        ):
            raise ValueError(
                "max_retries_for_selecting_speaker must be a non-negative int, "
                f"not {max_retries_for_selecting_speaker!r}"
            )
        self.max_retries_for_selecting_speaker = max_retries_for_selecting_speaker
        self.send_introductions = _flag("send_introductions", send_introductions)
        self.select_speaker_message_template = _template(
            "select_speaker_message_template", select_speaker_message_template, roles="", agentlist=""
        )
        if select_speaker_prompt_template == "":
            select_speaker_prompt_template = None
        if select_speaker_prompt_template is not None and not isinstance(select_speaker_prompt_template, str):
            raise TypeError(
                "select_speaker_prompt_template must be a string or None, "
                f"not {type(select_speaker_prompt_template).__name__}"
            )
        self.select_speaker_prompt_template = select_speaker_prompt_template
        self.select_speaker_auto_multiple_template = _template(
            "select_speaker_auto_multiple_template", select_speaker_auto_multiple_template, agentlist=""
        )
        self.select_speaker_auto_none_template = _template(
            "select_speaker_auto_none_template", select_speaker_auto_none_template, agentlist=""
        )
        if not isinstance(role_for_select_speaker_messages, str) or not role_for_select_speaker_messages:
            raise ValueError(
                "role_for_select_speaker_messages must be a non-empty string such as 'system' or 'user', "
                f"not {role_for_select_speaker_messages!r}"
            )
        self.role_for_select_speaker_messages = role_for_select_speaker_messages
        if select_speaker_transform_messages is not None and not callable(
            getattr(select_speaker_transform_messages, "apply_transforms", None)
        ):
            raise ValueError(
                "select_speaker_transform_messages must be None or an object with "
                f"apply_transforms(messages), not {select_speaker_transform_messages!r}"
            )
        self.select_speaker_transform_messages = select_speaker_transform_messages
        self.select_speaker_auto_verbose = _flag("select_speaker_auto_verbose", select_speaker_auto_verbose)
        if select_speaker_auto_model_client_cls is not None:
            raise ValueError(
                "select_speaker_auto_model_client_cls is not supported: parley has no AG2 model client "
                "classes; give the model itself as select_speaker_auto_llm_config (an llm_config or a "
                "parley model such as ScriptedModel)"
            )
        self.select_speaker_auto_model_client_cls = None
        self.select_speaker_auto_llm_config = select_speaker_auto_llm_config
        self._selector: ModelClient | None = model_client_from_llm_config(select_speaker_auto_llm_config)
        self.enable_clear_history = _flag("enable_clear_history", enable_clear_history)
        self._allow_repeat_speaker = allow_repeat_speaker
        self.allowed_or_disallowed_speaker_transitions = allowed_or_disallowed_speaker_transitions
        self.speaker_transitions_type = speaker_transitions_type
        self.allowed_speaker_transitions_dict: dict[Agent, list[ConversableAgent]] = self._transitions()

    @property
    def allow_repeat_speaker(self) -> bool | list[ConversableAgent] | None:
        """Whether an agent may speak twice in a row (or which agents may). Setting it after the group
        chat is built changes who may speak next from then on."""
        return self._allow_repeat_speaker

    @allow_repeat_speaker.setter
    def allow_repeat_speaker(self, allow: bool | list[ConversableAgent] | None) -> None:
        self._allow_repeat_speaker = allow
        self.allowed_speaker_transitions_dict = self._transitions()

    _defaults: dict[str, Any] | None = None
    """The attributes of a group chat of no agents with every parameter at its default (made once)."""

    @classmethod
    def _of_checked(cls, agents: list[ConversableAgent], max_round: int) -> GroupChat:
        """``GroupChat(agents, messages=[], max_round=max_round)`` for agents and a round limit already
        checked (a swarm's), every other parameter at its default."""
        defaults = GroupChat._defaults
        if defaults is None:
            defaults = GroupChat._defaults = dict(vars(GroupChat([])))
        groupchat = cls.__new__(cls)
        vars(groupchat).update(defaults)
        groupchat.agents = agents
        groupchat.messages = []
        groupchat.max_round = max_round
        everyone = map(list, repeat(agents, len(agents)))
        groupchat.allowed_speaker_transitions_dict = dict(zip(agents, everyone, strict=True))
        return groupchat

    # ------------------------------------------------------------------------------------------------
    # validation

    def check_agents(self) -> None:
        """Fail, naming the problem, unless the agents are ConversableAgents with unique names."""
        agents = self.agents
        if not all(map(isinstance, agents, repeat(ConversableAgent))):
            for index, agent in enumerate(agents):
                if not isinstance(agent, ConversableAgent):
                    raise TypeError(f"agents[{index}] must be a ConversableAgent, not {agent!r}")
        if len(set(map(_name_of, agents))) == len(agents):
            return
        names = self.agent_names
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise AgentNameConflictError(
                f"agents must have unique names; these appear more than once: {duplicates}"
            )

    def _transitions(self) -> dict[Agent, list[ConversableAgent]]:
        repeat = self.allow_repeat_speaker
        graph = self.allowed_or_disallowed_speaker_transitions
        kind = self.speaker_transitions_type
        if repeat is not None and not isinstance(repeat, bool | list):
            raise ValueError(f"allow_repeat_speaker must be a bool or a list of agents, not {repeat!r}")
        if kind is not None:
            if not isinstance(kind, str) or kind.lower() not in ("allowed", "disallowed"):
                raise ValueError(f"speaker_transitions_type must be 'allowed' or 'disallowed', not {kind!r}")
            kind = self.speaker_transitions_type = kind.lower()  # type: ignore[assignment]
        if graph is None:
            if repeat is None:
                repeat = self._allow_repeat_speaker = True
            if repeat is True:
                return {agent: list(self.agents) for agent in self.agents}
            repeaters = self._members("allow_repeat_speaker", repeat) if isinstance(repeat, list) else []
            return {
                agent: [
                    other
                    for other in self.agents
                    if other is not agent or repeat is True or any(agent is r for r in repeaters)
                ]
                for agent in self.agents
            }
        if repeat is not None:
            raise ValueError(
                "allow_repeat_speaker and allowed_or_disallowed_speaker_transitions cannot both be given: "
                "set allow_repeat_speaker to None and put self-transitions in the graph"
            )
        if kind is None:
            raise ValueError(
                "allowed_or_disallowed_speaker_transitions needs speaker_transitions_type: "
                "'allowed' or 'disallowed'"
            )
        if not isinstance(graph, dict):
            raise TypeError(
                "allowed_or_disallowed_speaker_transitions must be a dict {agent: [agents]}, "
                f"not {type(graph).__name__}"
            )
        parameter = "allowed_or_disallowed_speaker_transitions"
        edges: dict[Agent, list[ConversableAgent]] = {}
        for source, targets in graph.items():
            (member,) = self._members(f"{parameter} (a key)", [source])
            if not isinstance(targets, list | tuple | set):
                raise TypeError(
                    f"{parameter}[{member.name!r}] must be a list of agents, not {type(targets).__name__}"
                )
            edges[member] = self._members(f"{parameter}[{member.name!r}]", list(targets))
        if kind == "allowed":
            return {
                source: [agent for agent in self.agents if any(agent is t for t in targets)]
                for source, targets in edges.items()
            }
        return {
            source: [agent for agent in self.agents if not any(agent is t for t in edges.get(source, ()))]
            for source in self.agents
        }

    def _members(self, parameter: str, agents: list[Any]) -> list[ConversableAgent]:
        members = []
        for agent in agents:
            if not any(agent is member for member in self.agents):
                shown = repr(agent.name) if isinstance(agent, Agent) else repr(agent)
                hint = "; use the agent objects, not their names" if isinstance(agent, str) else ""
                raise ValueError(
                    f"{parameter} names {shown}, which is not an agent of this group chat "
                    f"(agents: {self.agent_names}){hint}"
                )
            members.append(agent)
        return members

    # ------------------------------------------------------------------------------------------------
    # AG2's helpers

    @property
    def agent_names(self) -> list[str]:
        """The names of the agents, in order."""
        return [agent.name for agent in self.agents]

    def agent_by_name(
        self, name: str, recursive: bool = False, raise_on_name_conflict: bool = False
    ) -> ConversableAgent | None:
        """The agent called ``name``, or ``None``.

        With ``recursive``, the agents of group chats whose managers are agents of this one are searched
        too (:meth:`nested_agents`); with ``raise_on_name_conflict``, several agents of that name are an
        error.

        Raises:
            AgentNameConflictError: ``raise_on_name_conflict`` and the name is not unique.
        """
        agents = self.nested_agents() if recursive else self.agents
        found = [agent for agent in agents if agent.name == name]
        if raise_on_name_conflict and len(found) > 1:
            raise AgentNameConflictError(f"Found multiple agents with the same name: {name!r}")
        return found[0] if found else None

    def nested_agents(self) -> list[ConversableAgent]:
        """The agents, followed by those of the group chats of the managers among them, recursively."""
        agents = list(self.agents)
        for agent in self.agents:
            if isinstance(agent, GroupChatManager):
                agents.extend(agent.groupchat.nested_agents())
        return agents

    def manual_select_speaker(
        self, agents: Sequence[ConversableAgent] | None = None
    ) -> ConversableAgent | None:
        """Ask a human to choose the next speaker among ``agents`` (all by default), by number.

        The human is asked through the manager's ``get_human_input`` when a chat of this group is
        running, else at the console. Two tries; an empty answer or ``q`` chooses nobody.

        Returns:
            The agent chosen, or ``None``.
        """
        candidates = list(self.agents if agents is None else agents)
        listing = "\n".join(f"{number}: {agent.name}" for number, agent in enumerate(candidates, 1))
        prompt = (
            f"{listing}\nEnter the number of the next speaker (enter nothing or `q` to use auto selection): "
        )
        ask = self._human_asker()
        for _ in range(2):
            answer = ask(prompt).strip()
            if answer in ("", "q"):
                return None
            if answer.isdigit() and 1 <= int(answer) <= len(candidates):
                return candidates[int(answer) - 1]
            prompt = f"Invalid input: enter a number from 1 to {len(candidates)}, or nothing: "
        return None

    def _human_asker(self) -> Callable[[str], str]:
        chat = current_chat.get()
        rule = None if chat is None else chat.rule
        manager = getattr(rule, "manager", None)
        if isinstance(manager, GroupChatManager) and manager.groupchat is self._shared_group:

            def ask(prompt: str) -> str:
                return run_sync(manager._ask_human(prompt, True, chat))

            return ask
        return input

    def selector_client(self) -> ModelClient | None:
        """The model ``select_speaker_auto_llm_config`` describes, if any."""
        return self._selector

    def next_agent(
        self, agent: Agent | None, agents: Sequence[ConversableAgent] | None = None
    ) -> ConversableAgent:
        """The agent after ``agent`` in turn, among ``agents`` (all agents by default)."""
        return next_in_turn(self.agents, agent, self.agents if agents is None else agents)

    def reset(self) -> None:
        """Forget the messages."""
        self.messages.clear()

    def append(self, message: Message | str, speaker: Agent) -> None:
        """Add a message said by ``speaker`` to the messages (outside a running chat). As in AG2, the
        message is named after ``speaker`` whatever name it had, unless it is a function's result."""
        if isinstance(message, dict) and message.get("role") != "function" and "name" in message:
            message = {**message, "name": speaker.name}
        self.messages.append(to_logged(message, speaker.name, parameter="message"))

    @property
    def _shared_group(self) -> GroupChat:
        """The ``GroupChat`` its chats share: this one (see :meth:`as_seen_by`)."""
        return self

    def as_seen_by(self, messages: list[Message]) -> GroupChat:
        """This group chat as one of its chats sees it: every attribute read from and written to this
        one, but ``messages``, which are the chat's own (chats at once over one ``GroupChat``)."""
        return _OneChatsGroupChat(self, messages)

    def select_speaker_msg(self, agents: Sequence[Agent] | None = None) -> str:
        """``"auto"``'s system message for choosing among ``agents``."""
        agents = self.agents if agents is None else agents
        return self.select_speaker_message_template.format(
            roles=self._participant_roles(agents), agentlist=agent_list(agents)
        )

    def select_speaker_prompt(self, agents: Sequence[Agent] | None = None) -> str | None:
        """``"auto"``'s closing instruction for choosing among ``agents``, or ``None``."""
        if self.select_speaker_prompt_template is None:
            return None
        agents = self.agents if agents is None else agents
        return self.select_speaker_prompt_template.replace("{agentlist}", agent_list(agents))

    def introductions_msg(self, agents: Sequence[Agent] | None = None) -> str:
        """The introduction ``send_introductions`` sends."""
        roles = self._participant_roles(self.agents if agents is None else agents)
        return f"{self.DEFAULT_INTRO_MSG}\n\n{roles}"

    @staticmethod
    def _participant_roles(agents: Sequence[Agent]) -> str:
        return "\n".join(f"{agent.name}: {agent.description}".strip() for agent in agents)


_DEFAULT_TEMPLATES = frozenset(
    {
        DEFAULT_SELECT_SPEAKER_MESSAGE_TEMPLATE,
        DEFAULT_SELECT_SPEAKER_AUTO_MULTIPLE_TEMPLATE,
        DEFAULT_SELECT_SPEAKER_AUTO_NONE_TEMPLATE,
    }
)


def _template(parameter: str, template: Any, **placeholders: str) -> str:
    if type(template) is str and template in _DEFAULT_TEMPLATES:
        return template
    if not isinstance(template, str) or not template:
        raise ValueError(f"{parameter} must be a non-empty string, not {template!r}")
    try:
        template.format(**placeholders)
    except (KeyError, IndexError, ValueError) as error:
        raise ValueError(
            f"{parameter} can only use the placeholders {sorted('{' + p + '}' for p in placeholders)} "
            f"(write other braces as {{{{ and }}}}): {type(error).__name__}: {error}"
        ) from None
    return template


class _OneChatsGroupChat(GroupChat):
    """A shared :class:`GroupChat` with one chat's ``messages`` (see :meth:`GroupChat.as_seen_by`)."""

    def __init__(self, shared: GroupChat, messages: list[Message]) -> None:
        object.__setattr__(self, "_shared", shared)
        object.__setattr__(self, "messages", messages)

    @property
    def _shared_group(self) -> GroupChat:
        shared: GroupChat = object.__getattribute__(self, "_shared")
        return shared

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_shared"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "messages":
            object.__setattr__(self, name, value)
        else:
            setattr(object.__getattribute__(self, "_shared"), name, value)


def speaker_named(reply: dict[str, Any], speaker: ConversableAgent) -> dict[str, Any]:
    """A member's reply (a message dict) as a group logs it: under the speaker's own name (a function
    result keeps the function's)."""
    name = reply.get("name")
    if name is not None and name != speaker.name and reply.get("role") != "function":
        return {**reply, "name": speaker.name}
    return reply


@dataclass(slots=True, init=False, repr=False, eq=False)
class ManagerTermination(FrozenRecord):
    """The manager's ``is_termination_msg``, checked on every message of the group chat."""

    manager: GroupChatManager

    def __init__(self, manager: GroupChatManager) -> None:
        object.__setattr__(self, "manager", manager)

    def check(self, chat: Chat) -> StopReason | None:
        state = chat.state
        if state.rounds == 0:
            return None
        message = state.messages[-1]
        is_termination_msg = self.manager._is_termination_msg
        if is_termination_msg is default_is_termination_msg:
            content = message.get("content")
            if content is None or (content != "TERMINATE" and type(content) is str):
                return None
        if not is_termination_msg(message):
            return None
        return StopReason(
            StopKind.TERMINATION_MSG,
            f"The group chat manager {self.manager.name} received a termination message from "
            f"{message.get('name')}",
            self.manager.name,
        )


class GroupChatManager(ConversableAgent):
    """The agent a group chat runs through: ``agent.initiate_chat(manager, message=...)`` starts it.

    Args:
        groupchat: the group chat.
        name: the manager's name (no agent of the group may have it).
        is_termination_msg: checked on every message of the group chat, the initial one included.
        llm_config: the model ``"auto"`` speaker selection asks (it may not offer tools).
        silent: do not print the group chat.
        **kwargs: the rest of :class:`ConversableAgent`'s parameters.
    """

    def __init__(
        self,
        groupchat: GroupChat,
        name: str = "chat_manager",
        max_consecutive_auto_reply: int | None = sys.maxsize,
        human_input_mode: HumanInputMode = "NEVER",
        system_message: str | list[str] | None = "Group chat manager.",
        silent: bool = False,
        **kwargs: Any,
    ) -> None:
        if not isinstance(groupchat, GroupChat):
            raise TypeError(f"groupchat must be a GroupChat, not {type(groupchat).__name__}")
        llm_config = kwargs.get("llm_config")
        if isinstance(llm_config, dict) and (llm_config.get("tools") or llm_config.get("functions")):
            raise ValueError(
                "a GroupChatManager does not call tools: remove 'tools' and 'functions' from its llm_config"
            )
        super().__init__(
            name,
            system_message,
            max_consecutive_auto_reply=max_consecutive_auto_reply,
            human_input_mode=human_input_mode,
            **kwargs,
        )
        if name in map(_name_of, groupchat.agents):
            raise ValueError(
                f"the GroupChatManager's name {name!r} is also the name of an agent of the group"
            )
        self._groupchat = groupchat
        self._silent = silent
        self._last_chat: Chat | None = None
        self._runs_swarm = False

    @property
    def groupchat(self) -> GroupChat:
        """The group chat this manager runs."""
        return self._groupchat

    @property
    def last_speaker(self) -> ConversableAgent | None:
        """The agent that sent the last message of the group chat's last run."""
        return None if self._last_chat is None else self._last_chat.last_speaker

    @property
    def chat_messages(self) -> defaultdict[Agent, list[Message]]:
        """``{agent: messages}``: what the manager exchanged with each agent in its latest group chat, as
        AG2's manager keeps it: every message, those the agent said as received (``user``), the others
        as passed on to it (``assistant``); an initiator outside the group only said its first message."""
        chat = current_chat.get()
        if chat is None or not any(peer is self for peer in chat.peers.values()):
            chat = self._last_chat
        if chat is None or chat.state.shape != "group":
            return super().chat_messages
        exchanged: defaultdict[Agent, list[Message]] = defaultdict(list)
        log = chat.state.messages
        members = self._groupchat.agents
        for agent in sorted(chat.peers, key=members.__contains__):  # as AG2: the initiator first
            if agent in members:
                exchanged[agent] = [_passed_on(message, agent.name) for message in log]
            else:
                exchanged[agent] = [message for message in log if message.get("name") == agent.name][:1]
        return exchanged

    def last_message(self, agent: Agent | None = None) -> Message | None:
        """The last message the manager exchanged with ``agent`` in its latest group chat (see
        :attr:`chat_messages`); with no ``agent``, of its only conversation.

        Raises:
            ValueError: no ``agent`` is given and the manager talked with more than one.
            KeyError: the manager had no conversation with ``agent``.
        """
        exchanged = self.chat_messages
        if agent is None:
            if len(exchanged) > 1:
                raise ValueError(
                    "more than one conversation found: pass the agent whose last message you want"
                )
            return next((messages[-1] for messages in exchanged.values() if messages), None)
        if agent not in exchanged:
            raise KeyError(f"{self.name} has had no conversation with {agent.name}")
        messages = exchanged[agent]
        return messages[-1] if messages else None

    def chat_messages_for_summary(self, agent: Agent) -> list[Message]:
        """The group chat's messages (whoever ``agent`` is): of the chat being served, else the latest."""
        chat = current_chat.get()
        if chat is not None and any(peer is self for peer in chat.peers.values()):
            return chat.state.messages
        return self._groupchat.messages

    def register_reply(self, trigger: Any, reply_func: Any, *args: Any, **kwargs: Any) -> None:
        """As :meth:`ConversableAgent.register_reply`, with a warning: the manager runs its group chat
        itself, so a reply function registered on it is only consulted when the manager answers outside
        a group chat (AG2 consults it before every group chat run)."""
        warnings.warn(
            f"{function_name(reply_func)} is registered on the GroupChatManager {self.name!r}, which runs "
            "its group chat itself and does not call it there (AG2 calls it before running the group "
            "chat). Register it on the group's agents, or follow the chat with listeners=",
            stacklevel=2,
        )
        super().register_reply(trigger, reply_func, *args, **kwargs)

    def register_hook(self, hookable_method: str, hook: Callable[..., Any]) -> None:
        """As :meth:`ConversableAgent.register_hook`, with a warning: the group chat passes its messages
        to the members itself, so the manager's hooks do not see them (AG2 calls its
        ``process_message_before_send`` for every message it passes on)."""
        super().register_hook(hookable_method, hook)
        warnings.warn(
            f"a {hookable_method} hook is registered on the GroupChatManager {self.name!r}, whose group "
            "chat passes messages to the members itself: the hook does not see them. Register it on the "
            "group's agents",
            stacklevel=2,
        )

    def reset(self) -> None:
        """Forget all conversations, counters and usage, and the group chat's messages (as AG2)."""
        super().reset()
        self._groupchat.reset()

    def clear_history(
        self, recipient: Agent | None = None, nr_messages_to_preserve: int | None = None
    ) -> None:
        """Forget the conversation with ``recipient`` (with everyone, if None): with everyone, the
        latest group chat is forgotten too (:attr:`chat_messages` is empty); its ``groupchat.messages``
        are kept, as AG2 keeps them."""
        super().clear_history(recipient, nr_messages_to_preserve)
        chat = self._last_chat
        if recipient is None and not nr_messages_to_preserve and chat is not None and not chat.running:
            self._last_chat = None

    def run_chat(
        self,
        messages: list[Message] | None = None,
        sender: ConversableAgent | None = None,
        config: GroupChat | None = None,
    ) -> tuple[bool, None]:
        """Run the group chat from ``messages[-1]``, said by ``sender``, until it ends: AG2's reply
        function of a manager, callable directly. ``messages`` defaults to the manager's conversation
        with ``sender``; ``config`` must be the manager's group chat. Returns ``(True, None)``."""
        self._direct_chat(messages, sender, config).play()
        return True, None

    async def a_run_chat(
        self,
        messages: list[Message] | None = None,
        sender: ConversableAgent | None = None,
        config: GroupChat | None = None,
    ) -> tuple[bool, None]:
        """Async twin of :meth:`run_chat`."""
        await self._direct_chat(messages, sender, config).a_play()
        return True, None

    def _direct_chat(
        self, messages: list[Message] | None, sender: ConversableAgent | None, config: GroupChat | None
    ) -> Chat:
        """The group chat :meth:`run_chat` runs, its first message said."""
        if config is not None and config is not self._groupchat:
            raise ValueError(f"run_chat's config must be {self.name}'s own GroupChat (or None)")
        if not isinstance(sender, ConversableAgent):
            raise ValueError(f"run_chat needs the agent that said the last message as sender, not {sender!r}")
        if messages is None:
            messages = self.chat_messages[sender]
        if not messages:
            raise ValueError("run_chat needs the messages so far: the last one starts the group chat")
        chat = self._chat_started_by(sender, max_turns=None, clear_history=False, silent=self._silent)
        chat.append(self._first_message_from(sender, messages[-1]), sender)
        return chat

    def _chat_for_sent(
        self, sender: ConversableAgent, request_reply: bool | None, silent: bool | None
    ) -> Chat:
        """A message sent to the manager that asks for a reply (``request_reply``, else as the manager
        replies on receive: after a group chat with ``sender``) continues the group chat, as AG2's
        ``send`` does; one that does not is only kept in the two agents' conversation."""
        requested = request_reply if request_reply is not None else self.reply_at_receive.get(sender, False)
        if not requested:
            return super()._chat_for_sent(sender, False, silent)
        return self._chat_started_by(sender, max_turns=None, clear_history=False, silent=bool(silent))

    def _first_message_from(self, sender: ConversableAgent, message: Any) -> Any:
        """The first message, as the group logs it: under its sender's name, whatever name it had (as every
        member's reply is)."""
        return speaker_named(message, sender) if type(message) is dict else message

    def _chat_started_by(
        self,
        initiator: ConversableAgent,
        *,
        max_turns: int | None,
        clear_history: bool,
        silent: bool,
        chat_id: str | None = None,
        listeners: Sequence[Listener] = (),
        stop_when: Any = None,
    ) -> Chat:
        groupchat = self._groupchat
        groupchat.check_agents()
        _check_no_managers(groupchat.agents)
        participants: dict[ConversableAgent, Agent] = dict.fromkeys(groupchat.agents, self)
        if initiator not in participants:
            if initiator.name in groupchat.agent_names:
                raise ValueError(
                    f"{initiator.name!r} is not an agent of the group chat but has the name of one of them"
                )
            participants[initiator] = self
        for agent in participants:
            agent.reply_at_receive[self] = True
        self.reply_at_receive[initiator] = max_turns is None  # as AG2, after a chat of max_turns: False
        if self._last_chat is not None and self._last_chat.running:
            log: list[Message] = [] if clear_history else list(groupchat.messages)
        else:
            if clear_history:
                groupchat.reset()
            log = groupchat.messages
        groupchat.messages = log
        views = None if clear_history else {agent: agent._view(self) for agent in participants}
        conditions: list[StopCondition] = [ManagerTermination(self), max_round_condition(groupchat.max_round)]
        if max_turns == 0:
            conditions.append(max_turns_condition(0))
        rule = SpeakerSelection(groupchat, self)
        chat = Chat(
            participants,
            rule,
            shape="group",
            conditions=conditions,
            context_variables=initiator._context_variables.copy(),
            silent=silent or self._silent,
            listeners=listeners,
            chat_id=chat_id,
            views=views,
            log=log,
            stop_when=stop_when,
            reply_filter=self._member_reply if groupchat.enable_clear_history else speaker_named,
        )
        if groupchat.send_introductions and not log:
            introduction = to_logged(groupchat.introductions_msg(), self.name)
            for agent in groupchat.agents:
                if agent is initiator:  # gets it after its first message
                    rule.introduction = (chat.views[agent], introduction)
                else:
                    chat.views[agent].add(introduction)
        self._last_chat = chat
        return chat

    def _member_reply(self, reply: dict[str, Any], speaker: ConversableAgent) -> dict[str, Any]:
        reply = speaker_named(reply, speaker)
        if reply.get("content"):
            text = (
                content_str(reply["content"]) if not isinstance(reply["content"], str) else reply["content"]
            )
            if "CLEAR HISTORY" in text.upper():
                reply = {**reply, "content": text}
                reply["content"] = self.clear_agents_history(reply, self._groupchat)
        return reply

    def clear_agents_history(self, reply: dict[str, Any], groupchat: GroupChat) -> str:
        """Make the agents' models forget the conversation, as a reply containing ``clear history`` asks;
        return the reply's text without the command.

        ``clear history`` clears what every agent's model is sent; ``clear history <agent>`` only that
        agent's; a number after it (``clear history 3``, ``clear history <agent> 3``) keeps that many
        latest messages. A tool reply keeps at least the tool call it answers. The speaker selection's
        model forgets with them. Nothing said is lost: ``groupchat.messages``, ``chat_messages`` and the
        chat's history keep every message.
        """
        text = content_str(reply.get("content"))
        words = text.split()
        upper = [word.upper() for word in words]
        clear_at = next(
            (
                index
                for index in reversed(range(len(words) - 1))
                if upper[index : index + 2] == ["CLEAR", "HISTORY"]
            ),
            None,
        )
        if clear_at is None:
            return text
        keep: int | None = None
        target: ConversableAgent | None = None
        for word in words[clear_at + 2 : clear_at + 4]:
            if word.isdigit() or word[:-1].isdigit():
                keep = int(word if word.isdigit() else word[:-1])
            else:
                target = next((a for a in groupchat.agents if a.name in (word, word[:-1])), target)
        given = keep is not None
        if "tool_responses" in reply and not keep:
            keep = 1
        chat = current_chat.get()
        if chat is not None:
            for agent in [target] if target is not None else groupchat.agents:
                view = chat.views.get(agent)
                if view is not None and view._model_messages is not None:
                    kept = view.messages[-keep:] if keep else []
                    view._model_messages = flatten_for_model(kept)
            if target is None:
                rule = chat.rule
                if isinstance(rule, SpeakerSelection):
                    rule.auto.forget(keep or 0)
            if chat.listeners and chat.wants(Notice):
                who = "all agents" if target is None else target.name
                keeping = f", keeping the last {keep}" if keep else ""
                chat.emit(Notice(f"Clearing the history of {who}{keeping}."))
        skip = 2 + int(target is not None) + int(given)
        return " ".join(words[:clear_at] + words[clear_at + skip :])

    # ------------------------------------------------------------------------------------------------
    # resuming

    def resume(
        self,
        messages: list[Message] | str,
        remove_termination_string: str | Callable[[str], str] | None = None,
        silent: bool | None = False,
    ) -> tuple[ConversableAgent, Message]:
        """Load a saved group chat so that it can go on, as AG2 does.

        All messages but the last become the group chat's messages and the agents' views (earlier
        messages with the manager are forgotten). The last message and the agent that said it are
        returned; continue with ``agent.initiate_chat(manager, message=message, clear_history=False)``,
        which sends that message again as round 1 of the continued chat.

        Args:
            messages: the saved ``groupchat.messages`` (or a chat history), as a list or a JSON string.
            remove_termination_string: a string to remove from the last message, or a function of its
                text, so that the continued chat does not end at once.
            silent: do not print what was loaded.

        Returns:
            ``(agent, message)``: the last speaker (the manager, for a message without a name) and the
            last message.
        """
        loaded = self._resume_messages(messages)
        last = dict(loaded[-1])
        speakers = [self._resume_speaker(message) for message in loaded]
        for agent in self._groupchat.agents:
            agent.clear_history(self)
        self._groupchat.reset()
        for message, speaker in zip(loaded[:-1], speakers[:-1], strict=True):
            self._load(message, speaker)
        if remove_termination_string is not None:
            last["content"] = _remove_termination(remove_termination_string, last.get("content"))
        last["name"] = speakers[-1].name
        if self._is_termination_msg(last):
            warnings.warn(
                "the last message of the resumed group chat is a termination message for "
                f"{self.name}: the continued chat will end at once (see remove_termination_string)",
                stacklevel=2,
            )
        if not silent:
            ConsolePrinter()(
                Notice(f"Prepared group chat with {len(loaded)} messages, the last speaker is {last['name']}")
            )
        return speakers[-1], last

    async def a_resume(
        self,
        messages: list[Message] | str,
        remove_termination_string: str | Callable[[str], str] | None = None,
        silent: bool | None = False,
    ) -> tuple[ConversableAgent, Message]:
        """Async twin of :meth:`resume`."""
        return self.resume(messages, remove_termination_string, silent)

    def _resume_messages(self, messages: list[Message] | str) -> list[Message]:
        if isinstance(messages, str):
            messages = self.messages_from_string(messages)
        if not isinstance(messages, list) or not all(isinstance(message, dict) for message in messages):
            raise TypeError(
                f"messages must be a list of message dicts or a JSON string of one, not {messages!r:.80}"
            )
        if not messages:
            raise ValueError(
                "messages is empty: there is no group chat to resume; start one with initiate_chat"
            )
        return messages

    def _resume_speaker(self, message: Message) -> ConversableAgent:
        name = message.get("name")
        if name is None or name in (self.name, self._groupchat.admin_name):
            return self
        agent = self._groupchat.agent_by_name(name)
        if agent is None:
            raise ValueError(
                f"a message to resume was said by {name!r}, which is not an agent of this group chat "
                f"(agents: {self._groupchat.agent_names})"
            )
        return agent

    def _load(self, message: Message, speaker: ConversableAgent) -> None:
        logged = to_logged(message, speaker.name, parameter="message")
        self._groupchat.messages.append(logged)
        for agent in self._groupchat.agents:
            agent._view(self).add(as_own(logged) if agent is speaker else logged)

    @staticmethod
    def messages_to_string(messages: list[Message]) -> str:
        """The messages as a JSON string, for :meth:`resume`."""
        return json.dumps(messages)

    @staticmethod
    def messages_from_string(message_string: str) -> list[Message]:
        """The messages a JSON string from :meth:`messages_to_string` holds."""
        try:
            messages = json.loads(message_string)
        except json.JSONDecodeError as error:
            raise ValueError(f"messages is not valid JSON: {error}") from None
        if not isinstance(messages, list):
            raise TypeError(f"the JSON of messages must hold a list, not {type(messages).__name__}")
        return messages


def _remove_termination(remove: str | Callable[[str], str], content: Any) -> str:
    text = content_str(content)
    if isinstance(remove, str):
        return text.replace(remove, "")
    if callable(remove):
        return remove(text)
    raise TypeError(f"remove_termination_string must be a string or a callable, not {remove!r}")


def _passed_on(message: Message, receiver: str) -> Message:
    """A group chat message as the manager exchanged it with ``receiver``: received from it (``user``)
    or passed on to it (``assistant``)."""
    role = "user" if message.get("name") == receiver else "assistant"
    if message.get("role") in ("tool", "function") or message.get("role") == role:
        return message
    return {**message, "role": role}


def _flag(parameter: str, value: Any) -> bool:
    """``value``, a ``GroupChat`` parameter that must be a bool (a string such as ``"no"`` is truthy)."""
    if not isinstance(value, bool):
        raise ValueError(f"{parameter} must be a bool, not {value!r}")
    return value


def _check_no_managers(agents: list[ConversableAgent]) -> None:
    """Fail if a member of a group chat about to run is itself a group chat's manager."""
    for index, agent in enumerate(agents):
        if isinstance(agent, GroupChatManager):
            raise ValueError(
                f"agents[{index}] is the GroupChatManager {agent.name!r}: a group chat's manager cannot "
                "speak as a member of another group chat; to run a group inside a group, give a member a "
                "nested chat with that manager (register_nested_chats)"
            )
