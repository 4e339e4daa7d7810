"""picode's MCP client as the conformance suite's client under test (bench/mcp_conformance.sh).

``python bench/_mcp_conformance_client.py SERVER_URL``, with ``MCP_CONFORMANCE_SCENARIO``
(and, for some, ``MCP_CONFORMANCE_CONTEXT``) set by the suite. It does what picode does
with a configured HTTP server: connect (initialize, list the tools), call each tool once
with arguments made from its schema, and answer a request for input by accepting the form
as it is shown (its defaults). Where the server wants OAuth it first runs ``picode mcp
login``'s flow, with a "browser" that follows the authorization URL without a person
(the suite's authorization server approves at once). Tokens go to a throwaway auth file.
Exit code 0 when every step worked.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx2

from picode.session.config.mcp import McpOAuth, McpServer
from picode.session.mcp.connection import McpConnection
from picode.session.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from picode.session.mcp.oauth import login
from picode.session.models.auth import AuthStore


def log(text: str) -> None:
    print(f"adapter: {text}", file=sys.stderr, flush=True)


async def browser(url: str) -> None:
    """A person who approves: follow the authorization URL; the redirect reaches the
    loopback listener."""
    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as client:
        response = await client.get(url)
        log(f"browser: {response.status_code} from {response.url}")


async def accept_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    """Accept the form untouched: what a person pressing Accept sends (the TUI fills each
    field with its default)."""
    content = {f.name: f.default for f in request.fields if f.default is not None}
    log(f"elicitation: accepting {content}")
    return ElicitationAnswer("accept", content)


def arguments_for(schema: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type") if isinstance(spec, dict) else None
        if "default" in spec:
            values[name] = spec["default"]
        elif kind in ("number", "integer"):
            values[name] = len(values) + 1
        elif kind == "boolean":
            values[name] = True
        elif isinstance(spec.get("enum"), list) and spec["enum"]:
            values[name] = spec["enum"][0]
        else:
            values[name] = "test"
    return values


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = McpOAuth(client_id=context.get("client_id"), client_secret=context.get("client_secret"))
    config = McpServer(url=url, timeout_s=20, oauth=oauth)
    auth = AuthStore(Path(tempfile.mkdtemp(prefix="picode-conformance-")) / "auth.json")
    if scenario.startswith("auth/"):
        await login("conformance", config, auth, browser)
        log("logged in")
    connection = McpConnection(
        "conformance", config, Path.cwd(), lambda: None, auth, accept_defaults
    )
    connection.start()
    await connection.wait_settled()
    if connection.state != "ready":
        log(f"not ready: {connection.state}: {connection.error}")
        await connection.stop()
        return 1
    failed = False
    try:
        for tool in connection.tools:
            arguments = arguments_for(dict(tool.input_schema))
            for attempt in (1, 2):
                try:
                    result = await connection.call(tool.name, arguments)
                except Exception as exc:
                    log(f"{tool.name}{arguments}: {exc}")
                    if attempt == 1 and connection.state == "needs_login":
                        # What the person does when picode says so: /mcp login NAME.
                        await connection.login(browser)
                        continue
                    failed = True
                    break
                text = " ".join(getattr(block, "text", "") for block in result.content)
                log(f"{tool.name}{arguments} -> {text[:200]}")
                break
    finally:
        await connection.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
