// The trace page of `parley view`: reads trace.jsonl from the server (one event a line, version 1),
// groups the events by chat, and shows the selected chat: its timeline, handoff graph and path,
// context variables over time, and tokens, latency and cost per agent. It reads the trace again every
// REFRESH_MS, so a chat that is still running fills in. Everything from the trace is put in the page
// as text (textContent), never as HTML.
"use strict";

const REFRESH_MS = 2000;
const SVG_NS = "http://www.w3.org/2000/svg";
const SPECIAL_NODES = new Set(["TERMINATE", "REVERT_TO_USER"]);
const HUES = [243, 160, 330, 28, 200, 280, 95, 0, 50, 185];

const state = { text: null, name: "trace", chats: [], problems: 0, open: new Set(), error: null, read: null };

// building the page ---------------------------------------------------------------------------------

function el(tag, attributes, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

function svgEl(tag, attributes, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attributes, children);
}

function fill(node, attributes, children) {
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined || value === false) continue;
    node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function replace(id, ...children) {
  const node = document.getElementById(id);
  node.replaceChildren(...children.flat(Infinity).filter((child) => child !== null && child !== undefined));
  return node;
}

// reading the trace ---------------------------------------------------------------------------------

function parseTrace(text) {
  const events = [];
  let problems = 0;
  const lines = text.split("\n");
  lines.forEach((line, number) => {
    if (!line.trim()) return;
    try {
      const event = JSON.parse(line);
      if (event && typeof event === "object" && event.chat_id !== undefined && event.kind) events.push(event);
      else problems += 1;
    } catch (error) {
      if (number < lines.length - 1) problems += 1; // the last line may be half written
    }
  });
  return { events, problems };
}

function groupChats(events) {
  const byId = new Map();
  for (const event of events) {
    const id = String(event.chat_id);
    if (!byId.has(id)) byId.set(id, []);
    byId.get(id).push(event);
  }
  const chats = [...byId.entries()].map(([id, chatEvents]) => describeChat(id, chatEvents));
  chats.sort((a, b) => a.start - b.start);
  return chats;
}

function describeChat(id, events) {
  // A chat resumed from its store numbers its events from 0 again: each run's follow the run before's.
  const runs = new Map();
  let run = -1;
  for (const event of events) {
    if ((event.seq ?? 0) === 0 || run < 0) run += 1;
    runs.set(event, run);
  }
  events.sort((a, b) => runs.get(a) - runs.get(b) || (a.seq ?? 0) - (b.seq ?? 0));
  const chat = {
    id,
    events,
    started: null,
    stopped: null,
    messages: [],
    handoffs: [],
    contextChanges: [],
    responses: [],
    results: new Map(),
    calls: new Map(),
    agents: [],
    start: events.length ? events[0].ts ?? 0 : 0,
    end: events.length ? events[events.length - 1].ts ?? 0 : 0,
  };
  const seen = new Set();
  const meet = (name) => {
    if (name && !seen.has(name)) {
      seen.add(name);
      chat.agents.push(name);
    }
  };
  for (const event of events) {
    switch (event.kind) {
      case "chat_started":
        if (chat.started) chat.stopped = null; // resumed: running again
        else chat.started = event;
        (event.agents || []).forEach(meet);
        break;
      case "chat_stopped":
        chat.stopped = event;
        break;
      case "message":
        chat.messages.push(event);
        meet(event.sender);
        break;
      case "handoff":
        chat.handoffs.push(event);
        break;
      case "context_updated":
        chat.contextChanges.push(event);
        break;
      case "model_response":
        chat.responses.push(event);
        meet(event.agent);
        break;
      case "tool_call":
        chat.calls.set(event.call_id, event);
        break;
      case "tool_result":
        chat.results.set(event.call_id, event);
        break;
      default:
        break;
    }
  }
  chat.shape = chat.started ? chat.started.shape : null;
  return chat;
}

// formatting ----------------------------------------------------------------------------------------

function seconds(value) {
  if (typeof value !== "number" || !isFinite(value)) return "–";
  if (value < 1) return `${(value * 1000).toFixed(value < 0.01 ? 1 : 0)} ms`;
  if (value < 120) return `${value.toFixed(2)} s`;
  return `${Math.floor(value / 60)} min ${Math.round(value % 60)} s`;
}

