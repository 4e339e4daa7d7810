"""File helpers shared by read, write and edit: atomic writes and text/binary sniffing."""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from picode.agent.tool import ToolError

UTF8_BOM = b"\xef\xbb\xbf"
#: How much of a file is inspected to decide whether it is text.
SNIFF_BYTES = 8192


@dataclass(slots=True)
class Decoded:
    """A file's text as edit works on it, and how to write it back the same way (BOM, CRLF)."""

    text: str
    bom: bool
    crlf: bool

    @classmethod
    def from_bytes(cls, data: bytes, shown: str) -> Decoded:
        bom = data.startswith(UTF8_BOM)
        if bom:
            data = data[len(UTF8_BOM) :]
        if b"\x00" in data:
            raise ToolError(
                f"{shown} looks like a binary file (it contains NUL bytes); not edited."
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(
                f"{shown} is not valid UTF-8 (byte {exc.start}); edit only changes UTF-8 text."
            ) from None
        crlf_count = text.count("\r\n")
        # Only a file that uses CRLF throughout is worked on as LF and converted back;
        # a mixed file is edited as is, so untouched lines keep their endings.
        crlf = crlf_count > 0 and crlf_count == text.count("\n")
        if crlf:
            text = text.replace("\r\n", "\n")
        return cls(text, bom, crlf)

    def encode(self, text: str) -> bytes:
        if self.crlf:
            text = text.replace("\n", "\r\n")
        return (UTF8_BOM if self.bom else b"") + text.encode("utf-8", "replace")


def binary_reason(sample: bytes) -> str | None:
    """Why ``sample`` (a file's first bytes) is not UTF-8 text, or None when it is."""
    if b"\x00" in sample:
        return "it contains NUL bytes"
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        # final=False: the sample may end inside a multi-byte character.
        decoder.decode(sample, final=False)
    except UnicodeDecodeError as exc:
        return f"it is not valid UTF-8 (byte {exc.start})"
    return None


def atomic_write(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` through a temp file in the same folder and ``os.replace``.

    Keeps an existing file's permission bits; a symlink is followed so the link survives.
    Creates missing parent folders. Returns True when the file did not exist before.
    """
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        existing_mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except (FileNotFoundError, NotADirectoryError):
        existing_mode = None
    if target.is_dir():
        raise ToolError(f"{path} is a directory, not a file.")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(
            f"Cannot create the folder for {path}: part of its path is a file."
        ) from None
    except OSError as exc:
        raise ToolError(f"Cannot create the folder for {path}: {exc.strerror or exc}.") from None

    try:
        fd, temp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
        )
    except OSError as exc:
        raise ToolError(f"Cannot write {path}: {exc.strerror or exc}.") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        mode = existing_mode if existing_mode is not None else 0o666 & ~_umask()
        os.chmod(temp_name, mode)
        os.replace(temp_name, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise ToolError(f"Cannot write {path}: {exc.strerror or exc}.") from None
    return existing_mode is None


@functools.cache
def _umask() -> int:
    # There is no way to read the umask without setting it; do it once.
    current = os.umask(0o022)
    os.umask(current)
    return current


def format_size(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} kB"
    return f"{count / (1024 * 1024):.1f} MB"
