"""One session: an append-only JSONL tree on disk, read lazily (docs/sessions.md)."""

from __future__ import annotations

import json
import logging
import os
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from picode.ai.types import Message, message_from_dict, message_to_dict
from picode.session.store.context import BranchMessages, SessionContext
from picode.session.store.format import (
    FORMAT_VERSION,
    Entry,
    dump_json,
    entry_from_object,
    entry_object,
    loads_line,
    new_entry_id,
    now_ms,
    redact_secrets,
)
from picode.session.store.scan import Slot, fallback_header, line_prefix, read_slots, scan_file

log = logging.getLogger(__name__)

SESSION_FILE_MODE = 0o600
_OPEN_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0)
#: Message lines parsed at a time when a session is opened.
LOAD_BATCH = 256


class SessionWriteError(OSError):
    """Appending to the session file failed; the entry was not added (message says why)."""


class SessionFile:
    """A session file and the current position (``leaf_id``) in its tree.

    Each append is one ``os.write`` of one whole line on an ``O_APPEND`` descriptor, so a
    kill at any instant leaves every finished entry on disk and at most one torn line.
    A new session reaches the disk with its first message entry (header and any earlier
    entries go in that same write), so sessions that never got a message leave no file.
    """

    def __init__(
        self,
        path: Path,
        header: dict[str, Any],
        *,
        persisted: bool,
        slots: dict[str, Slot] | None = None,
        order: list[str] | None = None,
        warnings: list[str] | None = None,
        needs_newline: bool = False,
        line_count: int = 0,
    ) -> None:
        self.path = path
        self.header = header
        self.warnings: list[str] = warnings if warnings is not None else []
        self._slots: dict[str, Slot] = slots if slots is not None else {}
        self._order: list[str] = order if order is not None else []
        self.leaf_id: str | None = self._order[-1] if self._order else None
        self._persisted = persisted
        self._needs_newline = needs_newline
        self._line_count = line_count
        self._unwritten: dict[str, bytes] = {}
        self._messages: dict[str, Message] = {}
        self._entries: list[Entry] | None = None
        self._fd: int | None = None
        self._closer: weakref.finalize[Any, Any] | None = None

    # --- construction --------------------------------------------------------------------

    @classmethod
    def new(
        cls,
        path: Path,
        session_id: str,
        cwd: Path,
        parent_session: str | None = None,
        timestamp: int | None = None,
        subagent_of: str | None = None,
    ) -> SessionFile:
        header: dict[str, Any] = {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": session_id,
            "timestamp": now_ms() if timestamp is None else timestamp,
            "cwd": str(cwd),
        }
        if parent_session is not None:
            header["parent_session"] = parent_session
        if subagent_of is not None:
            header["subagent_of"] = subagent_of
        return cls(path, header, persisted=False, line_count=1)

    @classmethod
    def load(cls, path: Path) -> SessionFile:
        scan = scan_file(path)
        header = scan.header
        if header is None:
            header = fallback_header(path)
            if scan.size:
                scan.warnings.insert(0, f"{path.name}: no session header; guessed id and cwd")
        elif not isinstance(header.get("version"), int) or header["version"] > FORMAT_VERSION:
            scan.warnings.append(
                f"{path.name}: format version {header.get('version')!r} is not "
                f"{FORMAT_VERSION} (a newer picode?); reading what is understood"
            )
        return cls(
            path,
            header,
            persisted=scan.size > 0,
            slots=scan.slots,
            order=scan.order,
            warnings=scan.warnings,
            needs_newline=scan.needs_newline,
            line_count=scan.line_count if scan.size else 1,
        )

    # --- identity ------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return str(self.header.get("id", ""))

    @property
    def cwd(self) -> Path:
        return Path(str(self.header.get("cwd", "")))

    @property
    def parent_session(self) -> str | None:
        value = self.header.get("parent_session")
        return str(value) if value is not None else None

    @property
    def persisted(self) -> bool:
        """Whether the file exists on disk yet (see the class docstring)."""
        return self._persisted

    @property
    def name(self) -> str | None:
        for entry_id in reversed(self._order):
            if self._slots[entry_id].type == "session_info":
                entry = self.get_entry(entry_id)
                if entry is not None and isinstance(entry.data.get("name"), str):
                    return str(entry.data["name"])
        return None

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._slots

    # --- appending -----------------------------------------------------------------------

    def append_message(self, message: Message) -> str:
        entry_id = self._append("message", {"message": message_to_dict(message)})
        self._messages[entry_id] = message
        return entry_id

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append("model_change", {"provider": provider, "model_id": model_id})

    def append_thinking_level_change(self, level: str) -> str:
        return self._append("thinking_level_change", {"level": level})

    def append_compaction(
        self, summary: str, first_kept_entry_id: str, tokens_before: int, details: dict[str, Any]
    ) -> str:
        data = {
            "summary": summary,
            "first_kept_entry_id": first_kept_entry_id,
            "tokens_before": tokens_before,
            "details": {
                "read_files": list(details.get("read_files", [])),
                "modified_files": list(details.get("modified_files", [])),
                **{k: v for k, v in details.items() if k not in ("read_files", "modified_files")},
            },
        }
        return self._append("compaction", data)

    def append_custom(self, custom_type: str, data: Any) -> str:
        return self._append("custom", {"custom_type": custom_type, "data": data})

    def append_label(self, target_id: str, label: str) -> str:
        return self._append("label", {"target_id": target_id, "label": label})

    def append_session_info(self, name: str) -> str:
        return self._append("session_info", {"name": name})

    def _append(self, kind: str, data: dict[str, Any]) -> str:
        entry_id = new_entry_id(self._slots)
        parent_id = self.leaf_id
        text = dump_json(entry_object(kind, entry_id, parent_id, now_ms(), data))
        text, redacted = redact_secrets(text)
        if redacted:
            warning = (
                f"{self.path.name}: {redacted} value(s) shaped like a key or token replaced by "
                f"[redacted] in a {kind} entry"
            )
            self.warnings.append(warning)
            log.warning(warning)
        line = text.encode("utf-8") + b"\n"
        slot = Slot(-1, len(line) - 1, parent_id, kind, self._line_count + 1)
        if self._persisted:
            slot.offset = self._write([line])
        elif kind == "message":
            slot.offset = self._persist_with([(entry_id, line)])[entry_id]
        else:
            self._unwritten[entry_id] = line
        # Only now, so that a failed write leaves the tree as it was.
        self._line_count += 1
        self._slots[entry_id] = slot
        self._order.append(entry_id)
        self.leaf_id = entry_id
        if self._entries is not None:
            self._entries.append(entry_from_object(json.loads(line)))
        return entry_id

    def _persist_with(self, lines: list[tuple[str, bytes]]) -> dict[str, int]:
        """Write the header, the entries waiting for it and ``lines``; their offsets."""
        pending = [(eid, self._unwritten[eid]) for eid in self._order if eid in self._unwritten]
        header = (dump_json(self.header) + "\n").encode("utf-8")
        chunks = [header] + [line for _, line in pending] + [line for _, line in lines]
        offset = self._write(chunks) + len(header)
        offsets: dict[str, int] = {}
        for entry_id, line in [*pending, *lines]:
            offsets[entry_id] = offset
            if entry_id in self._slots:
                self._slots[entry_id].offset = offset
            offset += len(line)
        self._unwritten.clear()
        self._persisted = True
        return offsets

    def _write(self, chunks: list[bytes]) -> int:
        """Append ``chunks`` in one write; the offset where the first chunk landed."""
        prefix = b"\n" if self._needs_newline else b""
        buffer = b"".join([prefix, *chunks])
        try:
            if self._fd is None:
                # Sessions hold everything the model read: only the user may list them.
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                self._fd = os.open(self.path, _OPEN_FLAGS, SESSION_FILE_MODE)
                self._closer = weakref.finalize(self, os.close, self._fd)
            view = memoryview(buffer)
            written = os.write(self._fd, view)
            while written < len(buffer):  # only on a full disk or an exotic file system
                written += os.write(self._fd, view[written:])
            end = os.lseek(self._fd, 0, os.SEEK_CUR)
        except OSError as exc:
            # Part of the line may be on disk: the next entry starts on a fresh line (a
            # blank line at worst, which readers skip).
            self._needs_newline = True
            raise SessionWriteError(
                f"cannot write session file {self.path}: {exc.strerror or exc}"
            ) from exc
        self._needs_newline = False
        return end - len(buffer) + len(prefix)

    def close(self) -> None:
        if self._closer is not None:
            self._closer()
            self._closer = None
        self._fd = None

    def __enter__(self) -> SessionFile:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- the tree ------------------------------------------------------------------------

    def branch_to(self, entry_id: str | None) -> None:
        """Make ``entry_id`` the leaf: the next append becomes its child (None: a new root)."""
        if entry_id is not None and entry_id not in self._slots:
            raise ValueError(f"session {self.id} has no entry {entry_id!r}")
        self.leaf_id = entry_id

    def branch_ids(self, leaf_id: str | None = None) -> list[str]:
        """Entry ids from the root to ``leaf_id`` (default: the current leaf)."""
        current = self.leaf_id if leaf_id is None else leaf_id
        slots = self._slots
        path: list[str] = []
        # A corrupt file could hold a cycle; a branch is never longer than the file.
        for _ in range(len(slots)):
            slot = slots.get(current) if current is not None else None
            if slot is None:
                break
            path.append(current)  # type: ignore[arg-type]
            current = slot.parent_id
        path.reverse()
        return path

    def entry_type(self, entry_id: str) -> str | None:
        slot = self._slots.get(entry_id)
        return slot.type if slot else None

    def parent_of(self, entry_id: str) -> str | None:
        slot = self._slots.get(entry_id)
        return slot.parent_id if slot else None

    def entry_ids(self) -> list[str]:
        """All entry ids in file order (cheap: no parsing)."""
        return list(self._order)

    def get_entry(self, entry_id: str) -> Entry | None:
        found = self._parse_entries([entry_id])
        return found[0] if found else None

    def entries(self) -> list[Entry]:
        """Every readable entry in file order (parses the whole file once, then cached)."""
        if self._entries is None:
            self._entries = self._parse_entries(self._order)
        return list(self._entries)

    def branch(self) -> list[Entry]:
        return self._parse_entries(self.branch_ids())

    def labels(self) -> dict[str, str]:
        """``target_id`` → label; the latest label entry wins, an empty label clears it."""
        ids = [eid for eid in self._order if self._slots[eid].type == "label"]
        out: dict[str, str] = {}
        for entry in self._parse_entries(ids):
            target, label = entry.data.get("target_id"), entry.data.get("label")
            if isinstance(target, str) and isinstance(label, str):
                if label:
                    out[target] = label
                else:
                    out.pop(target, None)
        return out

    # --- context -------------------------------------------------------------------------

    def branch_messages(self) -> BranchMessages:
        """The branch's messages, none parsed yet: ``tail(n)`` for a quick first render."""
        ids = [eid for eid in self.branch_ids() if self._slots[eid].type == "message"]
        return BranchMessages(self, ids)

    def build_context(self) -> SessionContext:
        """What the model is sent on resume: the branch from its last compaction, with the
        model, thinking level, fired rules and spend in force (store/branch_context.py)."""
        from picode.session.store.branch_context import build_context

        return build_context(self)

    # --- lazy reading --------------------------------------------------------------------

    def load_messages(self, entry_ids: list[str]) -> list[tuple[str, Message]]:
        """Messages for these message entries, in order; unreadable ones are skipped."""
        cache = self._messages
        missing = [eid for eid in entry_ids if eid not in cache]
        # In batches: the raw lines and their JSON trees of a long session would otherwise
        # all be alive at once, beside the messages made from them (the peak of a resume).
        for start in range(0, len(missing), LOAD_BATCH):
            for entry in self._parse_entries(missing[start : start + LOAD_BATCH]):
                raw = entry.data.get("message")
                try:
                    if not isinstance(raw, dict):
                        raise ValueError("no message object")
                    cache[entry.id] = message_from_dict(raw)
                except (ValueError, KeyError, TypeError) as exc:
                    self._warn_line(entry.id, f"unreadable message ({exc}); skipped")
        return [(eid, cache[eid]) for eid in entry_ids if eid in cache]

    def _parse_entries(self, entry_ids: list[str]) -> list[Entry]:
        out: list[Entry] = []
        for entry_id, raw in self._read_lines(entry_ids):
            try:
                obj, repaired = loads_line(raw)
                if not isinstance(obj, dict):
                    raise ValueError("not a JSON object")
                entry = entry_from_object(obj)
            except (ValueError, KeyError) as exc:
                self._warn_line(entry_id, f"not valid JSON ({exc}); skipped")
                continue
            if repaired:
                self._warn_line(entry_id, f"{repaired}; the rest of the line is kept")
            # The scan may have re-attached an entry whose parent line was lost.
            entry.parent_id = self._slots[entry_id].parent_id
            out.append(entry)
        return out

    def _read_lines(self, entry_ids: Iterable[str]) -> list[tuple[str, bytes]]:
        wanted = [(eid, self._slots[eid]) for eid in entry_ids if eid in self._slots]
        on_disk = sorted(
            ((eid, slot) for eid, slot in wanted if slot.offset >= 0), key=lambda p: p[1].offset
        )
        lines: dict[str, bytes] = {}
        if on_disk:
            lines.update(self._read_slots(on_disk))
        for eid, slot in wanted:
            if slot.offset < 0 and eid in self._unwritten:
                lines[eid] = self._unwritten[eid][:-1]
        return [(eid, lines[eid]) for eid, _ in wanted if eid in lines]

    def _read_slots(self, ordered: list[tuple[str, Slot]]) -> dict[str, bytes]:
        try:
            return read_slots(self.path, ordered)
        except OSError as exc:
            self.warnings.append(f"{self.path.name}: cannot read ({exc})")
            return {}

    def _warn_line(self, entry_id: str, message: str) -> None:
        slot = self._slots.get(entry_id)
        where = f"line {slot.line}" if slot else f"entry {entry_id}"
        warning = f"{self.path.name} {where}: {message}"
        if warning not in self.warnings:
            self.warnings.append(warning)

    # --- forking -------------------------------------------------------------------------

    def branch_lines(self, leaf_id: str) -> list[tuple[str, bytes]]:
        """Lines (without newline) of the branch root → ``leaf_id``, ready to copy elsewhere."""
        path = self.branch_ids(leaf_id)
        raw = dict(self._read_lines(path))
        out: list[tuple[str, bytes]] = []
        for entry_id in path:
            line = raw.get(entry_id)
            if line is None:
                continue
            expected = self._slots[entry_id].parent_id
            prefix = line_prefix(line)
            if prefix is None or prefix[2] != expected:
                # Re-attached or written in another key order: rewrite it canonically.
                try:
                    entry = entry_from_object(json.loads(line))
                except (ValueError, KeyError, AttributeError):
                    self._warn_line(entry_id, "not valid JSON; left out of the fork")
                    continue
                obj = entry_object(entry.type, entry.id, expected, entry.timestamp, entry.data)
                line = dump_json(obj).encode("utf-8")
            out.append((entry_id, line))
        return out

    @classmethod
    def create_from_lines(
        cls, path: Path, header: dict[str, Any], lines: list[tuple[str, bytes]]
    ) -> SessionFile:
        """A new file holding ``lines`` (canonical entry lines, from ``branch_lines``) at once."""
        session = cls(path, header, persisted=False, line_count=1)
        for entry_id, line in lines:
            prefix = line_prefix(line)
            if prefix is None:
                raise ValueError(f"not a canonical entry line: {line[:80]!r}")
            session._line_count += 1
            slot = Slot(-1, len(line), prefix[2], prefix[0], session._line_count)
            session._slots[entry_id] = slot
            session._order.append(entry_id)
            session._unwritten[entry_id] = line + b"\n"
        session.leaf_id = session._order[-1] if session._order else None
        session._persist_with([])
        return session