function dollars(value) {
  if (typeof value !== "number") return "–";
  return `$${value.toFixed(value !== 0 && value < 0.01 ? 6 : 4)}`;
}

function count(value) {
  return typeof value === "number" ? value.toLocaleString("en-US") : "–";
}

function json(value) {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value);
  } catch (error) {
    return String(value);
  }
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch (error) {
    return String(text ?? "");
  }
}

function clip(text, length) {
  text = String(text ?? "");
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

function contentText(content) {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === "object" ? part.text ?? `[${part.type}]` : String(part))).join("");
  }
  return json(content);
}

function colour(chat, name) {
  let index = chat.agents.indexOf(name);
  if (index < 0) index = chat.agents.length + [...String(name)].reduce((sum, c) => sum + c.charCodeAt(0), 0);
  return `hsl(${HUES[index % HUES.length]} 62% 42%)`;
}

function offset(chat, event) {
  return typeof event.ts === "number" ? `+${seconds(event.ts - chat.start)}` : "";
}

function timeOf(event) {
  return typeof event.ts === "number" ? new Date(event.ts * 1000).toISOString() : "";
}

function isSpecial(node) {
  return SPECIAL_NODES.has(node) || String(node).endsWith("()");
}

// the page ------------------------------------------------------------------------------------------

function selectedChat() {
  const wanted = new URLSearchParams(location.hash.slice(1)).get("chat");
  return state.chats.find((chat) => chat.id === wanted) || state.chats[0] || null;
}

function render() {
  document.getElementById("trace-name").textContent = state.name;
  document.title = `parley trace: ${state.name}`;
  const chat = selectedChat();
  renderStatus(chat);
  replace(
    "chats",
    state.chats.length > 1
      ? state.chats.map((each) =>
          el(
            "a",
            { href: `#chat=${encodeURIComponent(each.id)}`, class: each === chat ? "selected" : null },
            `${each.id} · ${each.shape || "chat"} · ${each.messages.length} messages`,
          ),
        )
      : [],
  );
  if (!chat) {
    replace("summary", el("p", { class: "empty" }, "No events in this trace yet."));
    for (const id of ["events", "graph-drawing", "path", "context-table", "usage-table"]) replace(id);
    return;
  }
  renderSummary(chat);
  renderTimeline(chat);
  renderGraph(chat);
  renderContext(chat);
  renderUsage(chat);
}

function renderStatus(chat) {
  const status = document.getElementById("status");
  status.className = "";
  if (state.error) {
    status.className = "problem";
    status.textContent = state.error;
    return;
  }
  const parts = [`${state.chats.reduce((sum, each) => sum + each.events.length, 0)} events`];
  if (state.problems) parts.push(`${state.problems} unreadable line${state.problems > 1 ? "s" : ""} skipped`);
  if (state.read) parts.push(`read ${state.read.toLocaleTimeString()}`);
  if (chat && !chat.stopped) {
    status.className = "live";
    parts.push("running");
  }
  status.textContent = parts.join(" · ");
}

function renderSummary(chat) {
  const usage = totals(chat);
  const stop = chat.stopped && chat.stopped.stop_reason;
  const item = (term, value, id) => el("div", { id }, el("dt", {}, term), el("dd", {}, value));
  replace(
    "summary",
    el(
      "dl",
      {},
      item("Chat", chat.id),
      item("Shape", chat.shape || "unknown"),
      item("Agents", chat.agents.join(", ") || "–"),
      item("Messages", String(chat.messages.length)),
      item("Time", seconds(chat.end - chat.start)),
      item("Tokens", `${count(usage.prompt + usage.completion)} (${count(usage.prompt)} + ${count(usage.completion)})`),
      item("Cost", dollars(usage.cost)),
      item("Stopped", stop ? `${stop.kind}: ${stop.detail}` : "still running", "stop-reason"),
    ),
  );
}

