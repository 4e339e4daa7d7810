"""Session summaries for the picker, without parsing whole files.

Each cwd folder keeps ``.index.json``: per file its size, mtime and what was learnt from
it. A file whose size and mtime are unchanged costs one ``stat``; a file that grew is read
only from where the last scan stopped (sessions are append-only); a new file is scanned
once with byte searches, parsing just its header, first user message and latest name.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from picode.agent.file_blocks import split_attachments
from picode.ai.types import UserMessage, message_from_dict
from picode.session.store.format import (
    ENTRY_PREFIX,
    HEADER_PREFIX,
    INFO_LINE_START,
    MESSAGE_LINE_START,
    as_typed,
    session_id_from_name,
)

INDEX_FILE_NAME = ".index.json"
#: 2: a first message is what was typed, its attached files as @path (no file contents).
#: 3: a subagent's session says whose it is (``subagent_of``).
#: 4: a file the text already names (``@path`` typed) is not named twice.
_INDEX_VERSION = 4
_CHUNK = 8 << 20
_FIRST_MESSAGE_CHARS = 200
_USER_MARK = b'"message":{"role":"user"'
_COUNTED_LINE = re.compile(rb'\n\{"type":"(message|session_info)",')


@dataclass(slots=True)
class SessionSummary:
    id: str
    path: Path
    cwd: Path
    created: int
    """Milliseconds since the epoch (from the header)."""
    modified: int
    """Milliseconds since the epoch (the file's mtime)."""
    name: str | None
    first_message: str | None
    """The first user message's text, at most 200 characters."""
    message_count: int
    size_bytes: int
    subagent_of: str | None = None
    """A subagent's session: the id of the session whose ``task`` call ran it."""


def summarize_folder(folder: Path) -> list[SessionSummary]:
    cache = _load_index(folder)
    fresh: dict[str, dict[str, Any]] = {}
    changed = False
    try:
        listing = os.scandir(folder)
    except OSError:
        return []
    with listing:
        for item in listing:
            if not item.name.endswith(".jsonl"):
                continue
            try:
                if not item.is_file():
                    continue
                st = item.stat()
            except OSError:
                continue
            record = cache.get(item.name)
            if (
                record is None
                or record.get("size") != st.st_size
                or record.get("mtime_ns") != st.st_mtime_ns
            ):
                record = _rescan(Path(item.path), st.st_size, st.st_mtime_ns, record)
                if record is None:
                    continue
                changed = True
            fresh[item.name] = record
    if changed or fresh.keys() != cache.keys():
        _save_index(folder, fresh)
    # Path() is the slow part of a warm listing: build each distinct cwd once.
    cwds: dict[str, Path] = {}
    return [_summary(folder / name, record, cwds) for name, record in fresh.items()]


def _summary(path: Path, record: dict[str, Any], cwds: dict[str, Path]) -> SessionSummary:
    cwd_text = str(record.get("cwd") or "")
    cwd = cwds.get(cwd_text)
    if cwd is None:
        cwd = cwds[cwd_text] = Path(cwd_text)
    return SessionSummary(
        id=str(record.get("id") or session_id_from_name(path.name) or path.stem),
        path=path,
        cwd=cwd,
        created=int(record.get("created") or 0),
        modified=int(record["mtime_ns"]) // 1_000_000,
        name=record.get("name"),
        first_message=_first_message(record.get("first_message")),
        message_count=int(record.get("message_count") or 0),
        size_bytes=int(record["size"]),
        subagent_of=record.get("subagent_of"),
    )


def _rescan(
    path: Path, size: int, mtime_ns: int, old: dict[str, Any] | None
) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            record = _continue_from(handle, old, size)
            if record is None:
                record = {"scanned": 0, "message_count": 0, "name": None, "first_message": None}
            _scan_from(handle, record, size)
    except OSError:
        return None
    record["size"] = size
    record["mtime_ns"] = mtime_ns
    return record


def _continue_from(handle: Any, old: dict[str, Any] | None, size: int) -> dict[str, Any] | None:
    """The old record if the file only grew since it was made (same header), else None."""
    if old is None or not isinstance(old.get("scanned"), int) or old["scanned"] > size:
        return None
    head = handle.read(512)
    session_id = old.get("id")
    if not session_id or f'"id":"{session_id}"'.encode() not in head:
        return None
    return dict(old)


def _scan_from(handle: Any, record: dict[str, Any], size: int) -> None:
    offset = int(record["scanned"])
    handle.seek(offset)
    leftover = b""
    remaining = size - offset
    while remaining > 0:
        chunk = handle.read(min(_CHUNK, remaining))
        if not chunk:
            break
        remaining -= len(chunk)
        data = leftover + chunk if leftover else chunk
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            leftover = data
            continue
        _scan_block(data[:cut] if cut < len(data) else data, offset, record)
        offset += cut
        leftover = data[cut:]
    # A torn last line stays unscanned; it is re-read once it is completed.
    record["scanned"] = offset


def _scan_block(block: bytes, offset: int, record: dict[str, Any]) -> None:
    """Learn from ``block``: whole lines starting at file ``offset``."""
    first_end = block.find(b"\n")
    if offset == 0:
        start = 0
        while block[start : start + 1] in (b"\n", b"\r"):  # after a failed first write
            start += 1
        if block.startswith(HEADER_PREFIX, start):
            _read_header(block[start : block.find(b"\n", start)], record)
    # One pass finds both: message lines to count and the latest session_info line.
    # A block's first line may be a torn line that a later append completed with "\n".
    whole = block[first_end - 1 : first_end] == b"}"
    count = 1 if whole and block.startswith(MESSAGE_LINE_START) else 0
    info_at = 0 if block.startswith(INFO_LINE_START) else -1
    for found in _COUNTED_LINE.finditer(block):
        if found.group(1) == b"message":
            count += 1
        else:
            info_at = found.start() + 1
    record["message_count"] = int(record.get("message_count") or 0) + count
    if info_at >= 0:
        name = _line_object(block, info_at).get("name")
        if isinstance(name, str):
            record["name"] = name
    if record.get("first_message") is None and count:
        record["first_message"] = _first_user_text(block)


def _read_header(line: bytes, record: dict[str, Any]) -> None:
    try:
        header = json.loads(line)
    except ValueError:
        return
    if isinstance(header, dict):
        record["id"] = header.get("id")
        record["cwd"] = header.get("cwd")
        created = header.get("timestamp")
        record["created"] = created if isinstance(created, int) else 0
        parent = header.get("subagent_of")
        record["subagent_of"] = parent if isinstance(parent, str) and parent else None


def _line_object(block: bytes, start: int) -> dict[str, Any]:
    end = block.find(b"\n", start)
    try:
        obj = json.loads(block[start : end if end >= 0 else len(block)])
    except ValueError:
        return {}
    return obj if isinstance(obj, dict) else {}


def _first_user_text(block: bytes) -> str | None:
    search_from = 0
    while (mark := block.find(_USER_MARK, search_from)) >= 0:
        search_from = mark + 1
        line_start = block.rfind(b"\n", 0, mark) + 1
        prefix = ENTRY_PREFIX.match(block, line_start)
        # The mark must be the entry's own message, right after the fixed prefix.
        if prefix is None or prefix.group(1) != b"message" or prefix.end() + 1 != mark:
            continue
        raw = _line_object(block, line_start).get("message")
        try:
            message = message_from_dict(raw) if isinstance(raw, dict) else None
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(message, UserMessage):
            continue
        typed, attached = split_attachments(message)
        named = [f"@{file.path}" for file in attached]
        text = " ".join([typed, *(name for name in named if name not in typed)])
        return " ".join(text.split())[:_FIRST_MESSAGE_CHARS]
    return None


def _first_message(text: str | None) -> str | None:
    # Read from the index as is: files indexed before ``as_typed`` existed show alike.
    return as_typed(text) if text else text


def _load_index(folder: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((folder / INDEX_FILE_NAME).read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
        return {}
    files = data.get("files")
    if not isinstance(files, dict):
        return {}
    return {
        name: record
        for name, record in files.items()
        if isinstance(record, dict)
        and isinstance(record.get("size"), int)
        and isinstance(record.get("mtime_ns"), int)
    }


def _save_index(folder: Path, files: dict[str, dict[str, Any]]) -> None:
    # Only a cache: any failure just means the next listing scans again.
    payload = json.dumps({"version": _INDEX_VERSION, "files": files}, separators=(",", ":"))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".tmp", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
        os.replace(tmp, folder / INDEX_FILE_NAME)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
