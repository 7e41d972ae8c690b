"""Chat leases for an embedded store: POSIX byte-range locks on a lock file beside the database.

Each chat is one byte of the lock file, at an offset taken from a hash of its id (:func:`lease_key`). The
kernel drops a process's locks when it dies, so the lease of a killed process is free at once. POSIX
locks belong to a process, not to a descriptor, and closing any descriptor of the file drops all of the
process's locks on it: so each process keeps exactly one descriptor per lock file (this module's
registry), and remembers which chats it holds itself, since locking a byte it holds already succeeds.
"""

from __future__ import annotations

import fcntl
import os
import threading

from parley.store.base import lease_key


class LeaseFile:
    """This process's one descriptor of a lock file, and the chats it holds through it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        self._held: set[str] = set()
        self._users = 0
        self._lock = threading.Lock()

    def acquire(self, chat_id: str) -> bool:
        """Take the chat's lease; ``False`` if this process or another live one holds it."""
        with self._lock:
            if chat_id in self._held:
                return False
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, lease_key(chat_id))
            except (BlockingIOError, PermissionError):
                return False
            self._held.add(chat_id)
            return True

    def release(self, chat_id: str) -> None:
        """Give the chat's lease back (nothing happens if this process does not hold it)."""
        with self._lock:
            if chat_id in self._held:
                self._held.discard(chat_id)
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, lease_key(chat_id))

    def held_by_this_process(self, chat_id: str) -> bool:
        """Whether this process holds the chat's lease."""
        return chat_id in self._held

    def is_held(self, chat_id: str) -> bool:
        """Whether any live process (this one included) holds the chat's lease now."""
        with self._lock:
            if chat_id in self._held:
                return True
            offset = lease_key(chat_id)
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
            except (BlockingIOError, PermissionError):
                return True
            fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, offset)
            return False


_files: dict[str, LeaseFile] = {}
_files_lock = threading.Lock()


def use_lease_file(path: str) -> LeaseFile:
    """This process's :class:`LeaseFile` for ``path``, shared by every store on the same database."""
    key = os.path.realpath(path)
    with _files_lock:
        lease_file = _files.get(key)
        if lease_file is None:
            lease_file = _files[key] = LeaseFile(key)
        lease_file._users += 1
        return lease_file


def stop_using(lease_file: LeaseFile) -> None:
    """A store is done with ``lease_file``: close it once no store uses it and it holds no lease."""
    with _files_lock:
        lease_file._users -= 1
        if lease_file._users <= 0 and not lease_file._held:
            _files.pop(lease_file.path, None)
            os.close(lease_file._fd)