function totals(chat) {
  const reported = chat.stopped && chat.stopped.usage;
  if (reported) {
    return { prompt: reported.prompt_tokens ?? 0, completion: reported.completion_tokens ?? 0, cost: reported.cost ?? 0 };
  }
  return chat.responses.reduce(
    (sum, response) => ({
      prompt: sum.prompt + (response.prompt_tokens || 0),
      completion: sum.completion + (response.completion_tokens || 0),
      cost: sum.cost + (response.cost || 0),
    }),
    { prompt: 0, completion: 0, cost: 0 },
  );
}

// the timeline --------------------------------------------------------------------------------------

function renderTimeline(chat) {
  const shownCalls = new Set();
  for (const message of chat.messages) {
    for (const call of (message.message && message.message.tool_calls) || []) shownCalls.add(call.id);
  }
  const items = [];
  for (const event of chat.events) {
    const item = timelineItem(chat, event, shownCalls);
    if (item) {
      item.id = `event-${event.seq}`;
      item.dataset.seq = event.seq;
      item.dataset.kind = event.kind;
      items.push(item);
    }
  }
  replace("events", items);
}

function folded(key, summary, ...body) {
  const details = el("details", { "data-key": key, open: state.open.has(key) }, el("summary", {}, summary), body);
  details.addEventListener("toggle", () => {
    if (details.open) state.open.add(key);
    else state.open.delete(key);
  });
  return details;
}

function note(kind, ...children) {
  return el("li", { class: kind }, children);
}

function timelineItem(chat, event, shownCalls) {
  switch (event.kind) {
    case "chat_started":
      if (event !== chat.started) return note("note", el("strong", {}, "Chat resumed"), " from its store");
      return note("note", el("strong", {}, "Chat started"), `: ${event.shape || "a chat"} of ${(event.agents || []).join(", ")}`);
    case "message":
      return messageItem(chat, event);
    case "speaker_selected":
      return note("note", "Next speaker: ", el("strong", {}, event.speaker), event.reason ? ` (${event.reason})` : "");
    case "model_request":
      return null;
    case "model_response":
      return note(
        "model",
        `${event.agent} ← ${event.model || "model"} · ${seconds(event.latency_s)} · ` +
          `${count(event.prompt_tokens)} + ${count(event.completion_tokens)} tokens · ${dollars(event.cost)}` +
          (event.cached ? " · cached" : ""),
      );
    case "tool_call":
      return shownCalls.has(event.call_id) ? null : toolItem(chat, event);
    case "tool_result":
      return shownCalls.has(event.call_id) || chat.calls.has(event.call_id) ? null : toolItem(chat, event);
    case "handoff":
      return note(
        "handoff",
        el("strong", {}, `${event.source} → ${event.target}`),
        ` · ${event.via}`,
        event.reason ? ` · ${event.reason}` : "",
      );
    case "context_updated": {
      const changes = Object.entries(event.changes || {}).map(([key, value]) => `${key} = ${json(value)}`);
      const removed = (event.removed || []).length ? [`removed ${(event.removed || []).join(", ")}`] : [];
      return note("context", el("strong", {}, `Context updated by ${event.agent || "the chat"}`), `: ${[...changes, ...removed].join("; ")}`);
    }
    case "human_input_requested":
      return note("human", el("strong", {}, `${event.agent || "An agent"} asks the human`), `: ${event.prompt || ""}`);
    case "human_input":
      return note(
        "human",
        el("strong", {}, "The human answers"),
        event.answer ? `: ${event.answer}` : ": (nothing: the auto-reply is used)",
      );
    case "notice":
      return note("note", event.text || "");
    case "chat_stopped": {
      const stop = event.stop_reason || {};
      return note("stopped", `Chat stopped: ${stop.kind || "unknown"}`, stop.detail ? ` · ${stop.detail}` : "");
    }
    default:
      return note("note", `${event.kind}${event.agent ? ` (${event.agent})` : ""}`);
  }
}

