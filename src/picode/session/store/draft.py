"""The reply being streamed, kept beside its session file until it ends.

A message reaches the session file when it ends (docs/sessions.md, "Durability"): a crash,
a ``kill -9`` or a closed terminal in the middle of a long reply would lose all of it. So
while a reply streams, what has arrived is written at most once a second to
``<session>.jsonl.draft`` (replaced whole, never torn; masked like every entry) and removed
when the reply ends. Opening the session finds a draft left behind and keeps it as the
reply, cut short, where it was: its text and thinking, not the tool calls it had begun.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

from picode.ai.types import (
    AssistantContent,
    AssistantMessage,
    TextContent,
    ThinkingContent,
    message_from_dict,
    message_to_dict,
)
from picode.session.store.file import SessionFile
from picode.session.store.format import dump_json, redact_secrets

log = logging.getLogger(__name__)

DRAFT_SUFFIX = ".draft"
#: The most a crash loses of a streaming reply.
DRAFT_INTERVAL_S = 1.0
#: The recovered reply's ``error_message``: what the transcript says under it.
RECOVERED_TEXT = "picode stopped before this reply ended; what had arrived is kept"


def draft_path(session_path: Path) -> Path:
    return session_path.with_name(session_path.name + DRAFT_SUFFIX)


class ReplyDraft:
    """Writes the streaming reply of one session file, at most every ``interval`` seconds."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, interval: float | None = None
    ) -> None:
        self._clock = clock
        self._interval = DRAFT_INTERVAL_S if interval is None else interval
        self._written_at = -math.inf
        self._path: Path | None = None

    def update(self, file: SessionFile, message: AssistantMessage) -> None:
        now = self._clock()
        if now - self._written_at < self._interval or not file.persisted:
            return
        self._written_at = now
        path = draft_path(file.path)
        draft = {"after": file.leaf_id, "message": message_to_dict(message)}
        text, _ = redact_secrets(dump_json(draft))
        try:
            _write_whole(path, text.encode("utf-8"))
        except OSError as exc:
            # The reply is still written when it ends; only the crash insurance is lost.
            log.warning("could not keep the streaming reply in %s: %s", path, exc)
            return
        self._path = path

    def discard(self) -> None:
        """The reply ended (and is in the file) or was dropped: the draft goes."""
        self._written_at = -math.inf
        path, self._path = self._path, None
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()


def recover_draft(file: SessionFile) -> AssistantMessage | None:
    """Keep a reply left in a draft by a picode that stopped while it streamed: appended to
    ``file`` as a reply cut short, if nothing was written after it. The draft goes either
    way. Call with the session's lock held."""
    path = draft_path(file.path)
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    message = _kept_part(raw, file.leaf_id)
    if message is not None:
        file.append_message(message)
    # After the append: a stop in between leaves a draft that no longer follows the leaf.
    with contextlib.suppress(OSError):
        path.unlink()
    return message


def _kept_part(raw: bytes, leaf_id: str | None) -> AssistantMessage | None:
    try:
        draft = json.loads(raw)
        message = message_from_dict(draft["message"])
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(message, AssistantMessage) or draft.get("after") != leaf_id:
        return None
    # A tool call cut short has arguments half written and no result: left out.
    kept: list[AssistantContent] = [
        block
        for block in message.content
        if isinstance(block, TextContent | ThinkingContent) and _said(block)
    ]
    if not kept:
        return None
    message.content = kept
    message.stop_reason = "aborted"
    message.error_message = RECOVERED_TEXT
    return message


def _said(block: TextContent | ThinkingContent) -> bool:
    return bool((block.text if isinstance(block, TextContent) else block.thinking).strip())


def _write_whole(path: Path, data: bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(temporary, path)
