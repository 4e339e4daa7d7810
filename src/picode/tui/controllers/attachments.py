"""``@path`` files for a message about to be sent, by the session layer's rule."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from picode.tui.widgets.notice import NoticeLevel

if TYPE_CHECKING:
    from picode.ai.types import UserContent
    from picode.session.agent_session import AgentSession


def mentions_files(text: str) -> bool:
    """Cheap test first: most messages mention no file and need no disk access."""
    if "@" not in text:
        return False
    from picode.tools.attachments import MENTION

    return MENTION.search(text) is not None


async def collect_attachments(
    session: AgentSession,
    text: str,
    report: Callable[[str, NoticeLevel], None],
    restore_text: Callable[[str], None],
    warn: Callable[[str, NoticeLevel], None] | None = None,
) -> list[UserContent] | None:
    """The blocks to send after ``text``; None when a file cannot be sent, said in the
    transcript, with the message given back to the editor so nothing is lost. ``warn``:
    where a file left out is said (under the message, once it shows); else ``report``."""
    if not mentions_files(text):
        return []
    from picode.tools.attachments import AttachmentError, attach_mentions

    try:
        # Off the loop: a large file is counted to its end.
        found = await asyncio.to_thread(attach_mentions, text, session.cwd)
    except AttachmentError as exc:
        report(f"Not sent: {exc}.", "error")
        restore_text(text)
        return None
    for warning in found.warnings:
        (warn or report)(warning, "warning")
    return found.blocks
