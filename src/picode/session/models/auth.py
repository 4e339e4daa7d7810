"""API keys stored by picode: one JSON file, mode 0600, never copied into sessions."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from picode.session.safety.private_files import PRIVATE_FILE_MODE, write_private_json


class AuthFileError(Exception):
    """The auth file cannot be read or written; the message says which file and why."""


class AuthStore:
    """``{"<provider>": {"api_key": "..."}}`` in ``auth.json``.

    Reading never raises: a corrupt or unreadable file yields no keys and sets ``problem``.
    Writing refuses to overwrite a corrupt file (raising ``AuthFileError``) so nothing is lost.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problem: str | None = None

    def get(self, provider: str) -> str | None:
        try:
            data = self._load()
        except AuthFileError as exc:
            self.problem = str(exc)
            return None
        entry = data.get(provider)
        key = entry.get("api_key") if isinstance(entry, dict) else None
        return key if isinstance(key, str) and key else None

    def providers(self) -> list[str]:
        try:
            return sorted(self._load())
        except AuthFileError as exc:
            self.problem = str(exc)
            return []

    def set(self, provider: str, key: str) -> None:
        if not key.strip():
            raise AuthFileError(f"refusing to store an empty API key for {provider}")
        data = self._load()
        data[provider] = {"api_key": key.strip()}
        self._save(data)

    def entry(self, name: str) -> dict[str, Any]:
        """The whole entry ``name`` (an MCP server's login: ``mcp:<server>``); empty when
        there is none or the file cannot be read."""
        try:
            entry = self._load().get(name)
        except AuthFileError as exc:
            self.problem = str(exc)
            return {}
        return dict(entry) if isinstance(entry, dict) else {}

    def put(self, name: str, entry: dict[str, Any]) -> None:
        """Replace the entry ``name``; raises ``AuthFileError`` as ``set`` does."""
        data = self._load()
        data[name] = entry
        self._save(data)

    def remove(self, provider: str) -> bool:
        data = self._load()
        if provider not in data:
            return False
        del data[provider]
        self._save(data)
        return True

    def _load(self) -> dict[str, Any]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise AuthFileError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        if os.name == "posix" and stat.S_IMODE(st.st_mode) & 0o077:
            # Someone loosened the mode (or an editor rewrote the file): tighten it again.
            with contextlib.suppress(OSError):
                os.chmod(self.path, PRIVATE_FILE_MODE)
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AuthFileError(f"cannot read {self.path}: {exc}") from exc
        if not text.strip():
            return {}
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AuthFileError(
                f"{self.path} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                f"{exc.msg}); fix or delete it"
            ) from exc
        if not isinstance(data, dict):
            raise AuthFileError(f"{self.path} must hold a JSON object; fix or delete it")
        return data

    def _save(self, data: dict[str, Any]) -> None:
        try:
            write_private_json(self.path, data)
        except OSError as exc:
            raise AuthFileError(f"cannot write {self.path}: {exc.strerror or exc}") from exc
