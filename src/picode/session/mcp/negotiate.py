"""Which protocol revision a connection speaks: the handshake first, ``server/discover`` after.

The ``mcp`` SDK's own policy (``Client(mode="auto")``) asks ``server/discover`` first, so a
server that speaks both the handshake revisions and 2026-07-28 is used at 2026-07-28. picode
drives a bare ``ClientSession``, and at 2026-07-28 that session cannot do what picode relies
on: a server asks for input through ``InputRequiredResult`` rounds that only the SDK's
``Client`` drives, list-changed notifications need a ``subscriptions/listen`` stream, and
cancellation is closing the request. So the handshake comes first and keeps every server
that speaks it exactly as before; only a server that refuses it (one that speaks nothing but
2026-07-28) is asked ``server/discover``, through the session's public ``discover()``.
"""

from __future__ import annotations

from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError


async def negotiate(session: ClientSession) -> types.ServerCapabilities:
    """Agree on a revision with the server; what it offers, from the result agreed on.

    A refused handshake whose ``server/discover`` fails as well is reported as the
    handshake's error: the server is most likely a handshake server that is broken.
    Transport failures (no answer, connection lost) are not refusals and go through as is.
    """
    try:
        await session.initialize()
    except MCPError as refused:
        try:
            await session.discover()
        except (MCPError, RuntimeError, ValueError):  # refused, no common revision, garbled
            raise refused from None
    offers = session.server_capabilities
    if offers is None:  # pragma: no cover - both initialize() and discover() set it
        raise RuntimeError("the server did not say what it offers")
    return offers
