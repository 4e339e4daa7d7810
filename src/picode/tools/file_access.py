"""Where read, write and edit get a file's bytes and put new ones.

The disk is the default. A front end that hosts picode inside an editor passes its own
implementation so the tools see the editor's unsaved buffers and the editor sees the writes
(``--mode acp`` with a client offering ``fs/read_text_file`` / ``fs/write_text_file``).
Paths are absolute (the tools resolve them against their working folder first). Failures
are ``OSError`` (the tool words it, naming the path as the model gave it) or ``ToolError``
with a message the model can act on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import BinaryIO, Protocol

from picode.tools._files import atomic_write


class FileAccess(Protocol):
    async def open_read(self, path: Path) -> BinaryIO:
        """The file's content from its start; the caller closes it. A disk file is streamed,
        so a huge one is never held in memory whole."""
        ...

    async def write(self, path: Path, data: bytes) -> bool:
        """Replace the whole file (creating it and its folders); True when it is new."""
        ...


class DiskFiles:
    async def open_read(self, path: Path) -> BinaryIO:
        return await asyncio.to_thread(path.open, "rb")

    async def write(self, path: Path, data: bytes) -> bool:
        return await asyncio.to_thread(atomic_write, path, data)


DISK = DiskFiles()
