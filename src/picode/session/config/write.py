"""Changing the person's own ``config.toml`` from picode (``picode mcp add``, a theme chosen
in the TUI): tomlkit keeps their comments and layout, and the file is replaced whole or not
at all."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


class ConfigWriteError(Exception):
    """The file could not be read or written, or the change was refused; nothing changed.
    The message names the file and says why."""


def edit_user_config(file: Path, change: Callable[[Any], None]) -> None:
    """Apply ``change`` to the parsed document and write it back atomically. ``change`` may
    raise ``ConfigWriteError`` to refuse (nothing is written then)."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        text = file.read_text(encoding="utf-8") if file.exists() else ""
        document = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise ConfigWriteError(f"{file} cannot be read ({exc}); nothing changed") from None
    change(document)
    temporary = file.with_name(file.name + ".tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(tomlkit.dumps(document), encoding="utf-8")
        if file.exists():
            os.chmod(temporary, file.stat().st_mode & 0o777)
        os.replace(temporary, file)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ConfigWriteError(f"cannot write {file} ({exc}); nothing changed") from None


def set_user_setting(file: Path, key: str, value: str) -> None:
    """A top-level ``key = "value"`` in the person's config (``theme``, say)."""

    def change(document: Any) -> None:
        document[key] = value

    edit_user_config(file, change)
