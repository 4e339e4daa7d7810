"""The reply being streamed, kept beside its session file until it ends.

A message reaches the session file when it ends (docs/sessions.md, "Durability"): a crash,
a ``kill -9`` or a closed terminal in the middle of a long reply would lose all of it. So
while a reply streams, what has arrived is written once a second to
``<session>.jsonl.draft`` (replaced whole, never torn; masked like every entry) and removed
when the reply ends. Opening the session finds a draft left behind and keeps it as the
reply, cut short, where it was: its text and thinking, not the tool calls it had begun.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
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
    """Writes the streaming reply of one session file ``interval`` seconds after it began,
    then again each ``interval`` while it streams (also while it stalls): from a timer, so
    the deltas' path does no more than keep a reference, and a reply shorter than the
    interval leaves no file behind at all."""

    def __init__(self, *, interval: float | None = None) -> None:
        self._interval = DRAFT_INTERVAL_S if interval is None else interval
        self._file: SessionFile | None = None
        self._reply: AssistantMessage | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._path: Path | None = None
        self._warned = False

    def update(self, file: SessionFile, reply: AssistantMessage) -> None:
        self._file, self._reply = file, reply
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._interval, self._write)

    def _write(self) -> None:
        file, reply = self._file, self._reply
        if file is None or reply is None:
            self._timer = None
            return
        self._timer = asyncio.get_running_loop().call_later(self._interval, self._write)
        if not file.persisted:
            return
        path = draft_path(file.path)
        draft = {"after": file.leaf_id, "message": message_to_dict(reply)}
        text, _ = redact_secrets(dump_json(draft))
        try:
            _write_whole(path, text.encode("utf-8"))
        except OSError as exc:
            # The reply is still written when it ends; only the crash insurance is lost.
            if not self._warned:
                self._warned = True
                log.warning("could not keep the streaming reply in %s: %s", path, exc)
            return
        self._path = path

    def discard(self) -> None:
        """The reply ended (and is in the file) or was dropped: the draft goes."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._file = self._reply = None
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
    except FileNotFoundError:
        raw = b""  # none, or only a write cut short
    except OSError:
        return None  # unreadable now: left for a later open
    message = _kept_part(raw, file) if raw else None
    if message is not None:
        file.append_message(message)
    # After the append: a stop in between leaves a draft that no longer follows the leaf.
    for left in (path, _temporary(path)):
        with contextlib.suppress(OSError):
            left.unlink()
    return message


def _kept_part(raw: bytes, file: SessionFile) -> AssistantMessage | None:
    try:
        draft = json.loads(raw)
        message = message_from_dict(draft["message"])
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(message, AssistantMessage) or not _follows(file, draft.get("after")):
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


def _follows(file: SessionFile, after: object) -> bool:
    """No message was written after ``after``: only bookkeeping (a checkpoint's mark, a
    model change) may have come between it and the file's last entry."""
    entry_id = file.leaf_id
    while entry_id is not None and entry_id != after:
        if file.entry_type(entry_id) in (None, "message"):
            return False
        entry_id = file.parent_of(entry_id)
    return entry_id == after


def _said(block: TextContent | ThinkingContent) -> bool:
    return bool((block.text if isinstance(block, TextContent) else block.thinking).strip())


def _temporary(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def _write_whole(path: Path, data: bytes) -> None:
    temporary = _temporary(path)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(temporary, path)
