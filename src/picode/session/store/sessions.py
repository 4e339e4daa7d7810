"""Sessions on disk: one append-only JSONL tree per session, grouped by cwd (docs/sessions.md).

Layout: ``<sessions_dir>/<encoded cwd>/<timestamp>_<id>.jsonl``. See ``store_file`` for one
session, ``store_index`` for listing and ``store_format`` for the line format.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from picode.session.store.branch_context import TTSR_FIRED
from picode.session.store.context import BranchMessages, SessionContext
from picode.session.store.file import SessionFile, SessionWriteError
from picode.session.store.format import (
    FORMAT_VERSION,
    HEADER_PREFIX,
    Entry,
    compaction_summary_message,
    encode_cwd,
    file_timestamp,
    is_compaction_summary,
    loads_line,
    new_session_id,
    now_ms,
    session_id_from_name,
)
from picode.session.store.index import SessionSummary, summarize_folder

__all__ = [
    "TTSR_FIRED",
    "AmbiguousSessionError",
    "BranchMessages",
    "Entry",
    "NewSessionFile",
    "NotASessionError",
    "SessionContext",
    "SessionFile",
    "SessionNotFoundError",
    "SessionStore",
    "SessionSummary",
    "SessionWriteError",
    "compaction_summary_message",
    "is_compaction_summary",
]


class SessionNotFoundError(LookupError):
    """No session matches; the message says what was looked for and where."""


class NotASessionError(ValueError):
    """A file given as a session is something else; it is left untouched."""


class AmbiguousSessionError(LookupError):
    """An id prefix matches several sessions; the message lists them."""

    def __init__(self, message: str, candidates: list[Path]) -> None:
        super().__init__(message)
        self.candidates = candidates


@dataclass(frozen=True, slots=True)
class NewSessionFile:
    """``--session PATH`` for a file that does not exist yet: a new session saved there."""

    path: Path

    def __str__(self) -> str:
        return str(self.path)


class SessionStore:
    def __init__(self, sessions_dir: Path) -> None:
        self.sessions_dir = sessions_dir

    def folder_for(self, cwd: Path) -> Path:
        return self.sessions_dir / encode_cwd(_normalise(cwd))

    def create(
        self,
        cwd: Path,
        *,
        parent_session: str | None = None,
        path: Path | None = None,
        subagent_of: str | None = None,
    ) -> SessionFile:
        """A new session; its file appears with the first message entry (at ``path`` when
        the person named one, else in ``cwd``'s folder of the store). ``subagent_of``: the
        session whose ``task`` call this one runs."""
        cwd = _normalise(cwd)
        session_id = new_session_id()
        timestamp = now_ms()
        if path is None:
            path = self.folder_for(cwd) / f"{file_timestamp(timestamp)}_{session_id}.jsonl"
        return SessionFile.new(path, session_id, cwd, parent_session, timestamp, subagent_of)

    @staticmethod
    def check_new_path(path: Path) -> None:
        """A file named for a new session must be creatable: its folder exists."""
        folder = path.parent
        if not folder.is_dir():
            problem = "is not a folder" if folder.exists() else "does not exist"
            raise SessionNotFoundError(
                f"session file {path} does not exist, and cannot be created: its folder "
                f"{folder} {problem}"
            )

    def open(self, path: Path, *, given: bool = False) -> SessionFile:
        """``given``: the person named this file; one that is not a session is refused
        rather than appended to (files found in the sessions folder may have lost their
        header and are read as well as they can be)."""
        if not path.is_file():
            problem = "is a folder" if path.is_dir() else "does not exist"
            raise SessionNotFoundError(f"session file {path} {problem}")
        if given:
            _require_header(path)
        try:
            return SessionFile.load(path)
        except OSError as exc:
            raise SessionNotFoundError(f"cannot read session file {path}: {exc}") from exc

    def continue_latest(self, cwd: Path) -> SessionFile | None:
        """The most recently written conversation of ``cwd`` (a subagent's is not one), or
        None."""
        cwd = _normalise(cwd)
        candidates = []
        for path in _session_files(self.folder_for(cwd)):
            try:
                candidates.append((path.stat().st_mtime_ns, path.name, path))
            except OSError:
                continue
        for _, _, path in sorted(candidates, reverse=True):
            # Different cwds can share an encoded folder name: trust the header.
            header = _header(path)
            if header is not None and header.get("subagent_of"):
                continue
            if (header or {}).get("cwd") in (str(cwd), None):
                return self.open(path)
        return None

    def resume(self, id_or_prefix: str, cwd: Path | None = None) -> SessionFile:
        """By id, unique id prefix or file path; ``cwd``'s sessions are searched first."""
        key = id_or_prefix.strip()
        if not key:
            raise SessionNotFoundError("no session id given")
        as_path = Path(key).expanduser()
        if key.endswith(".jsonl") and as_path.is_file():
            return self.open(as_path, given=True)
        groups: list[list[Path]] = []
        if cwd is not None:
            groups.append(_session_files(self.folder_for(cwd)))
        groups.append([path for folder in self._folders() for path in _session_files(folder)])
        for files in groups:
            matches = [p for p in files if (session_id_from_name(p.name) or "").startswith(key)]
            exact = [p for p in matches if session_id_from_name(p.name) == key]
            if len(exact) == 1 or len(matches) == 1:
                return self.open((exact or matches)[0])
            if matches:
                raise AmbiguousSessionError(_ambiguous_message(key, matches), matches)
        raise SessionNotFoundError(f"no session id starts with {key!r} in {self.sessions_dir}")

    def fork(self, source: SessionFile, entry_id: str) -> SessionFile:
        """A new session holding ``source``'s branch root → ``entry_id`` (same entry ids)."""
        if entry_id not in source:
            raise ValueError(f"session {source.id} has no entry {entry_id!r}")
        lines = source.branch_lines(entry_id)
        session_id = new_session_id()
        timestamp = now_ms()
        cwd = source.cwd if str(source.cwd) else None
        folder = self.folder_for(cwd) if cwd is not None else source.path.parent
        header = {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": session_id,
            "timestamp": timestamp,
            "cwd": str(source.cwd),
            "parent_session": source.id,
        }
        path = folder / f"{file_timestamp(timestamp)}_{session_id}.jsonl"
        return SessionFile.create_from_lines(path, header, lines)

    def _folders(self) -> list[Path]:
        try:
            with os.scandir(self.sessions_dir) as listing:
                return [Path(item.path) for item in listing if item.is_dir()]
        except OSError:
            return []

    def list(self, cwd: Path | None = None) -> list[SessionSummary]:
        """Newest first; ``cwd=None`` lists every folder.

        Defined last: inside the class body the name ``list`` means this method.
        """
        if cwd is None:
            summaries = [s for folder in self._folders() for s in summarize_folder(folder)]
        else:
            wanted = _normalise(cwd)
            summaries = [
                s
                for s in summarize_folder(self.folder_for(wanted))
                if s.cwd in (wanted, _UNKNOWN_CWD)
            ]
        summaries.sort(key=lambda s: (s.modified, s.created, s.id), reverse=True)
        return summaries


_UNKNOWN_CWD = Path("")  # a file whose header was lost


def _normalise(cwd: Path) -> Path:
    return Path(os.path.abspath(cwd))


def _session_files(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as listing:
            return [Path(item.path) for item in listing if item.name.endswith(".jsonl")]
    except OSError:
        return []


def _require_header(path: Path) -> None:
    """An empty file may become a session; anything else must start with a header."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 16)
    except OSError as exc:
        raise SessionNotFoundError(f"cannot read session file {path}: {exc}") from exc
    if not first.strip():
        return
    try:
        header, _ = loads_line(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise NotASessionError(
            f"{path} is not a picode session (its first line is not a session header); "
            "it was left untouched. Give a session file, or use -c or -r to pick one"
        )


def _header(path: Path) -> dict[str, Any] | None:
    """The header, reading only the first line; None if it cannot be told."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(1 << 16)
    except OSError:
        return None
    if not first.startswith(HEADER_PREFIX):
        return None
    try:
        header = json.loads(first)
    except ValueError:
        return None
    return header if isinstance(header, dict) else None


def _ambiguous_message(key: str, matches: list[Path]) -> str:
    shown = sorted(matches, key=lambda p: p.name, reverse=True)[:10]
    lines = [f"  {session_id_from_name(p.name)}  {p.parent.name}/{p.name}" for p in shown]
    more = f"\n  … and {len(matches) - len(shown)} more" if len(matches) > len(shown) else ""
    return (
        f"{key!r} matches {len(matches)} sessions; use more characters:\n" + "\n".join(lines) + more
    )
