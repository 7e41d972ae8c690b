"""``parley view``: the server, and the trace page itself in headless Chromium."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from parley import (
    AFTER_WORK,
    ON_CONDITION,
    ConversableAgent,
    FunctionModel,
    ModelRequest,
    ScriptedModel,
    SwarmAgent,
    SwarmResult,
    initiate_swarm_chat,
    tool_call,
)
from parley.cli import main
from parley.models import ModelResponse, Usage
from parley.viewer import TraceServer
from services import chromium_path
from trace_fixtures import START, support_swarm, two_agent_chat, write_trace

# a small DOM, to read what the page built ----------------------------------------------------------------


class Node:
    def __init__(self, tag: str, attributes: dict[str, str]) -> None:
        self.tag = tag
        self.attributes = attributes
        self.children: list[Node | str] = []

    @property
    def text(self) -> str:
        return "".join(child if isinstance(child, str) else child.text for child in self.children)

    @property
    def classes(self) -> set[str]:
        return set(self.attributes.get("class", "").split())

    def find_all(self, tag: str | None = None, **attributes: str) -> list[Node]:
        found = []
        for child in self.children:
            if isinstance(child, Node):
                wanted = tag is None or child.tag == tag
                if wanted and all(
                    value in (child.classes if name == "class_" else {child.attributes.get(name)})
                    for name, value in attributes.items()
                ):
                    found.append(child)
                found += child.find_all(tag, **attributes)
        return found

    def by_id(self, id: str) -> Node:
        found = self.find_all(id=id)
        assert found, f"no element #{id}"
        return found[0]


class DomBuilder(HTMLParser):
    VOID = {"meta", "link", "br", "img", "input", "hr", "source", "wbr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = DomBuilder()
    builder.feed(html)
    return builder.root


# Chromium ------------------------------------------------------------------------------------------------


def chromium(url: str, profile: Path, *, screenshot: Path | None = None, budget_ms: int = 3000) -> str:
    """The page's DOM after its scripts ran for ``budget_ms`` of virtual time (and a screenshot)."""
    command = [
        chromium_path(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        f"--virtual-time-budget={budget_ms}",
        "--window-size=1400,1000",
    ]
    command += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    done = subprocess.run([*command, url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def served(tmp_path):
    """``parley view`` serving a trace of the support swarm and a two-agent chat; yields its address."""
    trace = write_trace(tmp_path / "support.jsonl", support_swarm(), two_agent_chat())
    process = subprocess.Popen(
        [sys.executable, "-m", "parley", "view", str(trace)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith(f"parley view: {trace} at http://127.0.0.1:"), (line, process.stderr)
        yield line.split(" at ", 1)[1].split()[0]
    finally:
        process.terminate()
        process.wait(timeout=10)


def texts(nodes: list[Node]) -> list[str]:
    return [" ".join(node.text.split()) for node in nodes]


def test_the_page_shows_the_swarm_its_handoffs_context_and_usage(served, tmp_path):
    page = parse(chromium(served, tmp_path / "profile"))

    assert page.by_id("trace-name").text == "support.jsonl"
    assert texts(page.by_id("chats").find_all("a")) == [
        "support-1 · swarm · 10 messages",
        "chat-2 · chat · 4 messages",
    ]
    summary = page.by_id("summary").text
    assert "support-1" in summary and "2,686 (2,569 + 117)" in summary and "$0.000456" in summary
    assert page.by_id("stop-reason").find_all("dd")[0].text == (
        "terminate_target: billing's after-work ends the chat"
    )

    events = page.by_id("events")
    messages = events.find_all("li", class_="message")
    senders = [message.find_all("span", class_="sender")[0].text for message in messages]
    assert senders == ["_User", *["triage"] * 4, *["billing"] * 5]
    assert [message.find_all("span", class_="index")[0].text for message in messages] == [
        f"#{index}" for index in range(10)
    ]
    assert "Hi, I'm Ada. I was charged twice for invoice INV-1002." in messages[0].text
    assert "Sorry about that, Ada: I refunded the duplicate charge" in messages[-1].text
    # tool calls and their results are folded
    call = messages[7].find_all("details")[0]
    assert "open" not in call.attributes
    assert " ".join(call.find_all("summary")[0].text.split()) == (
        'calls issue_refund({"invoice_id": "INV-1002"}) · ran in 14 ms'
    )
    assert [pre.text for pre in call.find_all("pre")] == [
        '{\n  "invoice_id": "INV-1002"\n}',
        "Refunded $15.50 for INV-1002.",
    ]
    assert texts(messages[8].find_all("summary")) == ["result of issue_refund"]
    assert texts(events.find_all("li", class_="handoff")) == [
        "triage → billing · handoff · transfer_to_billing"
    ]
    assert texts(events.find_all("li", class_="context")) == [
        'Context updated by triage: customer_name = "Ada"; issue = "charged twice for INV-1002"',
        'Context updated by billing: refunds = ["INV-1002"]',
    ]
    assert texts(events.find_all("li", class_="stopped")) == [
        "Chat stopped: terminate_target · billing's after-work ends the chat"
    ]
    assert texts(events.find_all("li", class_="model"))[0] == (
        "triage ← gpt-4o-mini · 840 ms · 412 + 38 tokens · $0.000085"
    )

    # the graph: the path taken, in order, from the handoff and the after-work that ended the chat
    drawing = page.by_id("graph-drawing")
    assert {node.attributes["data-node"] for node in drawing.find_all("g", class_="node")} == {
        "triage", "billing", "technical_support", "TERMINATE",
    }  # fmt: skip
    taken = [
        (edge.attributes["data-source"], edge.attributes["data-target"])
        for edge in drawing.find_all("g", class_="taken")
    ]
    assert taken == [("triage", "billing"), ("billing", "TERMINATE")]
    assert len(drawing.find_all("g", class_="after_work")) == 3
    visited = {node.attributes["data-node"] for node in drawing.find_all("g", class_="visited")}
    assert visited == {"triage", "billing", "TERMINATE"}
    assert " ".join(page.by_id("path").text.split()) == "Path taken: triage → billing → TERMINATE"

    # context variables over time: the start, then each change, the changed cells marked
    rows = page.by_id("context-table").find_all("tr")
    assert texts(rows[0].find_all("th")) == ["when", "by", "customer_name", "issue", "refunds"]
    assert texts(rows[1].find_all("td")) == ["start", "", '"unknown"', '"unknown"', ""]
    assert texts(rows[2].find_all("td")) == ["+1.14 s", "triage", '"Ada"', '"charged twice for INV-1002"', ""]
    assert texts(rows[2].find_all("td", class_="changed")) == ['"Ada"', '"charged twice for INV-1002"']
    assert texts(rows[3].find_all("td", class_="changed")) == ['["INV-1002"]']

    # tokens, latency and cost per agent
    usage = {
        row.attributes.get("data-agent", "all"): texts(row.find_all("td"))
        for row in page.by_id("usage-table").find_all("tr")[1:]
    }
    assert usage == {
        "triage": ["triage", "2", "880", "50", "1.45 s", "725 ms", "$0.000162", "2 · 0.5 ms"],
        "billing": ["billing", "3", "1,689", "67", "3.52 s", "1.17 s", "$0.000294", "2 · 16 ms"],
        "all": ["all agents", "5", "2,569", "117", "4.97 s", "994 ms", "$0.000456", "4 · 16 ms"],
    }


def test_the_page_shows_the_chat_the_address_names(served, tmp_path):
    page = parse(chromium(served + "#chat=chat-2", tmp_path / "profile"))

    assert texts(page.by_id("chats").find_all("a", class_="selected")) == ["chat-2 · chat · 4 messages"]
    events = page.by_id("events")
    assert [
        " ".join(node.find_all("p")[0].text.split()) for node in events.find_all("li", class_="message")
    ] == [
        "What is the capital of France?",
        "Paris.",
        "And of Italy?",
        "Rome.",
    ]
    assert texts(events.find_all("li", class_="human"))[1] == "The human answers: And of Italy?"
    assert page.by_id("graph-title").text == "Turns"
    assert " ".join(page.by_id("path").text.split()) == "Turns: user → assistant → user → assistant"
    assert page.by_id("context-table").text == "No context variables."
    assert texts(page.by_id("usage-table").find_all("tr")[1].find_all("td"))[1] == "2 (1 cached)"


def test_a_screenshot_of_the_page(served, tmp_path):
    screenshot = tmp_path / "page.png"

    chromium(served, tmp_path / "profile", screenshot=screenshot)

    image = screenshot.read_bytes()
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = int.from_bytes(image[16:20], "big"), int.from_bytes(image[20:24], "big")
    assert (width, height) == (1400, 1000)
    assert len(image) > 50_000  # a rendered page, not a blank one


class GrowingTrace(type(Path())):  # type: ignore[misc]
    """A trace file that a running chat is still writing: each read shows more of it."""

    versions: list[bytes] = []
    reads = 0

    def read_bytes(self) -> bytes:
        GrowingTrace.reads += 1
        return self.versions[min(GrowingTrace.reads, len(self.versions)) - 1]


def test_the_page_follows_a_trace_that_is_still_being_written(tmp_path):
    events = support_swarm()
    lines = [json.dumps(event) for event in events]
    GrowingTrace.versions = [
        ("\n".join(lines[:12]) + "\n" + lines[12][:40]).encode(),  # mid-chat, the last line half written
        ("\n".join(lines) + "\n").encode(),
    ]
    GrowingTrace.reads = 0
    (tmp_path / "live.jsonl").write_text("")
    with TraceServer(tmp_path / "live.jsonl") as server:
        server.read = GrowingTrace(tmp_path / "live.jsonl").read_bytes
        page = parse(chromium(server.url, tmp_path / "profile", budget_ms=5000))

    assert GrowingTrace.reads >= 2
    messages = page.by_id("events").find_all("li", class_="message")
    assert len(messages) == 10
    assert "running" not in page.by_id("status").text


def test_a_half_written_trace_shows_what_there_is_and_that_the_chat_runs(tmp_path):
    lines = [json.dumps(event) for event in support_swarm()]
    trace = tmp_path / "live.jsonl"
    trace.write_text("\n".join(lines[:12]) + "\n" + "not json\n" + lines[12][:40])
    with TraceServer(trace) as server:
        page = parse(chromium(server.url, tmp_path / "profile", budget_ms=500))

    assert len(page.by_id("events").find_all("li", class_="message")) == 3
    status = page.by_id("status")
    assert "live" in status.classes
    assert "12 events · 1 unreadable line skipped" in status.text and "running" in status.text
    assert page.by_id("stop-reason").find_all("dd")[0].text == "still running"


# the server ------------------------------------------------------------------------------------------------


def get(url: str, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_the_server_serves_the_page_and_the_trace_as_it_is_now(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", two_agent_chat()[:3])
    with TraceServer(trace) as server:
        assert server.url.startswith("http://127.0.0.1:")
        status, headers, page = get(server.url, "/")
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert b'<script src="app.js" defer></script>' in page
        assert get(server.url, "/app.js")[1]["Content-Type"] == "text/javascript; charset=utf-8"
        assert get(server.url, "/style.css")[0] == 200

        status, headers, body = get(server.url, "/trace.jsonl")
        assert status == 200 and headers["Cache-Control"] == "no-store"
        assert headers["X-Trace-Name"] == "t.jsonl"
        assert len(body.splitlines()) == 3

        write_trace(trace, two_agent_chat())
        assert len(get(server.url, "/trace.jsonl")[2].splitlines()) == len(two_agent_chat())
        status, headers, body = get(server.url, "/trace.jsonl", "HEAD")
        assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0


def test_the_server_serves_nothing_else(tmp_path):
    with TraceServer(tmp_path / "gone.jsonl") as server:
        assert get(server.url, "/../../etc/passwd")[0] == 404
        assert get(server.url, "/static/app.js")[0] == 404
        status, _, body = get(server.url, "/trace.jsonl")

    assert status == 404
    assert body.decode().startswith(f"cannot read the trace {tmp_path / 'gone.jsonl'}: No such file")


def test_parley_view_needs_a_trace_file(tmp_path, capsys):
    assert main(["view", str(tmp_path / "missing.jsonl")]) == 1

    assert f"parley view: no trace file at {tmp_path / 'missing.jsonl'}" in capsys.readouterr().err


def test_parley_view_says_when_the_port_is_taken(tmp_path, capsys):
    trace = write_trace(tmp_path / "t.jsonl", two_agent_chat())
    with TraceServer(trace) as server:
        port = urlsplit(server.url).port

        assert main(["view", str(trace), "--port", str(port)]) == 1

    assert f"parley view: cannot serve on 127.0.0.1:{port}:" in capsys.readouterr().err


def test_parley_view_serves_until_interrupted(tmp_path):
    trace = write_trace(tmp_path / "t.jsonl", two_agent_chat())
    process = subprocess.Popen(
        [sys.executable, "-m", "parley", "view", str(trace)],
        stdout=subprocess.PIPE,
        text=True,
        # as at a terminal: a test run started in the background inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        url = (process.stdout.readline() if process.stdout else "").split(" at ", 1)[1].split()[0]
        assert get(url, "/trace.jsonl")[0] == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_parley_view_stops_cleanly_on_ctrl_c_as_soon_as_it_prints_its_address(tmp_path):
    """The address is printed once the server runs: a Ctrl-C right after it stops it, with no traceback
    (one sent while the server thread was starting escaped the handler)."""
    trace = write_trace(tmp_path / "t.jsonl", two_agent_chat())
    for _ in range(5):
        process = subprocess.Popen(
            [sys.executable, "-m", "parley", "view", str(trace)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            assert (process.stdout.readline() if process.stdout else "").startswith("parley view: ")
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=10) == 0
            assert process.stderr is not None and process.stderr.read() == ""
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_fixture_traces_follow_the_format():
    for event in support_swarm() + two_agent_chat():
        assert {"v", "chat_id", "seq", "ts", "kind", "agent"} <= set(event)
        assert event["v"] == 1 and event["ts"] > START


# real chats, traced and stored ------------------------------------------------------------------------------


def real_swarm() -> tuple[list, object]:
    def note_issue(issue: str, context_variables: dict) -> SwarmResult:
        """Note the customer's issue."""
        return SwarmResult(values="noted", context_variables={"issue": issue})

    triage = SwarmAgent(
        "triage",
        llm_config=ScriptedModel(
            [
                [
                    tool_call("note_issue", {"issue": "double charge"}, id="n1"),
                    tool_call("transfer_to_billing", id="t1"),
                ]
            ]
        ),
        functions=[note_issue],
        human_input_mode="NEVER",
    )
    billing = SwarmAgent("billing", llm_config=ScriptedModel(["Refunded, Ada."]), human_input_mode="NEVER")
    triage.register_hand_off(ON_CONDITION(billing, "Charges and refunds."))
    billing.register_hand_off(AFTER_WORK("TERMINATE"))
    return [triage, billing], triage


def test_the_page_shows_a_real_swarm_from_its_trace(tmp_path):
    agents, triage = real_swarm()
    trace = tmp_path / "real.jsonl"
    initiate_swarm_chat(triage, "I was charged twice", agents, trace=trace, silent=True)

    with TraceServer(trace) as server:
        page = parse(chromium(server.url, tmp_path / "profile"))

    messages = page.by_id("events").find_all("li", class_="message")
    assert [message.find_all("span", class_="sender")[0].text for message in messages] == [
        "_User", "triage", "triage", "billing",
    ]  # fmt: skip
    assert "Refunded, Ada." in messages[-1].text
    assert " ".join(page.by_id("path").text.split()) == "Path taken: triage → billing → TERMINATE"
    assert 'issue = "double charge"' in " ".join(page.by_id("events").text.split())


def test_a_chat_resumed_from_its_store_shows_its_runs_in_order(tmp_path):
    """A resumed chat numbers its events from 0 again, in the same trace: the page shows the first
    run's messages, then the resumed run's, and the chat as stopped once the second run stopped."""
    failing = [True]

    def reply(request: ModelRequest) -> ModelResponse:
        if failing[0] and len(request.messages) > 2:
            raise RuntimeError("the process dies here")
        return ModelResponse({"role": "assistant", "content": f"answer {len(request.messages)}"}, Usage(1, 1))

    trace = tmp_path / "resumed.jsonl"
    for _ in range(2):
        user = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", default_auto_reply="more")
        assistant = ConversableAgent("assistant", llm_config=FunctionModel(reply), human_input_mode="NEVER")
        options = {"store": f"sqlite:///{tmp_path / 'chats.db'}", "chat_id": "c1", "trace": trace}
        try:
            user.initiate_chat(assistant, "first", max_turns=3, silent=True, **options)
        except RuntimeError:
            failing[0] = False
    assert [json.loads(line)["seq"] for line in trace.read_text().splitlines()].count(0) == 2

    with TraceServer(trace) as server:
        page = parse(chromium(server.url, tmp_path / "profile"))

    events = page.by_id("events")
    messages = events.find_all("li", class_="message")
    assert [" ".join(node.find_all("p")[0].text.split()) for node in messages] == [
        "first", "answer 2", "more", "answer 4", "more", "answer 6",
    ]  # fmt: skip
    notes = texts(events.find_all("li", class_="note"))
    assert notes[0].startswith("Chat started") and "Chat resumed from its store" in notes
    assert "running" not in page.by_id("status").text


def test_parley_view_shows_a_chat_a_store_keeps(tmp_path):
    agents, triage = real_swarm()
    store = f"sqlite:///{tmp_path / 'chats.db'}"
    initiate_swarm_chat(triage, "I was charged twice", agents, store=store, chat_id="ada-1", silent=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "parley", "view", store, "ada-1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        assert line.startswith("parley view: ada-1 in sqlite:///"), (line, process.stderr)
        url = line.split(" at ", 1)[1].split()[0]
        events = [json.loads(line) for line in get(url, "/trace.jsonl")[2].splitlines()]
        page = parse(chromium(url, tmp_path / "profile"))
    finally:
        process.terminate()
        process.wait(timeout=10)

    assert events[0]["kind"] == "chat_started"
    assert events[0]["graph"]["nodes"] == ["triage", "billing", "TERMINATE"]
    messages = page.by_id("events").find_all("li", class_="message")
    assert len(messages) == 4 and "Refunded, Ada." in messages[-1].text
    assert " ".join(page.by_id("path").text.split()) == "Path taken: triage → billing → TERMINATE"


def test_parley_view_names_an_unknown_stored_chat(tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'chats.db'}"
    from parley.store import open_store

    open_store(store)
    assert main(["view", store, "nobody"]) == 1
    assert "has no chat 'nobody'" in capsys.readouterr().err


def test_parley_view_stops_on_ctrl_c_while_requests_keep_coming(tmp_path):
    """Ctrl-C in the middle of serving (a browser polling the growing trace) stops the server, and no
    answer is cut off half-written: each poll gets the whole trace, or finds the server gone."""
    import threading
    import time

    trace = write_trace(tmp_path / "t.jsonl", two_agent_chat())
    whole = (200, trace.read_bytes())
    for _ in range(3):
        process = subprocess.Popen(
            [sys.executable, "-m", "parley", "view", str(trace)],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        stop, interrupted = threading.Event(), threading.Event()
        answers: list[tuple[int, bytes]] = []
        failures: list[BaseException] = []
        pollers: list[threading.Thread] = []
        try:
            url = (process.stdout.readline() if process.stdout else "").split(" at ", 1)[1].split()[0]

            def poll(
                url: str = url,
                stop: threading.Event = stop,
                interrupted: threading.Event = interrupted,
                answers: list[tuple[int, bytes]] = answers,
                failures: list[BaseException] = failures,
            ) -> None:
                while not stop.is_set():
                    try:
                        status, _, body = get(url, "/trace.jsonl")
                    except OSError as error:  # refused, reset, closed with no answer: the server is gone
                        if not interrupted.is_set():
                            failures.append(error)
                        return
                    except Exception as error:  # a half-written answer (IncompleteRead), say
                        failures.append(error)
                        return
                    answers.append((status, body))

            pollers = [threading.Thread(target=poll) for _ in range(3)]
            for poller in pollers:
                poller.start()
            time.sleep(0.3)
            interrupted.set()
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=10) == 0
        finally:
            stop.set()
            if process.poll() is None:
                process.kill()
                process.wait()
            for poller in pollers:
                poller.join(timeout=15)
        assert not any(poller.is_alive() for poller in pollers)
        assert failures == []
        assert answers and all(answer == whole for answer in answers)


def test_parley_view_never_creates_or_changes_a_store(tmp_path, capsys):
    missing = tmp_path / "typo.db"

    assert main(["view", f"sqlite:///{missing}", "some-chat"]) == 2

    assert not missing.exists()
    assert list(tmp_path.iterdir()) == []
    assert "parley view:" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_parley_view_refuses_a_port_that_is_no_port(tmp_path, capsys, port):
    trace = write_trace(tmp_path / "t.jsonl", two_agent_chat())

    with pytest.raises(SystemExit) as exit_:
        main(["view", str(trace), "--port", port])

    assert exit_.value.code == 2
    assert "is not a port number" in capsys.readouterr().err


def test_parley_view_of_a_store_without_a_chat_id_says_to_give_one(tmp_path, capsys):
    store = f"sqlite:///{tmp_path / 'chats.db'}"

    assert main(["view", store]) == 2

    assert f"a store needs the chat to show: parley view {store} CHAT_ID" in capsys.readouterr().err


def test_parley_view_of_a_trace_file_with_a_chat_id_says_the_file_shows_every_chat(tmp_path, capsys):
    trace = tmp_path / "t.jsonl"
    trace.write_text("")

    assert main(["view", str(trace), "some-chat"]) == 2

    assert "is a trace file, which shows every chat it holds: give no CHAT_ID" in capsys.readouterr().err


def test_parley_view_of_a_store_that_cannot_be_read_exits_as_parley_chats_does(tmp_path, capsys):
    assert main(["view", f"sqlite:///{tmp_path / 'missing.db'}", "c"]) == 2
    assert main(["chats", "show", f"sqlite:///{tmp_path / 'missing.db'}", "c"]) == 2
