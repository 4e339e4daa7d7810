"""File contents through the editor when it offers ``fs/read_text_file`` / ``fs/write_text_file``.

The tools then see unsaved buffers and the editor sees (and can undo) every change. The
editor serves text only: images and binary files are still read from the disk, as is
anything the client did not offer.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import BinaryIO

from acp import RequestError

from picode.agent.tool import ToolError
from picode.modes.acp.link import SessionLink
from picode.tools import DISK
from picode.tools._files import SNIFF_BYTES, binary_reason
from picode.tools.read import image_mime_type


class ClientFiles:
    def __init__(self, link: SessionLink, *, read: bool, write: bool) -> None:
        self.link = link
        self.reads_through = read
        self.writes_through = write

    async def open_read(self, path: Path) -> BinaryIO:
        if not self.reads_through or not await asyncio.to_thread(_text_or_absent, path):
            return await DISK.open_read(path)
        try:
            response = await self.link.conn.read_text_file(
                session_id=self.link.session_id, path=str(path)
            )
        except RequestError as exc:
            raise ToolError(f"The editor could not read {path}: {_why(exc)}") from None
        return io.BytesIO(response.content.encode("utf-8"))

    async def write(self, path: Path, data: bytes) -> bool:
        if not self.writes_through:
            return await DISK.write(path, data)
        created = not await asyncio.to_thread(path.exists)
        text = data.decode("utf-8", "replace")
        try:
            await self.link.conn.write_text_file(
                session_id=self.link.session_id, path=str(path), content=text
            )
        except RequestError as exc:
            raise ToolError(f"The editor could not write {path}: {_why(exc)}") from None
        return created


def _text_or_absent(path: Path) -> bool:
    """False for a file on disk that is an image or binary (the editor cannot serve it)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES)
    except OSError:
        return True
    return image_mime_type(head) is None and binary_reason(head) is None


def _why(error: RequestError) -> str:
    data = error.data
    if isinstance(data, dict):
        detail = data.get("message") or data.get("details")
        if detail:
            return str(detail)
    return str(error)
