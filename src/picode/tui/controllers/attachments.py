"""``@path`` files for a message about to be sent, by the session layer's rule."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol

from picode.tui.widgets.notice import NoticeLevel

if TYPE_CHECKING:
    from picode.ai.types import UserContent
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import Reporter


def mentions_files(text: str) -> bool:
    """Cheap test first: most messages mention no file and need no disk access."""
    if "@" not in text:
        return False
    from picode.tools.attachments import MENTION

    return MENTION.search(text) is not None


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class MessageNotes(Protocol):
        def note_for_next_message(self, text: str, level: NoticeLevel) -> None:
            """Said under the message, once it shows."""
            ...


async def collect_attachments(
    session: AgentSession, text: str, host: Reporter, notes: MessageNotes
) -> list[UserContent] | None:
    """The blocks to send after ``text``; None when a file cannot be sent, said in the
    transcript, with the message given back to the editor so nothing is lost. A file left
    out is said in ``notes``."""
    if not mentions_files(text):
        return []
    from picode.tools.attachments import AttachmentError, attach_mentions

    try:
        # Off the loop: a large file is counted to its end.
        found = await asyncio.to_thread(attach_mentions, text, session.cwd)
    except AttachmentError as exc:
        host.report(f"Not sent: {exc}.", "error")
        host.restore_text(text)
        return None
    for warning in found.warnings:
        notes.note_for_next_message(warning, "warning")
    return found.blocks
