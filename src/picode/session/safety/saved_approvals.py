"""Commands approved for good: saved for one folder (``p`` at the question), or listed in
your own ``config.toml`` for every folder (``allow_commands``). docs/security.md
"Commands approved for good".

The saved ones live in ``<data dir>/approved-commands.json`` (0600), beside the trust
decisions: read-only in the sandbox, and a write or edit there is a protected path the
model's tools ask about each time, so a project cannot approve commands for itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from picode.session.paths import Paths
from picode.session.safety.command_scope import CommandScope, plain_words
from picode.session.safety.private_files import write_private_json

APPROVALS_FILE_NAME = "approved-commands.json"


class SavedApprovalsError(Exception):
    """The file of saved approvals cannot be read or written; nothing was changed."""


def configured_scope(entry: str) -> CommandScope:
    """An ``allow_commands`` entry as the commands it covers: those starting with its words.

    Raises ``ValueError`` for an entry that is not plain words (``;``, ``|``, ``$``...)."""
    words = plain_words(entry)
    if not words:
        raise ValueError(
            f"{entry!r} is not a command's first words (no quotes left open, no ; & | < > $ "
            "` ( ) or backslash)"
        )
    return CommandScope(words=tuple(words))


def _command_words(entry: str) -> str:
    configured_scope(entry)  # raises ValueError with the reason
    return entry.strip()


#: A config entry: a command's first words (``npm test``), validated with the settings.
CommandWords = Annotated[str, AfterValidator(_command_words)]


def scope_to_json(scope: CommandScope) -> dict[str, Any]:
    return {"exact": scope.exact} if scope.exact is not None else {"words": list(scope.words)}


def scope_from_json(entry: object) -> CommandScope | None:
    """None for anything but a well-formed entry: an empty word list would cover every
    command, so it is never read as one."""
    if not isinstance(entry, dict):
        return None
    exact, words = entry.get("exact"), entry.get("words")
    if isinstance(exact, str) and exact.strip() and words is None:
        return CommandScope(exact=exact.strip())
    if (
        exact is None
        and isinstance(words, list)
        and words
        and all(isinstance(word, str) and word for word in words)
    ):
        return CommandScope(words=tuple(words))
    return None


@dataclass(slots=True)
class SavedApprovals:
    """This folder's saved approvals, read again whenever the file changed (another picode
    in the same folder may add one)."""

    path: Path
    folder: Path
    #: Why the file was not read, when it was not: nothing counts as approved then.
    problem: str | None = None
    _scopes: list[CommandScope] = field(default_factory=list)
    _stamp: tuple[int, int] | None = None

    @classmethod
    def for_folder(cls, paths: Paths, cwd: Path) -> SavedApprovals:
        return cls(paths.data_dir / APPROVALS_FILE_NAME, cwd.resolve())

    def scopes(self) -> list[CommandScope]:
        try:
            stat = self.path.stat()
        except OSError:
            self._scopes, self._stamp, self.problem = [], None, None
            return []
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            try:
                folders = self._read()
            except SavedApprovalsError as exc:
                folders, self.problem = {}, str(exc)
            else:
                self.problem = None
            entries = folders.get(str(self.folder))
            found = (scope_from_json(entry) for entry in entries or ())
            self._scopes = [scope for scope in found if scope is not None]
            self._stamp = stamp
        return list(self._scopes)

    def covers(self, command: str) -> bool:
        return any(scope.covers(command) for scope in self.scopes())

    def add(self, scope: CommandScope) -> None:
        """Raises ``SavedApprovalsError`` (a damaged file is never overwritten)."""
        folders = self._read()
        entries = folders.get(str(self.folder))
        entries = entries if isinstance(entries, list) else []
        entry = scope_to_json(scope)
        if entry not in entries:
            entries.append(entry)
        folders[str(self.folder)] = entries
        self._write(folders)

    def forget(self) -> int:
        """Take back every approval saved for this folder; how many there were."""
        folders = self._read()
        entries = folders.pop(str(self.folder), None)
        if not isinstance(entries, list) or not entries:
            return 0
        self._write(folders)
        return len(entries)

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as exc:
            raise SavedApprovalsError(f"{self.path} cannot be read ({exc})") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SavedApprovalsError(f"{self.path} is not valid JSON ({exc})") from exc
        folders = data.get("folders") if isinstance(data, dict) else None
        if not isinstance(folders, dict):
            raise SavedApprovalsError(f'{self.path} has no "folders" table')
        return folders

    def _write(self, folders: dict[str, Any]) -> None:
        try:
            write_private_json(self.path, {"version": 1, "folders": folders})
        except OSError as exc:
            raise SavedApprovalsError(f"{self.path} cannot be written ({exc})") from exc
        self._stamp = None  # read again next time, whatever the clock's resolution


def describe_scopes(scopes: list[CommandScope]) -> list[str]:
    return [scope.describe_granted() for scope in scopes]


__all__ = [
    "APPROVALS_FILE_NAME",
    "CommandWords",
    "SavedApprovals",
    "SavedApprovalsError",
    "configured_scope",
    "describe_scopes",
]
