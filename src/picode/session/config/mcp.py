"""``[mcp.servers.NAME]`` tables: the MCP servers picode may connect to (docs/mcp.md).

Each server speaks one transport: ``stdio`` (picode starts ``command``), ``http`` (streamable
HTTP at ``url``) or ``sse`` (older servers that only offer server-sent events). The transport
follows from the keys given unless ``transport`` names it.
"""

from __future__ import annotations

import re
from typing import Literal, Self, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["McpOAuth", "McpServer", "McpSettings", "McpToolFilter", "Transport"]

Transport: TypeAlias = Literal["stdio", "http", "sse"]
#: Names become part of tool names (``mcp__<server>__<tool>``), which providers restrict.
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")


class McpToolFilter(_Table):
    allow: list[str] | None = None
    """Only these tools are offered to the model (all when unset)."""
    deny: list[str] = Field(default_factory=list)
    """Never offered, even when allowed."""
    approved: list[str] = Field(default_factory=list)
    """Run without asking even when approval = "all"."""

    def offers(self, tool: str) -> bool:
        allowed = self.allow is None or tool in self.allow
        return allowed and tool not in self.deny


class McpOAuth(_Table):
    """How picode logs in to an HTTP server that asks for OAuth (docs/mcp.md "OAuth")."""

    enabled: bool = True
    """``oauth = false`` is ``enabled = false``: never log in."""
    client_id: str | None = Field(default=None, min_length=1)
    """A client registered with the authorization server beforehand; without it picode
    registers itself (dynamic client registration)."""
    client_secret: str | None = Field(default=None, min_length=1)
    """The secret of ``client_id``, when the server gave it one."""
    secret_method: Literal["client_secret_basic", "client_secret_post"] | None = None
    """How the secret is sent; by default as the authorization server's metadata says
    (HTTP Basic unless it lists only client_secret_post)."""
    scopes: list[str] | None = None
    """The scopes asked for; the server's own choice when unset."""
    redirect_port: int | None = Field(default=None, ge=1, le=65535)
    """The loopback port the browser is sent back to (any free port when unset)."""

    @model_validator(mode="after")
    def _secret_needs_id(self) -> Self:
        if self.client_secret and not self.client_id:
            raise ValueError("client_secret needs client_id")
        return self


class McpServer(_Table):
    transport: Transport | None = None
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(default=None, min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    timeout_s: float = Field(default=60.0, gt=0)
    """How long one tool call (and the connection) may take."""
    tools: McpToolFilter = Field(default_factory=McpToolFilter)
    oauth: McpOAuth = Field(default_factory=McpOAuth)
    """How to log in; ``oauth = false``: never (a server answering 401 fails)."""

    @field_validator("oauth", mode="before")
    @classmethod
    def _oauth_switch(cls, value: object) -> object:
        return {"enabled": value} if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if self.command and self.url:
            raise ValueError("give either command (stdio) or url (http/sse), not both")
        if not self.command and not self.url:
            raise ValueError("needs command (a stdio server) or url (an http or sse server)")
        if self.transport == "stdio" and not self.command:
            raise ValueError('transport = "stdio" needs command')
        if self.transport in ("http", "sse") and not self.url:
            raise ValueError(f'transport = "{self.transport}" needs url')
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https:// (got {self.url!r})")
        return self

    @property
    def kind(self) -> Transport:
        if self.transport is not None:
            return self.transport
        return "stdio" if self.command else "http"

    @property
    def login(self) -> McpOAuth | None:
        """How to log in, or None: a stdio server, ``oauth = false``, or an Authorization
        header given in ``headers`` (that is the server's credential then)."""
        if self.kind == "stdio" or not self.oauth.enabled:
            return None
        if any(name.lower() == "authorization" for name in self.headers):
            return None
        return self.oauth


class McpSettings(_Table):
    servers: dict[str, McpServer] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServer]) -> dict[str, McpServer]:
        for name in servers:
            if not _SERVER_NAME.match(name) or "__" in name:
                raise ValueError(
                    f"server name {name!r} must be 1-40 letters, digits, '-' or '_' "
                    "without '__' (it becomes part of tool names)"
                )
        return servers
