"""[sandbox] allow_hosts on Linux: sandboxed commands reach the listed hosts through
picode's proxy, and nothing else."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from picode.tools.bash import BashTool
from picode.tools.sandbox import Sandbox, SandboxConfig
from picode.tools.sandbox.proxy import host_allowed, parse_head
from tests.tools.helpers import run

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap is the Linux sandbox"
)


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def tool(tmp_path: Path, home: Path, *hosts: str) -> BashTool:
    return BashTool(tmp_path, sandbox=Sandbox(SandboxConfig(home=home, allow_hosts=hosts)))


def fetch(port: int, host: str = "127.0.0.1") -> str:
    code = f"import urllib.request as u; print(u.urlopen('http://{host}:{port}/').read().decode())"
    return f'{sys.executable} -c "{code}"'


def tunnel(port: int) -> str:
    code = (
        "import http.client, os; "
        "proxy = os.environ['HTTPS_PROXY'].rsplit(':', 1); "
        "c = http.client.HTTPConnection(proxy[0].split('//')[1], int(proxy[1])); "
        f"c.set_tunnel('127.0.0.1', {port}); c.request('GET', '/'); "
        "print(c.getresponse().read().decode())"
    )
    return f'{sys.executable} -c "{code}"'


@linux_only
def test_an_allowed_host_is_reached_through_the_proxy(
    tmp_path: Path, home: Path, server: int
) -> None:
    sandboxed = tool(tmp_path, home, "127.0.0.1")
    result = run(sandboxed, command=fetch(server))
    assert result.text_content == "hello from the host", result.text_content
    tunnelled = run(sandboxed, command=tunnel(server))
    assert tunnelled.text_content == "hello from the host", tunnelled.text_content


@linux_only
def test_another_host_is_refused_and_reported(tmp_path: Path, home: Path, server: int) -> None:
    sandboxed = tool(tmp_path, home, "pypi.org")
    for command in (fetch(server), tunnel(server)):
        result = run(sandboxed, command=command)
        assert result.is_error
        assert "hello from the host" not in result.text_content
        assert result.details["sandbox_blocked"] == "network access to 127.0.0.1"
        assert "add the host to allow_hosts under [sandbox]" in result.text_content


@linux_only
def test_without_the_proxy_variables_there_is_still_no_network(
    tmp_path: Path, home: Path, server: int
) -> None:
    command = f"unset HTTP_PROXY http_proxy; exec 3<>/dev/tcp/127.0.0.1/{server} && echo open"
    result = run(tool(tmp_path, home, "127.0.0.1"), command=command)
    assert result.is_error
    assert "open" not in result.text_content


@linux_only
def test_the_bridge_is_not_one_of_the_commands_jobs(tmp_path: Path, home: Path) -> None:
    result = run(tool(tmp_path, home, "pypi.org"), command="sleep 0.05 & wait; echo waited")
    assert result.text_content == "waited"


def test_host_patterns() -> None:
    assert host_allowed("pypi.org", ["pypi.org"])
    assert host_allowed("PyPI.org.", ["pypi.org"])
    assert not host_allowed("evil-pypi.org", ["pypi.org"])
    assert not host_allowed("files.pypi.org", ["pypi.org"])
    assert host_allowed("files.pythonhosted.org", ["*.pythonhosted.org"])
    assert host_allowed("pythonhosted.org", ["*.pythonhosted.org"])
    assert not host_allowed("pythonhosted.org.evil", ["*.pythonhosted.org"])


def test_request_heads() -> None:
    assert parse_head(b"CONNECT pypi.org:443 HTTP/1.1\r\nHost: x\r\n\r\n") == ("pypi.org", 443, b"")
    host, port, head = parse_head(b"GET http://a.example:8080/p?q=1 HTTP/1.1\r\nHost: a\r\n\r\n")
    assert (host, port) == ("a.example", 8080)
    assert head == b"GET /p?q=1 HTTP/1.1\r\nHost: a\r\n\r\n"
    assert parse_head(b"GET /relative HTTP/1.1\r\n\r\n") is None
    assert parse_head(b"CONNECT nohost HTTP/1.1\r\n\r\n") is None
