"""An HTTP proxy on 127.0.0.1 for tests: ``CONNECT`` tunnels (HTTPS) and absolute-form
requests (plain HTTP), relayed byte for byte. It records the first request line of each
connection, so a test sees which way a client came and how many connections it opened."""

from __future__ import annotations

import socket
import threading
from types import TracebackType
from urllib.parse import urlsplit


class RelayProxy:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        #: The first request line of every connection, in the order they came.
        self.first_lines: list[str] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RelayProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            head = b""
            while b"\r\n\r\n" not in head:
                data = client.recv(65536)
                if not data:
                    return
                head += data
            first = head.split(b"\r\n", 1)[0].decode("latin-1")
            with self._lock:
                self.first_lines.append(first)
            method, target, _ = first.split(" ", 2)
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream = socket.create_connection((host, int(port)))
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                parts = urlsplit(target)
                upstream = socket.create_connection((parts.hostname, parts.port or 80))
                upstream.sendall(head)  # the origin server takes the absolute form as is
            with upstream:
                back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
                back.start()
                _copy(client, upstream)
                back.join(timeout=10)


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    try:
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass
