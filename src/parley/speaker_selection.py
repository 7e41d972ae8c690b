"""How a group chat picks its next speaker: the engine's :class:`~parley.engine.SpeakerRule` for groups.

Each step first narrows the group to the *candidates*: the agents the transition graph allows after the
last speaker (everyone, if the last speaker is not a member), and, when the last message calls tools
and ``func_call_filter`` is on, only the agents that can execute them. No candidate ends the chat; a
single candidate speaks without asking anyone. Otherwise the method picks among the candidates:

- ``"round_robin"``: the next candidate after the last speaker, in the order of ``agents``;
- ``"random"``: ``random.choice`` (seed :mod:`random` for reproducible runs);
- ``"manual"``: the human chooses, through the manager's ``get_human_input``;
- ``"auto"``: the manager's model names the next speaker (see :class:`AutoSelection`);
- a callable ``(last_speaker, groupchat)``: returns an agent of the chat (it must be an allowed
  transition), a method name to use for this step, or ``None`` to end the chat.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from operator import is_
from typing import TYPE_CHECKING, Any, TypeVar

from parley.agent import Agent, ConversableAgent
from parley.budgets import NO_TOOLS
from parley.engine import run_sync
from parley.events import Notice
from parley.exceptions import UndefinedNextAgentError
from parley.messages import Message, View, content_str
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.engine import Chat
    from parley.groupchat import GroupChat, GroupChatManager

A = TypeVar("A", bound=Agent)

SPEAKER_SELECTION_METHODS = ("auto", "manual", "random", "round_robin")

MANUAL_ATTEMPTS = 3

DEFAULT_SELECT_SPEAKER_MESSAGE_TEMPLATE = (
    "You decide who speaks next in a conversation between several participants. "
    "The participants and what each of them does:\n"
    "{roles}\n\n"
    "Read the conversation that follows. Then choose the one participant from {agentlist} who should "
    "speak next, and answer with that name only."
)
DEFAULT_SELECT_SPEAKER_PROMPT_TEMPLATE = (
    "Who should speak next? Answer with exactly one name from {agentlist} and nothing else."
)
DEFAULT_SELECT_SPEAKER_AUTO_NONE_TEMPLATE = (
    "Your answer did not name any participant. Answer with exactly one of these names, spelled as "
    "written: {agentlist}. Give only the name, no explanation."
)
DEFAULT_SELECT_SPEAKER_AUTO_MULTIPLE_TEMPLATE = (
    "Your answer named more than one participant. Decide on the single participant who should speak "
    "next and answer with only that name, one of {agentlist}."
)


def check_method(method: Any, *, source: str = "speaker_selection_method") -> str:
    """The method's lower-case name, or a ValueError naming it and the valid ones."""
    if isinstance(method, str) and method.lower() in SPEAKER_SELECTION_METHODS:
        return method.lower()
    raise ValueError(
        f"{source} {method!r} is not a speaker selection method; use one of "
        f"{list(SPEAKER_SELECTION_METHODS)} (any case) or a callable (last_speaker, groupchat)"
    )


def agent_list(agents: Sequence[Agent]) -> str:
    """The ``{agentlist}`` placeholder: the names as a Python list, e.g. ``['a', 'b']``."""
    return str([agent.name for agent in agents])


def next_in_turn(agents: Sequence[Agent], last: Agent | None, candidates: Sequence[A]) -> A:
    """The first candidate after ``last`` in the order of ``agents`` (from the top if ``last`` is not one)."""
    start = _index(agents, last) + 1
    for offset in range(len(agents)):
        index = _index(candidates, agents[(start + offset) % len(agents)])
        if index >= 0:
            return candidates[index]
    raise UndefinedNextAgentError("none of the agents to choose from is an agent of the group")


