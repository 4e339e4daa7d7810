"""``picode mcp list``, ``picode mcp add NAME -- COMMAND ARGS...`` and ``picode mcp
login/logout NAME`` (docs/mcp.md).

``add`` edits the user's ``config.toml`` with tomlkit so its comments and layout stay; it
refuses to replace a server that exists and never writes a file it could not parse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from picode.session.config.mcp import McpServer

USAGE = """\
usage: picode mcp list
       picode mcp add NAME [--env KEY=VALUE]... [--timeout SECONDS] -- COMMAND [ARGS...]
       picode mcp add NAME --url URL [--header 'Name: value']... [--sse]
       picode mcp login NAME
       picode mcp logout NAME

(a prompt that starts with the word "mcp" is sent with: picode -- mcp ...)
"""


def run_mcp_command(
    argv: Sequence[str],
    out: TextIO | None = None,
    err: TextIO | None = None,
    browser: Callable[[str], object] | None = None,
) -> int:
    """Exit code 0 on success, 1 when the config could not be changed or a login failed,
    2 for bad usage. ``browser`` opens the login address (the person's browser)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    if not argv or argv[0] not in ("list", "add", "login", "logout"):
        err.write(USAGE)
        return 2
    if argv[0] in ("login", "logout"):
        if len(argv) != 2:
            err.write(USAGE)
            return 2
        return _login(argv[0], argv[1], out, err, browser)
    if argv[0] == "list":
        if len(argv) > 1:
            err.write(USAGE)
            return 2
        return _list(out, err)
    return _add(list(argv[1:]), out, err)


def _list(out: TextIO, err: TextIO) -> int:
    from picode.session.config.settings import load_config
    from picode.session.models.auth import AuthStore
    from picode.session.paths import resolve_paths
    from picode.session.safety.trust import assess_project

    paths = resolve_paths()
    cwd = Path.cwd()
    trusted = assess_project(paths, cwd).trusted
    loaded = load_config(paths, cwd, project_trusted=trusted)
    for problem in loaded.problems:
        err.write(f"picode: {problem}\n")
    servers = loaded.settings.mcp.servers
    if not servers:
        out.write("No MCP servers configured (add one with: picode mcp add NAME -- COMMAND).\n")
    auth = AuthStore(paths.auth_file)
    for name, server in servers.items():
        target = server.url if server.url else " ".join([server.command or "", *server.args])
        state = "" if server.enabled else "  (disabled)"
        if server.login is not None and server.enabled:
            entry = auth.entry(f"mcp:{name}")
            logged_in = entry.get("url") == server.url and entry.get("tokens")
            state = "  (logged in)" if logged_in else "  (not logged in)"
        out.write(f"{name}  {server.kind}  {target}{state}\n")
    if any(gate.loc[:1] == ("mcp",) for gate in loaded.ignored):
        out.write("This folder is not trusted: its .picode/config.toml servers are not listed.\n")
    return 0


def _login(
    command: str, name: str, out: TextIO, err: TextIO, browser: Callable[[str], object] | None
) -> int:
    import asyncio

    from picode.ai.untrusted import safe
    from picode.session.mcp import McpLoginError, open_browser
    from picode.session.models.auth import AuthFileError, AuthStore
    from picode.session.paths import resolve_paths

    server = _server(name, err)
    if server is None:
        return 1
    if server.login is None:
        why = (
            "a stdio server"
            if server.kind == "stdio"
            else "oauth = false or an Authorization header"
        )
        err.write(f"picode mcp {command}: '{name}' does not log in ({why})\n")
        return 1
    auth = AuthStore(resolve_paths().auth_file)
    opener = browser or open_browser

    def show(url: str) -> None:
        out.write(f"To log in to '{name}', open this address in your browser:\n  {safe(url)}\n")
        out.flush()
        opener(url)

    from picode.session.mcp.oauth import login, logout

    try:
        if command == "login":
            asyncio.run(login(name, server, auth, show))
            out.write(f"Logged in to '{name}'.\n")
            return 0
        had, problem = asyncio.run(logout(name, server, auth))
    except (McpLoginError, AuthFileError) as exc:
        err.write(f"picode mcp {command}: {safe(str(exc))}\n")
        return 1
    except KeyboardInterrupt:
        err.write(f"picode mcp {command}: interrupted\n")
        return 130
    if not had:
        out.write(f"Not logged in to '{name}'.\n")
    elif problem:
        out.write(f"Logged out of '{name}' (the server did not revoke the tokens: {problem}).\n")
    else:
        out.write(f"Logged out of '{name}'.\n")
    return 0


def _server(name: str, err: TextIO) -> McpServer | None:
    from picode.session.config.settings import load_config
    from picode.session.paths import resolve_paths
    from picode.session.safety.trust import assess_project

    paths = resolve_paths()
    cwd = Path.cwd()
    loaded = load_config(paths, cwd, project_trusted=assess_project(paths, cwd).trusted)
    server = loaded.settings.mcp.servers.get(name)
    if server is None:
        err.write(f"picode mcp: no server named '{name}' (picode mcp list shows them)\n")
    return server


def _add_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="picode mcp add", add_help=True)
    parser.add_argument("name")
    parser.add_argument("--url", help="a streamable HTTP (or, with --sse, SSE) server")
    parser.add_argument("--sse", action="store_true", help="the url speaks SSE")
    parser.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--timeout", type=float, metavar="SECONDS")
    return parser


