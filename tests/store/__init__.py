"""Tests of the chat stores and ``parley chats``."""