def mentioned_agents(answer: str, candidates: Sequence[A]) -> list[A]:
    """The candidates an answer names, tolerantly.

    An answer that is just a name (give or take quotes, emphasis and punctuation) names that agent. Else
    the candidates mentioned as whole words count, first matching case exactly, then ignoring case; an
    underscore in a name also matches a space or ``\\_``, and a space matches an underscore. A mention
    inside a longer candidate's mention (``writer`` in ``senior writer``) does not count.
    """
    texts = (answer.strip(), answer.strip().strip("*_`'\".,:;!?()[]{}<> \n\t"))
    for fold in (False, True):
        for text in texts:
            for agent in candidates:
                if any(_same(text, variant, fold) for variant in _variants(agent.name)):
                    return [agent]
    for flags in (0, re.IGNORECASE):
        found = _mentions(answer, candidates, flags)
        if found:
            return found
    return []


def _same(text: str, name: str, fold: bool) -> bool:
    return text.casefold() == name.casefold() if fold else text == name


def _variants(name: str) -> list[str]:
    variants = [name, name.replace("_", " "), name.replace("_", "\\_"), name.replace(" ", "_")]
    return list(dict.fromkeys(variants))


def _mentions(answer: str, candidates: Sequence[A], flags: int) -> list[A]:
    spans: list[tuple[int, int, int]] = []
    for number, agent in enumerate(candidates):
        alternatives = "|".join(re.escape(variant) for variant in _variants(agent.name))
        pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", flags)
        spans.extend((match.start(), match.end(), number) for match in pattern.finditer(answer))
    kept = {
        number
        for start, end, number in spans
        if not any(
            other != number and s <= start and end <= e and (s, e) != (start, end) for s, e, other in spans
        )
    }
    return [agent for number, agent in enumerate(candidates) if number in kept]


def _index(agents: Sequence[Agent], agent: Agent | None) -> int:
    for index, member in enumerate(agents):
        if member is agent:
            return index
    return -1


def _is_member(agents: Sequence[Agent], agent: Agent | None) -> bool:
    return _index(agents, agent) >= 0


def _called_functions(message: Message) -> set[str]:
    names = {call.get("function", {}).get("name") for call in message.get("tool_calls") or ()}
    function_call = message.get("function_call")
    if isinstance(function_call, dict):
        names.add(function_call.get("name"))
    names.discard(None)
    return names


