"""What a tool needs to make requests to the client on behalf of its session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class SessionLink:
    #: The connection to the client (``acp`` AgentSideConnection).
    conn: Any
    #: The ACP session every request names; set once the session is open.
    session_id: str = ""
