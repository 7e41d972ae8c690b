"""The server behind ``parley view``: the page, and the trace file as it is now."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote, urlsplit

#: The files of the page, by the path they are served at: (file in ``static/``, content type).
PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
TRACE_PATH = "/trace.jsonl"
#: How long :meth:`TraceServer.close` waits for the answers being written to finish, in seconds.
CLOSE_GRACE_S = 2.0


class TraceServer:
    """Serves the trace page and ``trace`` (read anew on each request) on ``host``:``port``.

    ``trace`` is a JSONL file, or a function that returns the trace's text (``name`` names it then).

    ``port=0`` takes a free port; :attr:`url` is the page's address. Use it as a context manager, or
    call :meth:`serve_forever` (or :meth:`start` for a background thread) and :meth:`close`.

    Raises:
        OSError: the address is taken.
    """

    def __init__(
        self,
        trace: str | Path | Callable[[], bytes],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        name: str = "trace",
    ) -> None:
        self.read: Callable[[], bytes] = trace if callable(trace) else Path(trace).read_bytes
        self.name = name if callable(trace) else Path(trace).name
        self._described = name if callable(trace) else str(trace)
        page = resources.files("parley.viewer") / "static"
        self._files = {
            path: (page.joinpath(name).read_bytes(), content_type)
            for path, (name, content_type) in PAGE_FILES.items()
        }
        self._http = ThreadingHTTPServer((host, port), self._handler())
        self._http.daemon_threads = True
        self._thread: threading.Thread | None = None
        # The answers being written, and whether the server is closing: the request threads are daemons,
        # which the process's end would cut off in the middle of an answer (its headers sent, the body
        # not), so close() waits for the answers begun and a request that comes after answers nothing.
        self._answers = threading.Condition()
        self._answering = 0
        self._closing = False

    @property
    def url(self) -> str:
        """The page's address, such as ``http://127.0.0.1:8765/``."""
        host, port = self._http.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}/"

    def serve_forever(self) -> None:
        """Serve until :meth:`close` is called (from another thread) or the process is interrupted."""
        self._http.serve_forever()

    def start(self) -> TraceServer:
        """Serve from a background thread; returns the server."""
        self._thread = threading.Thread(target=self._http.serve_forever, name="parley-view", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, free the port, and let the answers being written finish (for up to
        :data:`CLOSE_GRACE_S`); a request still coming in gets its connection closed, with no answer."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        with self._answers:
            self._closing = True
        self._http.server_close()
        with self._answers:
            self._answers.wait_for(lambda: self._answering == 0, timeout=CLOSE_GRACE_S)

    def _begin_answer(self) -> bool:
        """Count an answer in, unless the server is closing (False then: answer nothing)."""
        with self._answers:
            if self._closing:
                return False
            self._answering += 1
            return True

    def _end_answer(self) -> None:
        with self._answers:
            self._answering -= 1
            self._answers.notify_all()

    def __enter__(self) -> TraceServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "parley-view"

            def do_GET(self) -> None:
                self._answer(with_body=True)

            def do_HEAD(self) -> None:
                self._answer(with_body=False)

            def _answer(self, *, with_body: bool) -> None:
                if not server._begin_answer():
                    self.close_connection = True
                    return
                try:
                    self._respond(with_body=with_body)
                finally:
                    server._end_answer()

            def _respond(self, *, with_body: bool) -> None:
                path = urlsplit(self.path).path
                if path == TRACE_PATH:
                    try:
                        body = server.read()
                    except Exception as error:
                        detail = getattr(error, "strerror", None) or error
                        message = f"cannot read the trace {server._described}: {detail}"
                        self._send(
                            HTTPStatus.NOT_FOUND, message.encode(), "text/plain; charset=utf-8", with_body
                        )
                        return
                    self._send(HTTPStatus.OK, body, "application/x-ndjson; charset=utf-8", with_body)
                    return
                found = server._files.get(path)
                if found is None:
                    self._send(HTTPStatus.NOT_FOUND, b"not found", "text/plain; charset=utf-8", with_body)
                    return
                self._send(HTTPStatus.OK, *found, with_body)

            def _send(self, status: HTTPStatus, body: bytes, content_type: str, with_body: bool) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("X-Trace-Name", quote(server.name))
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return None

        return Handler