def _add(argv: list[str], out: TextIO, err: TextIO) -> int:
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    parser = _add_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    table: dict[str, object] = {}
    if bool(command) == bool(args.url):
        err.write("picode mcp add: give either -- COMMAND [ARGS...] or --url URL\n" + USAGE)
        return 2
    if command:
        table["command"], table["args"] = command[0], command[1:]
    else:
        table["url"] = args.url
        if args.sse:
            table["transport"] = "sse"
    pairs = _pairs(args.env, "=", "--env", err) if args.env else {}
    headers = _pairs(args.header, ":", "--header", err) if args.header else {}
    if pairs is None or headers is None:
        return 2
    if pairs:
        table["env"] = pairs
    if headers:
        table["headers"] = headers
    if args.timeout is not None:
        table["timeout_s"] = args.timeout
    return _write_server(args.name, table, out, err)


def _pairs(items: list[str], sep: str, flag: str, err: TextIO) -> dict[str, str] | None:
    pairs: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            err.write(f"picode mcp add: {flag} {item!r} must look like KEY{sep}VALUE\n")
            return None
        pairs[key.strip()] = value.strip() if sep == ":" else value
    return pairs


def _write_server(name: str, table: dict[str, object], out: TextIO, err: TextIO) -> int:
    import tomlkit
    from pydantic import ValidationError

    from picode.session.config.mcp import McpSettings
    from picode.session.config.write import ConfigWriteError, edit_user_config
    from picode.session.paths import resolve_paths

    try:
        McpSettings.model_validate({"servers": {name: table}})
    except ValidationError as exc:
        reasons = "; ".join(error["msg"] for error in exc.errors())
        err.write(f"picode mcp add: {reasons}\n")
        return 2
    file = resolve_paths().user_config_file

    def add(document: Any) -> None:
        mcp = document.setdefault("mcp", tomlkit.table(is_super_table=True))
        servers = mcp.setdefault("servers", tomlkit.table(is_super_table=True))
        if name in servers:
            raise ConfigWriteError(f"{file} already has [mcp.servers.{name}]; nothing changed")
        servers[name] = table

    try:
        edit_user_config(file, add)
    except ConfigWriteError as exc:
        err.write(f"picode mcp add: {exc}\n")
        return 1
    out.write(f"Added [mcp.servers.{name}] to {file}\n")
    return 0