function messageItem(chat, event) {
  const message = event.message || {};
  const sender = event.sender || message.name || "?";
  const isTool = message.role === "tool";
  const item = el(
    "li",
    { class: isTool ? "message tool-results" : "message" },
    el(
      "div",
      { class: "who" },
      el("span", { class: "sender" }, sender),
      el("span", { class: "recipient" }, `→ ${event.recipient || "?"}`),
      el("span", { class: "meta", title: timeOf(event) }, offset(chat, event)),
      el("span", { class: "index" }, `#${event.index ?? ""}`),
    ),
  );
  item.style.setProperty("--agent", colour(chat, sender));
  if (isTool) {
    const responses = message.tool_responses || [message];
    responses.forEach((response, number) => {
      const call = chat.calls.get(response.tool_call_id);
      item.append(
        folded(
          `${chat.id}:${event.seq}:${number}`,
          el("span", {}, "result of ", el("code", {}, call ? call.tool : response.tool_call_id || "a tool")),
          el("pre", {}, contentText(response.content)),
        ),
      );
    });
    return item;
  }
  const text = contentText(message.content);
  if (text) item.append(el("p", { class: "content" }, text));
  (message.tool_calls || []).forEach((call, number) => {
    const fn = call.function || {};
    const result = chat.results.get(call.id);
    const outcome = result ? (result.error ? " · failed" : ` · ran in ${seconds(result.duration_s)}`) : "";
    item.append(
      folded(
        `${chat.id}:${event.seq}:call${number}`,
        el("span", {}, "calls ", el("code", {}, fn.name || "?"), `(${clip(fn.arguments || "", 60)})${outcome}`),
        el("pre", {}, pretty(fn.arguments || "{}")),
        result ? el("pre", { class: result.error ? "error" : null }, result.error ? `error: ${result.error}` : contentText(result.content)) : null,
      ),
    );
  });
  return item;
}

function toolItem(chat, event) {
  const result = event.kind === "tool_result" ? event : chat.results.get(event.call_id);
  const call = event.kind === "tool_call" ? event : chat.calls.get(event.call_id);
  return el(
    "li",
    { class: "note" },
    folded(
      `${chat.id}:${event.seq}:tool`,
      el("span", {}, `${event.agent || "?"} runs `, el("code", {}, event.tool || "?"), result ? ` · ${seconds(result.duration_s)}` : ""),
      call ? el("pre", {}, pretty(call.arguments || "{}")) : null,
      result ? el("pre", { class: result.error ? "error" : null }, result.error ? `error: ${result.error}` : contentText(result.content)) : null,
    ),
  );
}

// the handoff graph ---------------------------------------------------------------------------------

function graphOf(chat) {
  const planned = chat.started && chat.started.graph;
  let nodes;
  let edges;
  const steps = [];
  if (planned && Array.isArray(planned.nodes)) {
    nodes = planned.nodes.map(String);
    edges = (planned.edges || []).map((edge) => ({ ...edge, taken: [] }));
    for (const handoff of chat.handoffs) steps.push({ source: handoff.source, target: handoff.target, via: handoff.via });
    const stop = chat.stopped && chat.stopped.stop_reason;
    const last = steps.length ? steps[steps.length - 1].target : null;
    if (stop && stop.kind === "terminate_target" && stop.agent && last !== "TERMINATE") {
      if (edges.some((edge) => edge.source === stop.agent && edge.target === "TERMINATE")) {
        steps.push({ source: stop.agent, target: "TERMINATE", via: "after-work" });
      }
    }
  } else {
    nodes = chat.agents.slice();
    edges = [];
    let previous = null;
    for (const message of chat.messages) {
      if ((message.message || {}).role === "tool" || message.sender === previous || !message.sender) continue;
      if (previous) steps.push({ source: previous, target: message.sender, via: "turn" });
      previous = message.sender;
    }
  }
  steps.forEach((step, number) => {
    for (const name of [step.source, step.target]) if (!nodes.includes(name)) nodes.push(name);
    const wanted = step.via === "after-work" ? "after_work" : step.via === "handoff" ? "condition" : null;
    let edge =
      edges.find((each) => each.source === step.source && each.target === step.target && (!wanted || each.kind === wanted)) ||
      edges.find((each) => each.source === step.source && each.target === step.target);
    if (!edge) {
      edge = { source: step.source, target: step.target, kind: wanted || "turn", label: planned ? step.via : "", taken: [], unplanned: Boolean(planned) };
      edges.push(edge);
    }
    edge.taken.push(number + 1);
  });
  const firstSpeaker = chat.messages.map((message) => message.sender).find((name) => nodes.includes(name) && !isSpecial(name));
  const start = steps.length ? steps[0].source : firstSpeaker || nodes[0];
  return { nodes, edges, steps, start, planned: Boolean(planned) };
}

