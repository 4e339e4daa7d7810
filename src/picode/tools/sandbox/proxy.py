"""``[sandbox] allow_hosts``: an HTTP proxy in picode that lets sandboxed commands reach
only the listed hosts.

The sandbox has no network of its own (``--unshare-net``), so the proxy listens on a Unix
socket in a private folder bound read-only into the sandbox. Inside, a small bridge
(``BRIDGE``, run by the sandbox's first process before it becomes the shell) listens on
127.0.0.1 and forwards each connection to that socket; ``HTTP_PROXY``/``HTTPS_PROXY`` point
programs at it. The proxy reads one request head: ``CONNECT host:port`` (HTTPS and other
tunnels) or an absolute ``http://host/...`` request, checks the host, then only copies
bytes. A connection stays with the host it was opened for, so later requests on it cannot
reach another host.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

#: Where the bridge listens inside the sandbox (its own network namespace: always free).
BRIDGE_PORT = 3128
_HEAD_LIMIT = 64 * 1024
_CONNECT_TIMEOUT_S = 10.0
_CHUNK = 64 * 1024

#: Run inside the sandbox as ``python -I -S -c BRIDGE <socket> <port> <command...>``: binds
#: the port (so it is ready before the command starts), forks the forwarder, and becomes
#: the command. Only C modules (``_socket``, ``_thread``): ``socket`` and ``threading``
#: would double the start-up time every command pays. The forwarder is not one of the
#: shell's jobs (``wait`` does not wait for it) and dies with the sandbox's PID namespace
#: when the command ends.
BRIDGE = r"""
import _socket, _thread, os, sys
S = _socket
path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
server = S.socket(S.AF_INET, S.SOCK_STREAM)
server.setsockopt(S.SOL_SOCKET, S.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
if os.fork():
    server.close()
    os.execvp(argv[0], argv)
os.setsid()
for fd in (0, 1, 2):
    os.dup2(os.open(os.devnull, os.O_RDWR), fd)
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for sock, how in ((dst, S.SHUT_WR), (src, S.SHUT_RD)):
        try:
            sock.shutdown(how)
        except OSError:
            pass
def serve(fd):
    client = S.socket(S.AF_INET, S.SOCK_STREAM, 0, fd)
    upstream = S.socket(S.AF_UNIX, S.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        return
    _thread.start_new_thread(pump, (upstream, client))
    pump(client, upstream)
while True:
    fd, _ = server._accept()
    _thread.start_new_thread(serve, (fd,))
"""


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    """``example.com`` allows exactly that host; ``*.example.com`` its subdomains too."""
    host = host.strip("[]").rstrip(".").lower()
    for pattern in allowed:
        pattern = pattern.strip().rstrip(".").lower()
        if pattern.startswith("*."):
            if host == pattern[2:] or host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


def parse_head(head: bytes) -> tuple[str, int, bytes] | None:
    """(host, port, the head to send upstream: empty for CONNECT) or None if unusable."""
    first, _, rest = head.partition(b"\r\n")
    parts = first.decode("latin-1").split()
    if len(parts) != 3:
        return None
    method, target, version = parts
    if method.upper() == "CONNECT":
        host, _, port = target.rpartition(":")
        if not host or not port.isdigit():
            return None
        return host.strip("[]"), int(port), b""
    url = urlsplit(target)
    if url.scheme.lower() != "http" or not url.hostname:
        return None
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    line = f"{method} {path} {version}\r\n".encode("latin-1")
    return url.hostname, url.port or 80, line + rest


class AllowlistProxy:
    """One per sandbox, started on first use in the event loop that runs the commands."""

    def __init__(self, allowed: Sequence[str]) -> None:
        self.allowed = tuple(allowed)
        self.folder: Path | None = None
        self.socket: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.refused: list[str] = []

    async def start(self) -> Path:
        loop = asyncio.get_running_loop()
        if self._server is not None and self.socket is not None and self._loop is loop:
            return self.socket
        # A server of a loop that has ended serves nobody: start afresh in this one.
        self._forget()
        self._loop = loop
        # A private folder, bound read-only into the sandbox: the command cannot replace
        # the socket with one of its own.
        self.folder = Path(tempfile.mkdtemp(prefix="picode-proxy-"))
        atexit.register(shutil.rmtree, self.folder, True)
        self.socket = self.folder / "proxy.sock"
        self._server = await asyncio.start_unix_server(self._handle, path=str(self.socket))
        return self.socket

    def _forget(self) -> None:
        if self._server is not None:
            with contextlib.suppress(Exception):
                self._server.close()
            self._server = None
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
            self.socket = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except Exception:
            log.exception("sandbox proxy failed")
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            return
        if len(head) > _HEAD_LIMIT:
            return
        parsed = parse_head(head)
        if parsed is None:
            await _reply(writer, 400, "picode sandbox: only CONNECT and http:// requests\n")
            return
        host, port, upstream_head = parsed
        if not host_allowed(host, self.allowed):
            self.refused.append(host)
            await _reply(
                writer,
                403,
                f"picode sandbox: {host} is not in [sandbox] allow_hosts\n",
            )
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), _CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as exc:
            await _reply(writer, 502, f"picode sandbox: cannot reach {host}:{port}: {exc}\n")
            return
        try:
            if upstream_head:
                up_writer.write(upstream_head)
            else:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass


async def _reply(writer: asyncio.StreamWriter, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = text.encode()
    writer.write(
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()


def proxy_environment(port: int = BRIDGE_PORT) -> dict[str, str]:
    url = f"http://127.0.0.1:{port}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
    return dict.fromkeys(names, url)


def bridged(command: list[str], socket: Path, python: str) -> list[str]:
    return [python, "-I", "-S", "-c", BRIDGE, str(socket), str(BRIDGE_PORT), *command]
