"""The ``parley`` command: one module per subcommand.

parley demo                                   # the support swarm on the embedded model, interactively
parley demo --message "I was charged twice"   # one request, then the chat ends (for scripts)
parley demo -m "I was charged twice" -m "The app crashes too"   # the customer's messages, in turn
parley demo --model-path other.gguf           # another GGUF file
parley demo --base-url http://localhost:8000/v1 --model qwen2.5   # an OpenAI-compatible server
OPENAI_API_KEY=... parley demo --model gpt-4o-mini                # OpenAI
parley graph my_swarm:agents                  # a swarm's handoff graph, as Mermaid text
parley graph my_swarm:pattern --output graph.svg   # ... drawn by Graphviz
parley view trace.jsonl                       # a chat's trace as a page in the browser
parley chats list sqlite:///chats.db                               # the chats a store keeps
parley chats show sqlite:///chats.db CHAT_ID                       # one chat: who said what, how it ended
parley chats export sqlite:///chats.db CHAT_ID [--records]         # one chat as JSON
"""

from __future__ import annotations

import argparse

from parley.cli import chats, demo, graph, view


def main(argv: list[str] | None = None) -> int:
    """Run the ``parley`` command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="parley", description="parley: conversations between agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in (demo, graph, view, chats):
        command.add_command(commands)
    args = parser.parse_args(argv)
    status: int = args.run(args)
    return status
