"""The handoff graph of a swarm or group pattern: who can hand the conversation to whom, and how.

Nodes are the agents (and the user agent, when there is one), plus the places a handoff can lead
that are not agents: ``TERMINATE``, ``REVERT_TO_USER`` without a user agent, and after-work functions
(``name()``), whose choice is known only when they run. Edges are an agent's context conditions
(``OnContextCondition``, ``kind="context"``, labelled ``when`` and the variable or expression), its
``ON_CONDITION``\\ s (``kind="condition"``, labelled with the condition), its after-work
(``kind="after_work"``), and, for an agent without an after-work of its own, the chat's default
after-work. Handoffs that tools make by returning an agent are decided at run time and are not in the
graph.

:func:`handoff_graph` builds it; :meth:`HandoffGraph.to_mermaid` and :meth:`HandoffGraph.to_dot` write
it as text, :meth:`HandoffGraph.render` as SVG or PNG through Graphviz.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from parley.group.targets import (
    AfterWorkOption,
    AgentNameTarget,
    AgentTarget,
    FunctionTarget,
    RevertToUserTarget,
    StayTarget,
    TerminateTarget,
    TransitionTarget,
    as_target,
)

if TYPE_CHECKING:
    from parley.agent import ConversableAgent
    from parley.group.patterns import DefaultPattern

EdgeKind = Literal["context", "condition", "after_work"]

TERMINATE = "TERMINATE"
REVERT_TO_USER = "REVERT_TO_USER"
AFTER_WORK_LABEL = "after-work"
DEFAULT_AFTER_WORK_LABEL = "default after-work"


@dataclass(frozen=True, slots=True)
class HandoffEdge:
    """One way the conversation can pass from ``source`` to ``target``."""

    source: str
    target: str
    kind: EdgeKind
    label: str

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "target": self.target, "kind": self.kind, "label": self.label}


@dataclass(frozen=True, slots=True)
class HandoffGraph:
    """The handoff graph of a chat (see the module's docstring)."""

    nodes: tuple[str, ...]
    edges: tuple[HandoffEdge, ...]
    default_after_work: str
    agents: tuple[str, ...]
    """The nodes that are agents (the others are ``TERMINATE``, ``REVERT_TO_USER`` or functions)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"nodes": [...], "edges": [{"source", "target", "kind", "label"}], "default_after_work"}``."""
        return {
            "nodes": list(self.nodes),
            "edges": [edge.to_dict() for edge in self.edges],
            "default_after_work": self.default_after_work,
        }

    def to_mermaid(self) -> str:
        """The graph as a Mermaid flowchart: conditions as solid arrows, context conditions thick,
        after-work dashed."""
        ids = _identifiers(self.nodes)
        lines = ["flowchart LR", f"    %% default after-work: {self.default_after_work}"]
        for node in self.nodes:
            text = _mermaid_text(node)
            if node in self.agents:
                lines.append(f'    {ids[node]}["{text}"]')
            elif node.endswith("()"):
                lines.append(f'    {ids[node]}{{{{"{text}"}}}}')
            else:
                lines.append(f'    {ids[node]}(["{text}"])')
        for edge in self.edges:
            arrow = _MERMAID_ARROWS[edge.kind]
            lines.append(f'    {ids[edge.source]} {arrow}|"{_mermaid_text(edge.label)}"| {ids[edge.target]}')
        return "\n".join(lines) + "\n"

    def to_dot(self) -> str:
        """The graph in Graphviz's DOT language: conditions as solid arrows, context conditions bold,
        after-work dashed."""
        lines = [
            "digraph handoffs {",
            "    rankdir=LR;",
            f"    label={_dot_string('default after-work: ' + self.default_after_work)};",
            '    labelloc=b; fontname="DejaVu Sans"; fontsize=11;',
            '    node [shape=box, style="rounded,filled", fillcolor="#eef2ff", color="#4f46e5", '
            'fontname="DejaVu Sans"];',
            '    edge [fontname="DejaVu Sans", fontsize=10, color="#334155"];',
        ]
        for node in self.nodes:
            if node in self.agents:
                lines.append(f"    {_dot_string(node)};")
            else:
                shape = "hexagon" if node.endswith("()") else "oval"
                lines.append(
                    f'    {_dot_string(node)} [shape={shape}, fillcolor="#f1f5f9", color="#64748b"];'
                )
        for edge in self.edges:
            style = _DOT_STYLES[edge.kind]
            label = _dot_string(_wrap(edge.label, 28))
            lines.append(
                f"    {_dot_string(edge.source)} -> {_dot_string(edge.target)} [label={label}{style}];"
            )
        lines.append("}")
        return "\n".join(lines) + "\n"

    def render(self, format: Literal["svg", "png"] = "svg") -> bytes:
        """The graph drawn by Graphviz's ``dot`` program, as SVG or PNG.

        Raises:
            GraphvizNotFoundError: ``dot`` is not installed.
            RuntimeError: ``dot`` failed.
        """
        if format not in ("svg", "png"):
            raise ValueError(f"Graphviz renders the graph as svg or png, not {format!r}")
        dot = shutil.which("dot")
        if dot is None:
            raise GraphvizNotFoundError(
                f"drawing the graph as {format} needs Graphviz's dot program, which is not installed "
                "(Debian and Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"
            )
        done = subprocess.run(
            [dot, f"-T{format}"], input=self.to_dot().encode(), capture_output=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"dot failed ({done.returncode}): {done.stderr.decode(errors='replace')}")
        return done.stdout


class GraphvizNotFoundError(RuntimeError):
    """Graphviz's ``dot`` program, which draws graphs as SVG or PNG, is not installed."""


def handoff_graph(
    agents: Sequence[ConversableAgent] | DefaultPattern,
    after_work: Any = None,
    *,
    user_agent: ConversableAgent | None = None,
) -> HandoffGraph:
    """The handoff graph of a swarm's agents, or of a :class:`~parley.DefaultPattern`.

    Args:
        agents: the chat's agents, in order, or a pattern (its agents, user agent and
            ``group_after_work``).
        after_work: the chat's default after-work, as ``initiate_swarm_chat`` takes it (an
            ``AFTER_WORK``, an option or its name, an agent, a target or a function); by default the
            pattern's ``group_after_work``, or ``TERMINATE``.
        user_agent: the agent ``REVERT_TO_USER`` hands to (a pattern's by default).

    Raises:
        TypeError: ``agents`` is neither a pattern nor a list of agents, or ``after_work`` is no
            after-work.
        ValueError: a handoff or after-work names an agent that is not in the chat.
    """
    from parley.group.patterns import DefaultPattern  # a pattern's run imports this module

    if isinstance(agents, DefaultPattern):
        pattern = agents
        agents = pattern.agents
        user_agent = user_agent if user_agent is not None else pattern.user_agent
        if after_work is None:
            after_work = pattern.group_after_work
    members = _checked_agents(agents)
    builder = _Builder(members, user_agent)
    default = _as_after_work(after_work)
    for agent in members:
        handoffs = agent.handoffs
        for context_condition in handoffs.context_conditions:
            target = builder.node_for(context_condition.target, agent, f"{agent.name}'s context handoff")
            builder.edge(
                agent.name,
                target,
                "context",
                _context_label(context_condition.condition) + _availability(context_condition.available),
            )
        for condition in handoffs.llm_conditions:
            target = builder.node_for(condition.target, agent, f"{agent.name}'s handoff")
            builder.edge(
                agent.name, target, "condition", condition.prompt + _availability(condition.available)
            )
        if handoffs.after_work is not None:
            builder.edge(
                agent.name,
                builder.node_for(handoffs.after_work, agent, f"{agent.name}'s after-work"),
                "after_work",
                AFTER_WORK_LABEL,
            )
        else:
            target = builder.node_for(default, agent, "the chat's after-work")
            builder.edge(agent.name, target, "after_work", DEFAULT_AFTER_WORK_LABEL)
    return HandoffGraph(
        nodes=tuple(builder.nodes),
        edges=tuple(builder.edges),
        default_after_work=_describe(default),
        agents=tuple(builder.agent_names),
    )


class _Builder:
    def __init__(self, agents: list[ConversableAgent], user_agent: ConversableAgent | None) -> None:
        self.agent_names = [agent.name for agent in agents]
        if user_agent is not None and user_agent.name not in self.agent_names:
            self.agent_names.append(user_agent.name)
        self.user_name = user_agent.name if user_agent is not None else None
        self.nodes = list(self.agent_names)
        self.edges: list[HandoffEdge] = []

    def node_for(self, target: TransitionTarget, speaker: ConversableAgent, what: str) -> str:
        """The node ``target`` (the ``what`` of ``speaker``, for errors) leads to from ``speaker``."""
        if isinstance(target, AgentTarget | AgentNameTarget):
            name = target.agent_name
            if name not in self.agent_names:
                option = next((o for o in AfterWorkOption if o.value == name.upper()), None)
                if option is None:
                    raise ValueError(
                        f"{what} names {name!r}, which is not an agent of the chat "
                        f"({', '.join(self.agent_names)})"
                    )
                return self.node_for(as_target(option, what=what), speaker, what)
            return name
        if isinstance(target, TerminateTarget):
            return self._add(TERMINATE)
        if isinstance(target, RevertToUserTarget):
            return self._add(self.user_name or REVERT_TO_USER)
        if isinstance(target, StayTarget):
            return speaker.name
        if isinstance(target, FunctionTarget):
            return self._add(f"{target.display_name()}()")
        return self._add(target.display_name())

    def edge(self, source: str, target: str, kind: EdgeKind, label: str) -> None:
        self.edges.append(HandoffEdge(source, target, kind, label))

    def _add(self, node: str) -> str:
        if node not in self.nodes:
            self.nodes.append(node)
        return node


def _checked_agents(agents: Any) -> list[ConversableAgent]:
    from parley.agent import ConversableAgent

    if not isinstance(agents, list | tuple) or not agents:
        raise TypeError(
            f"a handoff graph needs a non-empty list of agents or a DefaultPattern, not {agents!r:.80}"
        )
    for agent in agents:
        if not isinstance(agent, ConversableAgent):
            raise TypeError(f"a handoff graph's agents must be ConversableAgents, not {agent!r:.80}")
    return list(agents)


def _as_after_work(after_work: Any) -> TransitionTarget:
    """A chat's after-work, in any form ``initiate_swarm_chat`` takes, as a target."""
    if after_work is None:
        return TerminateTarget()
    target = getattr(after_work, "target", None)  # an AFTER_WORK
    if isinstance(target, TransitionTarget):
        return target
    if isinstance(after_work, str):
        option = next((o for o in AfterWorkOption if o.value == after_work.upper()), None)
        if option is not None:
            return as_target(option, what="after_work")
    return as_target(after_work, what="after_work")


def _describe(target: TransitionTarget) -> str:
    """How a chat's default after-work is named: an option, an agent's name, or ``function()``."""
    if isinstance(target, FunctionTarget):
        return f"{target.display_name()}()"
    return target.display_name()


def _context_label(condition: Any) -> str:
    """``when`` and a context condition's variable or expression."""
    if isinstance(condition, str):
        return f"when {condition}"
    expression = getattr(condition, "expression", None)
    return f"when {expression if isinstance(expression, str) else type(condition).__name__}"


def _availability(available: Any) -> str:
    if available is None:
        return ""
    if isinstance(available, str):
        return f" [if {available}]"
    return f" [if {getattr(available, '__name__', 'a function')}()]"


_MERMAID_ARROWS: dict[str, str] = {"context": "==>", "condition": "-->", "after_work": "-.->"}
_DOT_STYLES: dict[str, str] = {"context": ", style=bold", "condition": "", "after_work": ", style=dashed"}

_MERMAID_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MERMAID_RESERVED = frozenset(
    {"end", "graph", "flowchart", "subgraph", "style", "class", "classDef", "click"}
)


def _identifiers(nodes: Sequence[str]) -> dict[str, str]:
    """A Mermaid identifier for each node: its name when that is one, else ``node<N>``."""
    ids: dict[str, str] = {}
    for index, node in enumerate(nodes):
        plain = _MERMAID_ID.match(node) and node not in _MERMAID_RESERVED and node not in ids.values()
        ids[node] = node if plain else f"node{index}"
    return ids


def _mermaid_text(text: str) -> str:
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("\n", " ")


def _dot_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _wrap(text: str, width: int) -> str:
    """``text`` broken into lines of about ``width`` characters, at spaces."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)
