"""The cache file of a sliced module's index (``picode.ai.slice_index`` builds it).

``MAGIC``, a CRC-32 of the rest, the header's length, the header (JSON: the key, and per
statement what it binds, needs and where its code is), then each statement's code
(``marshal``). A file that does not check out in every part is not used."""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import zlib
from typing import Any

MAGIC = b"PICODE-SLICE\x00\x01"
_PREFIX = struct.Struct("<II")  # CRC-32 of what follows it, header length


def source_key(origin: str) -> list[Any]:
    """What an index is valid for: the file (path, size, change time) and the bytecode."""
    info = os.stat(origin)
    return [origin, info.st_size, info.st_mtime_ns, importlib.util.MAGIC_NUMBER.hex()]


def encode(header: dict[str, Any], blob: bytes) -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    rest = struct.pack("<I", len(text)) + text + blob
    return MAGIC + struct.pack("<I", zlib.crc32(rest)) + rest


def decode(data: bytes) -> tuple[dict[str, Any], memoryview]:
    """The header and code of a cache file; ValueError if it is not whole and well formed."""
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _PREFIX.size:
        raise ValueError("not a slice index")
    crc, length = _PREFIX.unpack_from(data, len(MAGIC))
    if zlib.crc32(memoryview(data)[len(MAGIC) + 4 :]) != crc:
        raise ValueError("damaged slice index")
    start = len(MAGIC) + _PREFIX.size
    header = json.loads(bytes(data[start : start + length]))
    blob = memoryview(data)[start + length :]
    try:
        _check(header, len(blob))
    except (TypeError, AttributeError) as exc:
        raise ValueError("not a slice index") from exc
    return header, blob


def _check(header: Any, size: int) -> None:
    """The header's shape, so that a reader can take it as it is."""
    if not isinstance(header, dict):
        raise ValueError("not a slice index")
    spans, deps, binds = header.get("spans"), header.get("deps"), header.get("binds")
    if not isinstance(spans, list) or not isinstance(deps, list) or len(deps) != len(spans):
        raise ValueError("not a slice index")
    always, skip = header.get("always"), header.get("skip")
    if not isinstance(binds, dict) or not isinstance(always, list) or not isinstance(skip, list):
        raise ValueError("not a slice index")
    count = len(spans)
    indexes = [*always, *skip]
    for positions in [*binds.values(), *deps]:
        indexes.extend(positions)
    if not all(isinstance(i, int) and 0 <= i < count for i in indexes):
        raise ValueError("not a slice index")
    for span in spans:
        start, length = span
        if not (isinstance(start, int) and isinstance(length, int) and start + length <= size):
            raise ValueError("not a slice index")
