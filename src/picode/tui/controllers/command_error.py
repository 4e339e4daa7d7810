"""The one exception command handlers raise for a person's mistake, and the check most
commands start with."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import CommandHost


class CommandError(Exception):
    """A command could not run as typed; the message says why (the text goes back)."""


def session_of(host: CommandHost) -> AgentSession:
    """The open session; CommandError while it is still starting."""
    session = host.session
    if session is None:
        raise CommandError("The session is still starting; try again in a moment.")
    return session
