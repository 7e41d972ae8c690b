"""``parley view``: a chat's JSONL trace as a page in the browser, served on 127.0.0.1.

The page (plain HTML, CSS and JavaScript in ``static/``) shows the conversation as a timeline, the
handoff graph with the path taken, the context variables over time, and the tokens, latency and cost
of each agent. It reads the trace from the server, which reads the file again on every request, and
refreshes itself while the chat runs.
"""

from parley.viewer.server import TraceServer

__all__ = ["TraceServer"]
