"""The cache file: entries of a few kinds, each a key and marshal data, read through a
memory map so that start-up holds an index rather than the entries themselves.

Layout: ``PCC1``, the header's length (4 bytes, little-endian), the header (marshal: per
kind, each key's place in the data that follows, ``offset << 32 | length``, and how many
saves in a row no process used it; the data's CRC-32), then the data. The header is used as
loaded, each place checked when it is read: start-up makes one object per key, not four.
A file whose data does not match its CRC is not used: damaged engine code could still be
valid code for another pattern. Written whole to a temporary file and renamed over the old
one: a process still reading the old file keeps its own map of it.
"""

from __future__ import annotations

import contextlib
import marshal
import mmap
import os
import struct
import threading
import zlib
from collections.abc import Hashable
from pathlib import Path
from typing import Any

MAGIC = b"PCC1"
_HEAD = struct.Struct("<4sI")
#: An entry no process used in this many saves in a row is dropped: the classes and patterns
#: of older picode or library versions, and texts that differ in every process (the
#: standard tokenizer's pattern is built from a set), do not pile up.
KEEP_UNUSED_SAVES = 8
#: Per kind, beyond this many entries the file keeps this process's alone.
MAX_ENTRIES = 4000


class Store:
    """Key → bytes per kind: what the file held, what this process added, what it used."""

    def __init__(self, path: Path, kinds: tuple[str, ...]) -> None:
        self.path = path
        self.kinds = kinds
        self._map: mmap.mmap | None = None
        self._index: dict[str, dict[Any, Any]] = {kind: {} for kind in kinds}
        self._data_start = 0
        self._unused: dict[str, dict[Any, int]] = {kind: {} for kind in kinds}
        self._new: dict[str, dict[Any, bytes]] = {kind: {} for kind in kinds}
        self._used: dict[str, set[Any]] = {kind: set() for kind in kinds}
        self._lock = threading.Lock()
        #: Entries added since the last save.
        self.added = 0
        self._open()

    def get(self, kind: str, key: Hashable) -> bytes | None:
        """The data kept for ``key``, which this process then counts as used."""
        data = self._new[kind].get(key)
        if data is None:
            place = self._index[kind].get(key)
            if type(place) is not int or place < 0 or self._map is None:
                return None
            start = self._data_start + (place >> 32)
            end = start + (place & 0xFFFFFFFF)
            if end > len(self._map):
                return None
            data = self._map[start:end]
        self._used[kind].add(key)
        return data

    def put(self, kind: str, key: Hashable, data: bytes) -> None:
        with self._lock:
            self._new[kind][key] = data
            self._used[kind].add(key)
            self.added += 1

    def drop(self, kind: str, key: Hashable) -> None:
        with self._lock:
            self._index[kind].pop(key, None)
            self._new[kind].pop(key, None)

    def keys(self, kind: str) -> set[Any]:
        return {*self._index[kind], *self._new[kind]}

    # --- the file -------------------------------------------------------------------------

    def save(self) -> None:
        """Write the file back if anything was added since it was read or last saved."""
        with self._lock:
            if not self.added:
                return
            header: dict[str, Any] = {"index": {}, "unused": {}}
            chunks: list[bytes] = []
            offset = 0
            for kind in self.kinds:
                index: dict[Any, int] = {}
                unused: dict[Any, int] = {}
                header["index"][kind] = index
                header["unused"][kind] = unused
                for key, count in self._kept(kind).items():
                    data = self.get_quietly(kind, key)
                    if data is None:
                        continue
                    index[key] = offset << 32 | len(data)
                    unused[key] = count
                    chunks.append(data)
                    offset += len(data)
            self.added = 0
        header["crc"] = _crc(chunks)
        head = marshal.dumps(header)
        temporary = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(temporary, "wb") as file:
                file.write(_HEAD.pack(MAGIC, len(head)))
                file.write(head)
                file.writelines(chunks)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                temporary.unlink()

    def get_quietly(self, kind: str, key: Hashable) -> bytes | None:
        """``get`` without counting the entry as used."""
        used = key in self._used[kind]
        data = self.get(kind, key)
        if not used:
            self._used[kind].discard(key)
        return data

    def close(self) -> None:
        """Let go of the map and the index."""
        with self._lock:
            if self._map is not None:
                self._map.close()
                self._map = None
            for kind in self.kinds:
                self._index[kind] = {}
                self._new[kind] = {}
                self._unused[kind] = {}

    def _kept(self, kind: str) -> dict[Any, int]:
        """Keys to write and the saves since each was last used (a process counts once,
        however often it saves)."""
        used, before = self._used[kind], self._unused[kind]
        unused = {key: 0 if key in used else _count(before.get(key)) + 1 for key in self.keys(kind)}
        kept = {key: count for key, count in unused.items() if count <= KEEP_UNUSED_SAVES}
        if len(kept) > MAX_ENTRIES:
            kept = {key: count for key, count in kept.items() if key in used}
        return kept

    def _open(self) -> None:
        try:
            with open(self.path, "rb") as file:
                mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # no file, or an empty one
            return
        try:
            magic, length = _HEAD.unpack_from(mapped, 0)
            if magic != MAGIC:
                raise ValueError("not a cache file")
            body = _HEAD.size + length
            header = marshal.loads(mapped[_HEAD.size : body])
            index, unused = _checked(header, self.kinds)
            with memoryview(mapped) as view, view[body:] as data:
                if zlib.crc32(data) != header.get("crc"):
                    raise ValueError("the data does not match its CRC")
        except (struct.error, EOFError, ValueError, TypeError):
            mapped.close()
            return
        self._map = mapped
        self._data_start = body
        self._index = index
        self._unused = unused


def _count(value: object) -> int:
    return value if type(value) is int else 0


def _crc(chunks: list[bytes]) -> int:
    crc = 0
    for chunk in chunks:
        crc = zlib.crc32(chunk, crc)
    return crc


def _checked(
    header: Any, kinds: tuple[str, ...]
) -> tuple[dict[str, dict[Any, Any]], dict[str, dict[Any, Any]]]:
    """The header's index and counts per kind, as loaded; ValueError if it has no such
    shape (each place is checked as it is read)."""
    if not isinstance(header, dict):
        raise ValueError("no header")
    index, unused = header.get("index"), header.get("unused")
    if not isinstance(index, dict) or not isinstance(unused, dict):
        raise ValueError("no index")
    for kind in kinds:
        index.setdefault(kind, {})
        unused.setdefault(kind, {})
        if not isinstance(index[kind], dict) or not isinstance(unused[kind], dict):
            raise ValueError(f"no index for {kind}")
    return index, unused