class SpeakerSelection:
    """The rule that picks a group chat's next speaker (see the module docstring)."""

    def __init__(self, groupchat: GroupChat, manager: GroupChatManager) -> None:
        self.groupchat = groupchat
        self.manager = manager
        self._auto: AutoSelection | None = None
        self._why = ""
        self._allowed: dict[ConversableAgent, list[ConversableAgent]] = {}
        self._method: Any = None
        self._method_name = ""
        self._round_robin = False
        self._seen: GroupChat | None = None
        self.introduction: tuple[View, Message] | None = None
        """``send_introductions``' text, for the view of an initiator in the group, which gets it after
        its first message (as AG2's does), when the next speaker is first chosen."""

    def _group_seen_by(self, chat: Chat) -> GroupChat:
        """The group chat a selection function of this chat is given: the shared ``GroupChat``, read and
        written through, but whose ``messages`` stay this chat's while other chats over it start."""
        if self._seen is None:
            self._seen = self.groupchat.as_seen_by(chat.state.messages)
        return self._seen

    @property
    def auto(self) -> AutoSelection:
        """The ``"auto"`` method's selection (made when first needed)."""
        if self._auto is None:
            self._auto = AutoSelection(self.groupchat, self.manager)
        return self._auto

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        if self.introduction is not None:
            self._introduce()
        method = self.groupchat.speaker_selection_method
        if method is not self._method and not callable(method):
            self._method, self._method_name = method, check_method(method)
            self._round_robin = self._method_name == "round_robin"
        if self._round_robin and method is self._method:
            choice = self._next_in_turn(chat)
            if choice is not None:
                self._why = "round robin: next in turn"
                if chat.listeners:
                    chat.announce_speaker(choice, self._why)
                return choice
        return run_sync(self._next(chat, sync=True))

    def _next_in_turn(self, chat: Chat) -> ConversableAgent | None:
        """Round robin's choice when every agent may speak after the last speaker and the last message
        calls no function (the common case, decided without building the candidates); ``None`` for any
        other case, which :meth:`_choose` decides."""
        groupchat = self.groupchat
        agents = groupchat.agents
        count = len(agents)
        if count < 2:
            return None
        messages = chat.state.messages
        if messages and groupchat.func_call_filter:
            message = messages[-1]
            if "tool_calls" in message or "function_call" in message:
                return None
        last = chat.last_speaker
        if last is None:
            return agents[0]
        try:
            index = agents.index(last)
        except ValueError:
            return agents[0]
        if agents[index] is not last:
            return None
        targets = groupchat.allowed_speaker_transitions_dict.get(last)
        if targets is None or len(targets) != count or not all(map(is_, targets, agents)):
            allowed = self._allowed.get(last)
            if allowed is None:
                allowed = self._allowed_list(last)
            if len(allowed) != count:
                return None
        return agents[(index + 1) % count]

    async def a_next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        if self.introduction is not None:
            self._introduce()
        return await self._next(chat, sync=False)

    def _introduce(self) -> None:
        assert self.introduction is not None
        view, introduction = self.introduction
        self.introduction = None
        view.add(introduction)

    async def _next(self, chat: Chat, *, sync: bool) -> ConversableAgent | StopReason:
        choice = await self._choose(chat, sync)
        if isinstance(choice, ConversableAgent):
            if chat.journal is not None:
                method = self.groupchat.speaker_selection_method
                if not (isinstance(method, str) and method.lower() == "round_robin"):
                    chat.record_turn(choice)
            chat.announce_speaker(choice, self._why)
        return choice

    async def _choose(self, chat: Chat, sync: bool) -> ConversableAgent | StopReason:
        groupchat = self.groupchat
        last = chat.last_speaker
        method = groupchat.speaker_selection_method
        if callable(method):
            picked = method(last, self._group_seen_by(chat))
            if picked is None:
                return StopReason(
                    StopKind.NO_NEXT_SPEAKER,
                    f"The speaker selection function {_function_name(method)} returned None after "
                    f"{_name(last)} spoke",
                    _name(last),
                )
            if isinstance(picked, Agent):
                self._why = f"the speaker selection function {_function_name(method)} chose it"
                return self._checked_pick(picked, last, method)
            if not isinstance(picked, str):
                raise ValueError(  # AG2 raises ValueError here, which its users catch
                    f"speaker_selection_method {_function_name(method)} returned {picked!r} "
                    f"({type(picked).__name__}); it must return an agent of the group chat, a method name "
                    f"from {list(SPEAKER_SELECTION_METHODS)}, or None to end the chat"
                )
            if picked.lower() not in SPEAKER_SELECTION_METHODS and picked in groupchat.agent_names:
                raise ValueError(
                    f"speaker_selection_method {_function_name(method)} returned {picked!r}, the name of an "
                    f"agent: return the agent itself (groupchat.agent_by_name({picked!r})), a method name "
                    f"from {list(SPEAKER_SELECTION_METHODS)}, or None to end the chat"
                )
            name = check_method(picked, source=f"speaker_selection_method {_function_name(method)} returned")
        elif method is self._method:
            name = self._method_name
        else:
            name = check_method(method)
            self._method, self._method_name = method, name
            self._round_robin = name == "round_robin"
        if len(groupchat.agents) < 2:
            raise ValueError(
                f"GroupChat is underpopulated with {len(groupchat.agents)} agents: speaker_selection_method "
                f"{name!r} needs two or more (a callable can choose in a group of one)"
            )
        candidates = self.candidates(chat)
        if isinstance(candidates, StopReason):
            return candidates
        if len(candidates) == 1:
            self._why = "the only agent allowed to speak next"
            return candidates[0]
        if name == "round_robin":
            self._why = "round robin: next in turn"
            return next_in_turn(groupchat.agents, last, candidates)
        if name == "random":
            import random  # imported on use: few group chats choose at random

            self._why = "chosen at random"
            return random.choice(candidates)
        if name == "manual":
            self._why = "chosen by the human"
            return await self._manual(chat, candidates, sync)
        self._why = f"the model of {self.manager.name} named it"
        return await self.auto.select(chat, candidates, sync)

    def _allowed_after(self, last: ConversableAgent) -> list[ConversableAgent]:
        """The agents the transition graph allows after ``last``, in the order of the group."""
        return list(self._allowed_list(last))

    def _allowed_list(self, last: ConversableAgent) -> list[ConversableAgent]:
        allowed = self._allowed.get(last)
        if allowed is None:
            targets = set(map(id, self.groupchat.allowed_speaker_transitions_dict.get(last) or ()))
            allowed = [agent for agent in self.groupchat.agents if id(agent) in targets]
            self._allowed[last] = allowed
        return allowed

    def candidates(self, chat: Chat) -> list[ConversableAgent] | StopReason:
        """The agents that may speak next, or why there are none."""
        groupchat = self.groupchat
        agents = groupchat.agents
        last = chat.last_speaker
        if _is_member(agents, last):
            assert last is not None
            candidates = self._allowed_after(last)
            if not candidates:
                return StopReason(
                    StopKind.NO_NEXT_SPEAKER,
                    f"The speaker transitions allow no one to speak after {last.name}",
                    last.name,
                )
        else:
            candidates = list(agents)
        messages = chat.state.messages
        if groupchat.func_call_filter and messages:
            functions = _called_functions(messages[-1])
            if functions:
                return self._executors(candidates, functions, last)
        return candidates

    def _executors(
        self, candidates: list[ConversableAgent], functions: set[str], last: Agent | None
    ) -> list[ConversableAgent] | StopReason:
        agents = self.groupchat.agents
        able = [agent for agent in agents if functions <= agent.function_map.keys()]
        able = able or [agent for agent in agents if agent.function_map]
        if not able:
            raise ValueError(
                f"no agent of the group chat can execute {', '.join(sorted(functions))}: register the "
                "function for execution with one of them (func_call_filter=True)"
            )
        executors = [agent for agent in candidates if any(agent is other for other in able)]
        if not executors:
            return StopReason(
                StopKind.NO_NEXT_SPEAKER,
                f"The speaker transitions allow none of the agents that can execute "
                f"{', '.join(sorted(functions))} to speak after {_name(last)}",
                _name(last),
            )
        return executors

    def _checked_pick(self, picked: Agent, last: Agent | None, method: Any) -> ConversableAgent:
        groupchat = self.groupchat
        if not _is_member(groupchat.agents, picked):
            raise ValueError(
                f"speaker_selection_method {_function_name(method)} returned {picked.name!r}, which is not "
                f"an agent of this group chat (agents: {groupchat.agent_names})"
            )
        # a graph the group was given binds the function; allow_repeat_speaker does not (as in AG2)
        if groupchat.allowed_or_disallowed_speaker_transitions and _is_member(groupchat.agents, last):
            assert last is not None
            allowed = groupchat.allowed_speaker_transitions_dict.get(last) or []
            if not any(picked is target for target in allowed):
                raise ValueError(
                    f"speaker_selection_method {_function_name(method)} chose {picked.name!r} to speak after "
                    f"{last.name!r}, but the speaker transitions do not allow {last.name} -> {picked.name}"
                )
        assert isinstance(picked, ConversableAgent)
        return picked

    async def _manual(
        self, chat: Chat, candidates: list[ConversableAgent], sync: bool
    ) -> ConversableAgent | StopReason:
        manager = self.manager
        groupchat = self.groupchat
        if type(groupchat).manual_select_speaker is not _base_manual_select_speaker():
            picked = groupchat.manual_select_speaker(candidates)
            if picked is None:
                return next_in_turn(groupchat.agents, chat.last_speaker, candidates)
            return self._checked_pick(picked, chat.last_speaker, groupchat.manual_select_speaker)
        listing = "\n".join(f"{number}: {agent.name}" for number, agent in enumerate(candidates, 1))
        prompt = (
            f"Choose the next speaker:\n{listing}\n"
            "Enter a number or a name (press enter or type 'q' to let the next in turn speak, "
            "or type 'exit' to end the conversation): "
        )
        problem = ""
        fallback = next_in_turn(self.groupchat.agents, chat.last_speaker, candidates)
        for _ in range(MANUAL_ATTEMPTS):
            answer = await manager._ask_human(problem + prompt, sync, chat)
            text = answer.strip()
            if text.lower() == "exit":
                return StopReason(
                    StopKind.HUMAN_EXIT,
                    "The human choosing the next speaker typed 'exit'",
                    manager.name,
                )
            if text in ("", "q"):
                _notice(chat, f"No speaker chosen: {fallback.name} is next in turn.")
                return fallback
            if text.isdigit() and 1 <= int(text) <= len(candidates):
                return candidates[int(text) - 1]
            named = [agent for agent in candidates if agent.name == text]
            if named:
                return named[0]
            problem = f"{answer!r} is not one of the choices: enter a number from 1 to {len(candidates)}.\n"
        _notice(chat, f"No valid choice in {MANUAL_ATTEMPTS} tries: {fallback.name} is next in turn.")
        return fallback