function layout(graph) {
  const rank = new Map();
  if (graph.start !== undefined) rank.set(graph.start, 0);
  const queue = graph.start !== undefined ? [graph.start] : [];
  while (queue.length) {
    const node = queue.shift();
    for (const edge of graph.edges) {
      if (edge.source === node && !rank.has(edge.target) && !isSpecial(edge.target)) {
        rank.set(edge.target, rank.get(node) + 1);
        queue.push(edge.target);
      }
    }
  }
  const agentRanks = [...rank.values()];
  let deepest = agentRanks.length ? Math.max(...agentRanks) : 0;
  for (const node of graph.nodes) {
    if (!rank.has(node) && !isSpecial(node)) rank.set(node, deepest + 1);
  }
  deepest = Math.max(0, ...[...rank.values()]);
  for (const node of graph.nodes) if (!rank.has(node)) rank.set(node, deepest + 1);

  const columns = [];
  for (const node of graph.nodes) {
    const column = rank.get(node);
    (columns[column] = columns[column] || []).push(node);
  }
  const height = 34;
  const gapY = 26;
  const gapX = 170;
  const widthOf = (node) => Math.max(74, String(node).length * 7.8 + 26);
  const tallest = Math.max(...columns.filter(Boolean).map((column) => column.length));
  const boxes = new Map();
  let x = 16;
  columns.forEach((column) => {
    if (!column) return;
    const width = Math.max(...column.map(widthOf));
    const top = 60 + ((tallest - column.length) * (height + gapY)) / 2;
    column.forEach((node, row) => {
      const w = widthOf(node);
      boxes.set(node, { x: x + (width - w) / 2, y: top + row * (height + gapY), w, h: height, rank: rank.get(node) });
    });
    x += width + gapX;
  });
  const bottom = 60 + tallest * (height + gapY) - gapY;
  return { boxes, bottom, width: x - gapX + 16, height: bottom + 90 };
}

