"""One pass over a session file: line offsets and the tree's shape, without parsing JSON.

Only the header, torn or odd-looking lines are handed to ``json.loads``; every other line
is recognised by a regex on its fixed-order prefix.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from picode.session.store.format import (
    ENTRY_PREFIX,
    ENTRY_TYPES,
    FORMAT_VERSION,
    HEADER_PREFIX,
    loads_line,
    session_id_from_name,
)

_NEWLINE = 0x0A
_CARRIAGE_RETURN = 0x0D
_CLOSING_BRACE = 0x7D


@dataclass(slots=True)
class Slot:
    """Where one entry's line lives; ``offset`` is -1 while the entry is not on disk yet."""

    offset: int
    length: int
    parent_id: str | None
    type: str
    line: int


@dataclass(slots=True)
class ScanResult:
    header: dict[str, Any] | None = None
    slots: dict[str, Slot] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    size: int = 0
    needs_newline: bool = False
    line_count: int = 0


def scan_file(path: Path) -> ScanResult:
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return ScanResult()
        try:
            view: Any = _map(handle.fileno())
        except (OSError, ValueError):
            view = handle.read()
        try:
            return _scan(view, size, path.name)
        finally:
            if isinstance(view, mmap.mmap):
                view.close()


def _map(fd: int) -> mmap.mmap:
    # Pre-faulting the pages in one go is much cheaper than a page fault per 4 kB read.
    populate = getattr(mmap, "MAP_POPULATE", 0)
    if populate and hasattr(mmap, "MAP_SHARED") and hasattr(mmap, "PROT_READ"):
        return mmap.mmap(fd, 0, flags=mmap.MAP_SHARED | populate, prot=mmap.PROT_READ)
    return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)


def _scan(buf: Any, size: int, name: str) -> ScanResult:
    result = ScanResult(size=size)
    slots = result.slots
    order = result.order
    warnings = result.warnings
    find = buf.find
    match = ENTRY_PREFIX.match
    kinds = {kind.encode(): kind for kind in ENTRY_TYPES}
    pos = 0
    line_no = 0
    previous: str | None = None
    while pos < size:
        end = find(b"\n", pos)
        complete = end >= 0
        if not complete:
            end = size
        line_no += 1
        stop = end
        if stop > pos and buf[stop - 1] == _CARRIAGE_RETURN:
            stop -= 1
        start = pos
        pos = end + 1
        if stop == start:
            continue
        if (
            result.header is None
            and not order
            and buf[start : start + len(HEADER_PREFIX)] == HEADER_PREFIX
        ):
            result.header = _parse_header(buf[start:stop], line_no, name, warnings)
            if result.header is not None:
                continue
        found = match(buf, start, stop)
        if found is not None and complete and buf[stop - 1] == _CLOSING_BRACE:
            raw_kind, raw_id, raw_parent, _ = found.groups()
            found = None  # a live match pins the mmap's buffer
            kind = kinds.get(raw_kind) or raw_kind.decode()
            entry_id = raw_id.decode()
            parent_id = raw_parent.decode() if raw_parent is not None else None
        else:
            found = None
            parsed = _parse_odd_line(buf[start:stop], line_no, complete, name, warnings)
            if parsed is None:
                continue
            kind, entry_id, parent_id = parsed
        if entry_id in slots:
            warnings.append(f"{name} line {line_no}: duplicate entry id {entry_id}; skipped")
            continue
        if parent_id is not None and parent_id not in slots:
            warnings.append(
                f"{name} line {line_no}: parent entry {parent_id} is missing; "
                "attached to the entry before it"
            )
            parent_id = previous
        if kind not in ENTRY_TYPES:
            warnings.append(f"{name} line {line_no}: unknown entry type {kind!r}; kept, unused")
        slots[entry_id] = Slot(start, stop - start, parent_id, kind, line_no)
        order.append(entry_id)
        previous = entry_id
    result.line_count = line_no
    result.needs_newline = buf[size - 1] != _NEWLINE
    return result


def _parse_header(
    raw: bytes, line_no: int, name: str, warnings: list[str]
) -> dict[str, Any] | None:
    try:
        header, _ = loads_line(raw)
    except ValueError:
        warnings.append(f"{name} line {line_no}: session header is not valid JSON; skipped")
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        warnings.append(f"{name} line {line_no}: session header is malformed; skipped")
        return None
    return header


def _parse_odd_line(
    raw: bytes, line_no: int, complete: bool, name: str, warnings: list[str]
) -> tuple[str, str, str | None] | None:
    """A line the fast path did not accept: maybe valid JSON in another key order, maybe junk."""
    try:
        obj, repaired = loads_line(raw)
    except ValueError:
        if not complete:
            warnings.append(
                f"{name} line {line_no}: incomplete last line (writing was interrupted); skipped"
            )
        else:
            warnings.append(f"{name} line {line_no}: not valid JSON; skipped")
        return None
    if (
        not isinstance(obj, dict)
        or not isinstance(obj.get("type"), str)
        or not isinstance(obj.get("id"), str)
        or not obj["id"]
    ):
        warnings.append(f"{name} line {line_no}: not a session entry; skipped")
        return None
    if repaired:
        warnings.append(f"{name} line {line_no}: {repaired}; the rest of the line is kept")
    parent = obj.get("parent_id")
    return obj["type"], obj["id"], parent if isinstance(parent, str) else None


def read_slots(path: Path, ordered: list[tuple[str, Slot]]) -> dict[str, bytes]:
    """The lines of ``ordered`` (sorted by offset), read with as few reads as sensible."""
    out: dict[str, bytes] = {}
    with open(path, "rb", buffering=0) as handle:
        span_start = ordered[0][1].offset
        span_end = ordered[-1][1].offset + ordered[-1][1].length
        needed = sum(slot.length for _, slot in ordered)
        if span_end - span_start <= 2 * needed + 65536:
            # Close together (the usual tail of a session): one read covers them all.
            handle.seek(span_start)
            block = handle.read(span_end - span_start)
            for entry_id, slot in ordered:
                begin = slot.offset - span_start
                out[entry_id] = block[begin : begin + slot.length]
        else:
            for entry_id, slot in ordered:
                handle.seek(slot.offset)
                out[entry_id] = handle.read(slot.length)
    return out


def line_prefix(line: bytes) -> tuple[str, str, str | None] | None:
    """``(type, id, parent_id)`` of a canonical entry line, or None."""
    found = ENTRY_PREFIX.match(line)
    if found is None:
        return None
    parent = found.group(3)
    return found.group(1).decode(), found.group(2).decode(), parent.decode() if parent else None


def fallback_header(path: Path) -> dict[str, Any]:
    """A header for a file that lost its own: id from the file name, cwd from the folder."""
    try:
        modified = int(path.stat().st_mtime * 1000)
    except OSError:
        modified = 0
    folder = path.parent.name
    guessed_cwd = "/" + folder.strip("-").replace("-", "/") if folder.startswith("--") else ""
    return {
        "type": "session",
        "version": FORMAT_VERSION,
        "id": session_id_from_name(path.name) or path.stem,
        "timestamp": modified,
        "cwd": guessed_cwd,
    }