class AutoSelection:
    """``"auto"``: the manager's model names the next speaker.

    The request the model receives, in order:

    1. a ``system`` message, ``select_speaker_message_template`` with ``{roles}`` (one ``name:
       description`` line per candidate) and ``{agentlist}`` (the candidates' names) filled in;
    2. the conversation so far, every message as a ``user`` message named after its speaker (tool calls
       and tool results are written out as text, so the request needs no tool definitions);
    3. ``select_speaker_prompt_template`` with ``{agentlist}``, as a ``role_for_select_speaker_messages``
       message (left out when the template is ``None``).

    If the answer does not name exactly one candidate (see :func:`mentioned_agents`), the answer and a
    reminder (``select_speaker_auto_none_template`` or ``select_speaker_auto_multiple_template``) are
    added and the model is asked again, up to ``max_retries_for_selecting_speaker`` times. Then the next
    candidate in turn speaks, and a :class:`~parley.events.Notice` says so.

    The model is ``select_speaker_auto_llm_config``'s if the group chat has one, else the manager's.
    ``select_speaker_transform_messages`` (an object with ``apply_transforms(messages)``, as AG2's
    ``TransformMessages``) rewrites the conversation part of each request; with
    ``select_speaker_auto_verbose`` every answer and its outcome are told to the chat's listeners.
    """

    def __init__(self, groupchat: GroupChat, manager: GroupChatManager) -> None:
        self.groupchat = groupchat
        self.manager = manager
        self.transcript: list[Message] = []
        self._sources: list[Message] = []
        """The log's messages the transcript's were made from, one for one."""
        self._read = 0

    def forget(self, keep: int = 0) -> None:
        """Forget the conversation read so far, but its ``keep`` latest messages (a cleared history)."""
        self.transcript = self.transcript[-keep:] if keep else []
        self._sources = self._sources[-keep:] if keep else []

    def conversation(self, log: list[Message]) -> list[Message]:
        """The conversation as the model reads it, brought up to date with the new messages and with the
        messages replaced in the log (a message redacted in ``groupchat.messages``, say)."""
        if len(log) < self._read:
            self.transcript, self._sources, self._read = [], [], 0
        start = self._read - len(self._sources)
        for index, source in enumerate(self._sources):
            message = log[start + index]
            if message is not source:
                self._sources[index] = message
                self.transcript[index] = _as_text(message)
        new = log[self._read :]
        self._sources.extend(new)
        self.transcript.extend(map(_as_text, new))
        self._read = len(log)
        return self.transcript

    async def select(
        self, chat: Chat, candidates: list[ConversableAgent], sync: bool, *, prompt: str | None = None
    ) -> ConversableAgent | StopReason:
        """Ask the model which candidate speaks next; ``prompt`` replaces the closing instruction."""
        groupchat, manager = self.groupchat, self.manager
        client = groupchat.selector_client() or manager.client
        if client is None:
            raise ValueError(
                f"speaker_selection_method 'auto' needs a model to choose the next speaker, but the "
                f"GroupChatManager {manager.name!r} has none: give it an llm_config"
            )
        names = agent_list(candidates)
        role = groupchat.role_for_select_speaker_messages
        request: list[Message] = [{"role": "system", "content": groupchat.select_speaker_msg(candidates)}]
        conversation = self.conversation(chat.messages)
        transforms = groupchat.select_speaker_transform_messages
        if transforms is not None:
            conversation = transforms.apply_transforms([dict(message) for message in conversation])
        request.extend(conversation)
        if prompt is None:
            prompt = groupchat.select_speaker_prompt(candidates)
        if prompt is not None:
            request.append({"role": role, "content": prompt})
        attempts = 1 + groupchat.max_retries_for_selecting_speaker
        answer = ""
        for attempt in range(1, attempts + 1):
            params: dict[str, Any] = {}
            if chat.budgets is not None:
                # a retry's request has messages the log has not: its bound is measured afresh
                caller = manager.name if attempt == 1 else f"{manager.name} (selection retry {attempt})"
                allowed = chat.budgets.before_model_call(
                    caller, client, request, NO_TOOLS, chat.state.messages
                )
                if isinstance(allowed, StopReason):
                    return allowed
                params = allowed
            response = client.create(request, **params) if sync else await client.a_create(request, **params)
            manager.usage_summary.add(response)
            chat.add_usage(response, manager.name)
            answer = content_str(response.message.get("content"))
            mentioned = mentioned_agents(answer, candidates)
            if groupchat.select_speaker_auto_verbose:
                outcome = (
                    f"selected {mentioned[0].name}"
                    if len(mentioned) == 1
                    else f"named {len(mentioned)} of the candidates"
                )
                _notice(chat, f"Speaker selection, attempt {attempt}: {answer!r} ({outcome})")
            if len(mentioned) == 1:
                return mentioned[0]
            if attempt < attempts:
                template = (
                    groupchat.select_speaker_auto_multiple_template
                    if mentioned
                    else groupchat.select_speaker_auto_none_template
                )
                request.append({"role": "assistant", "content": answer})
                request.append({"role": role, "content": template.format(agentlist=names)})
        fallback = next_in_turn(groupchat.agents, chat.last_speaker, candidates)
        _notice(
            chat,
            f"SPEAKER SELECTION FAILED: the model did not name exactly one of {names} in {attempts} "
            f"attempt(s) (last answer: {answer!r:.80}); {fallback.name} is next in turn.",
        )
        return fallback


def _as_text(message: Message) -> Message:
    calls = message.get("tool_calls") or ()
    if message.get("role") == "user" and not calls:
        return message
    text = content_str(message.get("content"))
    for call in calls:
        function = call.get("function", {})
        text += f"\n[calls {function.get('name')}({function.get('arguments', '')})]"
    return {"role": "user", "name": message.get("name"), "content": text.strip()}


def _base_manual_select_speaker() -> Any:
    from parley.groupchat import GroupChat

    return GroupChat.manual_select_speaker


def _notice(chat: Chat, text: str) -> None:
    if chat.listeners and chat.wants(Notice):
        chat.emit(Notice(text))


def _name(agent: Agent | None) -> str | None:
    return None if agent is None else agent.name


def _function_name(function: Any) -> str:
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or repr(function)