function renderGraph(chat) {
  const graph = graphOf(chat);
  if (!graph.nodes.length) {
    replace("graph-drawing", el("p", { class: "empty" }, "No agents yet."));
    replace("path");
    return;
  }
  const { boxes, bottom, width, height } = layout(graph);
  const marker = (id, cls) =>
    svgEl("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: cls }));
  const drawing = svgEl(
    "svg",
    {
      viewBox: `0 0 ${Math.max(width, 200)} ${height}`,
      width: Math.max(width, 200),
      height,
      role: "img",
      "aria-label": "handoff graph",
    },
    svgEl("defs", {}, marker("arrow", "arrow"), marker("arrow-taken", "arrow taken")),
  );
  const pairs = new Map();
  for (const edge of graph.edges) {
    const from = boxes.get(edge.source);
    const to = boxes.get(edge.target);
    if (!from || !to) continue;
    const pair = `${edge.source}\u0000${edge.target}`;
    const nth = pairs.get(pair) || 0;
    pairs.set(pair, nth + 1);
    const { d, labelAt } = edgePath(from, to, nth, bottom);
    const taken = edge.taken.length > 0;
    const classes = ["edge", edge.kind, taken ? "taken" : "", edge.unplanned ? "unplanned" : ""].filter(Boolean).join(" ");
    const label = taken ? `${edge.taken.join(", ")} · ${edge.label || edge.kind}` : edge.label || "";
    drawing.append(
      svgEl(
        "g",
        { class: classes, "data-source": edge.source, "data-target": edge.target },
        svgEl("title", {}, `${edge.source} → ${edge.target}: ${edge.label || edge.kind}${taken ? ` (step ${edge.taken.join(", ")})` : ""}`),
        svgEl("path", { d, "marker-end": taken ? "url(#arrow-taken)" : "url(#arrow)" }),
        label ? svgEl("text", { x: labelAt.x, y: labelAt.y }, clip(label, 30)) : null,
      ),
    );
  }
  const visited = new Set([graph.start, ...graph.steps.flatMap((step) => [step.source, step.target])]);
  for (const node of graph.nodes) {
    const box = boxes.get(node);
    const special = isSpecial(node);
    const classes = ["node", special ? "special" : "", visited.has(node) ? "visited" : ""].filter(Boolean).join(" ");
    drawing.append(
      svgEl(
        "g",
        { class: classes, "data-node": node },
        svgEl("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: special ? box.h / 2 : 8 }),
        svgEl("text", { x: box.x + box.w / 2, y: box.y + box.h / 2 }, node),
      ),
    );
  }
  replace("graph-drawing", drawing);
  document.getElementById("graph-title").textContent = graph.planned ? "Handoffs" : "Turns";
  const path = graph.steps.length ? [graph.steps[0].source, ...graph.steps.map((step) => step.target)] : [graph.start];
  replace(
    "path",
    graph.planned ? "Path taken: " : "Turns: ",
    path.flatMap((node, number) => [number ? " → " : "", el("span", { class: "step" }, node)]),
  );
}

function edgePath(from, to, nth, bottom) {
  const bend = nth * 22;
  if (from === to) {
    const left = from.x + from.w * 0.3;
    const right = from.x + from.w * 0.7;
    const top = from.y - 42 - bend;
    return { d: `M${left},${from.y} C${left},${top} ${right},${top} ${right},${from.y}`, labelAt: { x: from.x + from.w / 2, y: top + 8 } };
  }
  if (to.rank === from.rank + 1) {
    const x1 = from.x + from.w;
    const y1 = from.y + from.h / 2 + (nth ? 6 : 0);
    const x2 = to.x;
    const y2 = to.y + to.h / 2 + (nth ? 6 : 0);
    const dx = Math.max(40, (x2 - x1) / 2);
    const d = `M${x1},${y1} C${x1 + dx},${y1 + bend} ${x2 - dx},${y2 + bend} ${x2},${y2}`;
    return { d, labelAt: bezierMiddle(x1, y1, x1 + dx, y1 + bend, x2 - dx, y2 + bend, x2, y2, -5) };
  }
  const x1 = from.x + from.w / 2;
  const y1 = from.y + from.h;
  const x2 = to.x + to.w / 2;
  const y2 = to.y + to.h;
  // Edges that go back, stay in a column or skip one pass under the nodes.
  const sag = (to.rank > from.rank + 1 ? bottom + 30 : Math.max(y1, y2) + 46) + bend;
  const d = `M${x1},${y1} C${x1},${sag} ${x2},${sag} ${x2},${y2}`;
  return { d, labelAt: bezierMiddle(x1, y1, x1, sag, x2, sag, x2, y2, 13) };
}

function bezierMiddle(x1, y1, cx1, cy1, cx2, cy2, x2, y2, lift) {
  return { x: (x1 + 3 * cx1 + 3 * cx2 + x2) / 8, y: (y1 + 3 * cy1 + 3 * cy2 + y2) / 8 + lift };
}

// context variables over time -----------------------------------------------------------------------

function renderContext(chat) {
  const initial = (chat.started && chat.started.context) || {};
  const keys = [...Object.keys(initial)];
  for (const change of chat.contextChanges) {
    for (const key of [...Object.keys(change.changes || {}), ...(change.removed || [])]) if (!keys.includes(key)) keys.push(key);
  }
  if (!keys.length) {
    replace("context-table", el("p", { class: "empty" }, "No context variables."));
    return;
  }
  const current = new Map(Object.entries(initial));
  const row = (when, who, changed, removed) =>
    el(
      "tr",
      {},
      el("td", {}, when),
      el("td", {}, who),
      keys.map((key) => {
        if (removed.has(key)) return el("td", { class: "value removed" }, "removed");
        const value = current.has(key) ? json(current.get(key)) : "";
        return el("td", { class: changed.has(key) ? "value changed" : "value", title: value }, clip(value, 48));
      }),
    );
  const rows = [row("start", "", new Set(), new Set())];
  for (const change of chat.contextChanges) {
    const changed = new Set(Object.keys(change.changes || {}));
    const removed = new Set(change.removed || []);
    for (const key of changed) current.set(key, change.changes[key]);
    for (const key of removed) current.delete(key);
    const updated = row(offset(chat, change), change.agent || "", changed, removed);
    updated.dataset.seq = change.seq;
    rows.push(updated);
  }
  replace(
    "context-table",
    el(
      "div",
      { class: "scroll" },
      el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "when"), el("th", {}, "by"), keys.map((key) => el("th", {}, key)))), el("tbody", {}, rows)),
    ),
  );
}

