"""Handoff graphs: the model, Mermaid and DOT text, Graphviz drawings, and ``parley graph``."""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    AfterWorkOption,
    AgentTarget,
    ContextExpression,
    ConversableAgent,
    DefaultPattern,
    OnCondition,
    OnContextCondition,
    RevertToUserTarget,
    StayTarget,
    SwarmAgent,
    UserProxyAgent,
    register_hand_off,
)
from parley.cli import main
from parley.graph import GraphvizNotFoundError, HandoffEdge, handoff_graph
from services import dot_path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

SUPPORT_MERMAID = """\
flowchart LR
    %% default after-work: TERMINATE
    triage["triage"]
    billing["billing"]
    technical_support["technical_support"]
    TERMINATE(["TERMINATE"])
    triage -->|"Billing questions: invoices, charges, payments and refunds."| billing
    triage -->|"Technical problems: errors, crashes, bugs and logins."| technical_support
    triage -.->|"default after-work"| TERMINATE
    billing -.->|"after-work"| TERMINATE
    technical_support -.->|"after-work"| TERMINATE
"""


def agent(name: str) -> SwarmAgent:
    return SwarmAgent(name, llm_config=False, human_input_mode="NEVER")


@pytest.fixture
def support_module(tmp_path, monkeypatch):
    """A module, in the current directory, holding the example's swarm as ``agents`` and a pattern."""
    (tmp_path / "support_graph.py").write_text(
        textwrap.dedent(
            """\
            from customer_support_swarm import build_swarm, scripted_models
            from parley import DefaultPattern, RevertToUserTarget

            triage, agents, _ = build_swarm(scripted_models(), with_user=False)
            pattern = DefaultPattern(triage, agents, group_after_work=RevertToUserTarget())
            not_agents = {"triage": triage}
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(EXAMPLES))
    yield "support_graph"
    sys.modules.pop("support_graph", None)
    sys.modules.pop("customer_support_swarm", None)


# the model -------------------------------------------------------------------------------------------


def test_conditions_after_work_and_the_default_after_work():
    a, b, c = agent("a"), agent("b"), agent("c")
    register_hand_off(a, [ON_CONDITION(b, "B's job."), ON_CONDITION(c, "C's job.", available="c_open")])
    register_hand_off(b, AFTER_WORK(a))

    graph = handoff_graph([a, b, c])

    assert graph.to_dict() == {
        "nodes": ["a", "b", "c", "TERMINATE"],
        "edges": [
            {"source": "a", "target": "b", "kind": "condition", "label": "B's job."},
            {"source": "a", "target": "c", "kind": "condition", "label": "C's job. [if c_open]"},
            {"source": "a", "target": "TERMINATE", "kind": "after_work", "label": "default after-work"},
            {"source": "b", "target": "a", "kind": "after_work", "label": "after-work"},
            {"source": "c", "target": "TERMINATE", "kind": "after_work", "label": "default after-work"},
        ],
        "default_after_work": "TERMINATE",
    }


def test_context_conditions_come_first_and_are_drawn_thick_and_bold():
    a, b, c = agent("a"), agent("b"), agent("c")
    a.handoffs.add_context_conditions(
        [
            OnContextCondition(target=b, condition="vip"),
            OnContextCondition(target=AgentTarget(c), condition=ContextExpression("${tries} > 2")),
        ]
    )
    register_hand_off(a, ON_CONDITION(c, "C's job."))

    graph = handoff_graph([a, b, c])

    assert [edge.to_dict() for edge in graph.edges if edge.source == "a"] == [
        {"source": "a", "target": "b", "kind": "context", "label": "when vip"},
        {"source": "a", "target": "c", "kind": "context", "label": "when ${tries} > 2"},
        {"source": "a", "target": "c", "kind": "condition", "label": "C's job."},
        {"source": "a", "target": "TERMINATE", "kind": "after_work", "label": "default after-work"},
    ]
    assert '    a ==>|"when vip"| b' in graph.to_mermaid().splitlines()
    assert '    "a" -> "b" [label="when vip", style=bold];' in graph.to_dot().splitlines()


def test_stay_revert_to_user_and_after_work_functions():
    a, b = agent("a"), agent("b")

    def route(last_speaker: Any, messages: Any, groupchat: Any) -> Any:
        return b

    register_hand_off(a, AFTER_WORK(route))
    b.handoffs.set_after_work(StayTarget())

    graph = handoff_graph([a, b], after_work=AfterWorkOption.REVERT_TO_USER)

    assert graph.nodes == ("a", "b", "route()")
    assert graph.edges == (
        HandoffEdge("a", "route()", "after_work", "after-work"),
        HandoffEdge("b", "b", "after_work", "after-work"),
    )
    assert graph.default_after_work == "REVERT_TO_USER"
    assert handoff_graph([agent("solo")], after_work="revert_to_user").edges == (
        HandoffEdge("solo", "REVERT_TO_USER", "after_work", "default after-work"),
    )


def test_a_pattern_gives_its_agents_user_and_group_after_work():
    a, b = agent("a"), agent("b")
    a.handoffs.add_llm_condition(OnCondition(b, "Over to b."))
    user = UserProxyAgent("customer", code_execution_config=False)

    graph = handoff_graph(DefaultPattern(a, [a, b], user_agent=user, group_after_work=RevertToUserTarget()))

    assert graph.nodes == ("a", "b", "customer")
    assert graph.agents == ("a", "b", "customer")
    assert graph.default_after_work == "REVERT_TO_USER"
    assert [edge.target for edge in graph.edges] == ["b", "customer", "customer"]


def test_an_after_work_agent_and_an_after_work_given_as_afterwork():
    a, b = agent("a"), agent("b")

    assert handoff_graph([a, b], after_work=AFTER_WORK(b)).edges[0] == HandoffEdge(
        "a", "b", "after_work", "default after-work"
    )
    assert handoff_graph([a, b], after_work="b").default_after_work == "b"


def test_bad_input_is_named():
    a, b = agent("a"), agent("b")
    register_hand_off(a, ON_CONDITION(ConversableAgent("outsider", llm_config=False), "Away."))

    with pytest.raises(ValueError, match="a's handoff names 'outsider', which is not an agent of the chat"):
        handoff_graph([a, b])
    with pytest.raises(ValueError, match="the chat's after-work names 'nobody'"):
        handoff_graph([b], after_work="nobody")
    with pytest.raises(TypeError, match="needs a non-empty list of agents or a DefaultPattern"):
        handoff_graph([])
    with pytest.raises(TypeError, match="must be ConversableAgents, not 'a'"):
        handoff_graph(["a"])  # type: ignore[list-item]


# text ------------------------------------------------------------------------------------------------


def test_mermaid_names_nodes_it_cannot_use_as_identifiers_by_number():
    odd, end = agent("the agent"), agent("end")
    register_hand_off(odd, ON_CONDITION(end, 'Say "done" & stop.'))

    assert handoff_graph([odd, end]).to_mermaid() == (
        "flowchart LR\n"
        "    %% default after-work: TERMINATE\n"
        '    node0["the agent"]\n'
        '    node1["end"]\n'
        '    TERMINATE(["TERMINATE"])\n'
        '    node0 -->|"Say #quot;done#quot; #amp; stop."| node1\n'
        '    node0 -.->|"default after-work"| TERMINATE\n'
        '    node1 -.->|"default after-work"| TERMINATE\n'
    )


def test_dot_draws_after_work_dashed_and_escapes_labels():
    a, b = agent("a"), agent("b")
    register_hand_off(a, ON_CONDITION(b, 'When "b" is needed.'))

    dot = handoff_graph([a, b]).to_dot()

    assert dot.startswith("digraph handoffs {\n    rankdir=LR;\n")
    assert '    "a" -> "b" [label="When \\"b\\" is needed."];\n' in dot
    assert '    "b" -> "TERMINATE" [label="default after-work", style=dashed];\n' in dot
    assert '    "TERMINATE" [shape=oval' in dot
    assert dot.endswith("}\n")


def test_rendering_without_graphviz_says_what_to_install(monkeypatch):
    monkeypatch.setenv("PATH", "")

    needs = r"needs Graphviz's dot program.*apt-get install graphviz"
    with pytest.raises(GraphvizNotFoundError, match=needs):
        handoff_graph([agent("a")]).render("svg")


# parley graph ------------------------------------------------------------------------------------------


def test_parley_graph_prints_the_customer_support_swarm_as_mermaid(support_module, capsysbinary):
    assert main(["graph", f"{support_module}:agents"]) == 0

    assert capsysbinary.readouterr().out.decode() == SUPPORT_MERMAID


def test_parley_graph_draws_the_customer_support_swarm_as_svg_with_graphviz(support_module, tmp_path):
    dot_path()
    output = tmp_path / "support.svg"

    assert main(["graph", f"{support_module}:agents", "--output", str(output)]) == 0

    svg = output.read_text()
    assert svg.startswith("<?xml") and "<svg" in svg
    for text in ("triage", "billing", "technical_support", "TERMINATE", "default after&#45;work"):
        assert f">{text}</text>" in svg
    assert "Billing questions: invoices," in svg  # a condition's label, wrapped
    assert svg.count('stroke-dasharray="5,2"') == 3  # the three after-work edges


def test_parley_graph_writes_dot_and_png(support_module, tmp_path, capsysbinary):
    dot_path()
    assert main(["graph", f"{support_module}:pattern", "--format", "dot"]) == 0
    dot = capsysbinary.readouterr().out.decode()
    assert '"triage" -> "REVERT_TO_USER" [label="default after-work", style=dashed];' in dot

    assert main(["graph", f"{support_module}:agents", "-o", str(tmp_path / "graph.png")]) == 0
    assert (tmp_path / "graph.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_parley_graph_takes_the_chats_after_work(support_module, capsysbinary):
    assert main(["graph", f"{support_module}:agents", "--after-work", "STAY"]) == 0

    out = capsysbinary.readouterr().out.decode()
    assert "    %% default after-work: STAY\n" in out
    assert '    triage -.->|"default after-work"| triage\n' in out


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("support_graph", "expected MODULE:ATTRIBUTE, such as my_swarm:agents, not 'support_graph'"),
        ("no_such_module:agents", "cannot import 'no_such_module' from the current directory or sys.path"),
        ("support_graph:missing", "support_graph has no attribute 'missing'"),
        ("support_graph:not_agents", "needs a non-empty list of agents or a DefaultPattern, not {'triage'"),
    ],
)
def test_parley_graph_names_what_is_wrong(support_module, capsys, target, message):
    assert main(["graph", target]) == 1

    assert message in capsys.readouterr().err


def test_parley_graph_without_graphviz_names_the_package(support_module, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)

    assert main(["graph", f"{support_module}:agents", "--format", "svg"]) == 1

    assert "Graphviz's dot program, which is not installed (Debian and Ubuntu: apt-get install graphviz" in (
        capsys.readouterr().err
    )