// tokens, latency and cost per agent ----------------------------------------------------------------

function renderUsage(chat) {
  const byAgent = new Map();
  const entry = (name) => {
    if (!byAgent.has(name)) byAgent.set(name, { calls: 0, prompt: 0, completion: 0, latency: 0, cost: 0, cached: 0, tools: 0, toolTime: 0 });
    return byAgent.get(name);
  };
  for (const response of chat.responses) {
    const usage = entry(response.agent || "?");
    usage.calls += 1;
    usage.prompt += response.prompt_tokens || 0;
    usage.completion += response.completion_tokens || 0;
    usage.latency += response.latency_s || 0;
    usage.cost += response.cost || 0;
    usage.cached += response.cached ? 1 : 0;
  }
  for (const result of chat.results.values()) {
    const usage = entry(result.agent || "?");
    usage.tools += 1;
    usage.toolTime += result.duration_s || 0;
  }
  if (!byAgent.size) {
    replace("usage-table", el("p", { class: "empty" }, "No model or tool calls recorded."));
    return;
  }
  const names = [...byAgent.keys()].sort((a, b) => chat.agents.indexOf(a) - chat.agents.indexOf(b));
  const all = { calls: 0, prompt: 0, completion: 0, latency: 0, cost: 0, cached: 0, tools: 0, toolTime: 0 };
  for (const usage of byAgent.values()) for (const key of Object.keys(all)) all[key] += usage[key];
  const cells = (usage) => [
    el("td", { class: "number" }, count(usage.calls) + (usage.cached ? ` (${usage.cached} cached)` : "")),
    el("td", { class: "number" }, count(usage.prompt)),
    el("td", { class: "number" }, count(usage.completion)),
    el("td", { class: "number" }, seconds(usage.latency)),
    el("td", { class: "number" }, usage.calls ? seconds(usage.latency / usage.calls) : "–"),
    el("td", { class: "number" }, dollars(usage.cost)),
    el("td", { class: "number" }, usage.tools ? `${usage.tools} · ${seconds(usage.toolTime)}` : "–"),
  ];
  const head = ["agent", "model calls", "prompt tokens", "completion tokens", "latency", "per call", "cost", "tool runs"];
  replace(
    "usage-table",
    el(
      "div",
      { class: "scroll" },
      el(
        "table",
        {},
        el("thead", {}, el("tr", {}, head.map((text, number) => el("th", { class: number ? "number" : null }, text)))),
        el(
          "tbody",
          {},
          names.map((name) => {
            const tr = el("tr", { "data-agent": name }, el("td", {}, name), cells(byAgent.get(name)));
            tr.firstChild.style.color = colour(chat, name);
            return tr;
          }),
          el("tr", { class: "total" }, el("td", {}, "all agents"), cells(all)),
        ),
      ),
    ),
  );
}

// refreshing ----------------------------------------------------------------------------------------

async function refresh() {
  let changed = state.error !== null || state.text === null;
  try {
    const response = await fetch("trace.jsonl", { cache: "no-store" });
    const text = await response.text();
    if (!response.ok) {
      state.error = text || `the server answered ${response.status}`;
    } else {
      state.error = null;
      state.read = new Date();
      state.name = decodeURIComponent(response.headers.get("X-Trace-Name") || "trace");
      if (text !== state.text) {
        changed = true;
        state.text = text;
        const { events, problems } = parseTrace(text);
        state.chats = groupChats(events);
        state.problems = problems;
      }
    }
  } catch (error) {
    state.error = `cannot reach parley view (${error.message}); is it still running?`;
  }
  if (changed) render();
  else renderStatus(selectedChat());
}

async function keepReading() {
  await refresh();
  setTimeout(keepReading, REFRESH_MS);
}

window.addEventListener("hashchange", render);
keepReading();
