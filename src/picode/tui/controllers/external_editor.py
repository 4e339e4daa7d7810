"""Ctrl+G: edit the message in ``$VISUAL`` / ``$EDITOR`` while picode steps aside."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextlib import AbstractContextManager


Suspend = Callable[[], "AbstractContextManager[object]"]


class ExternalEditorError(Exception):
    """The editor could not be used; the message says why (the text is left as it was)."""


#: Tried in order when neither $VISUAL nor $EDITOR is set, as git and crontab do.
FALLBACK_EDITORS = ("editor", "nano", "vi")


def editor_command(env: Mapping[str, str]) -> list[str]:
    command = env.get("VISUAL", "").strip() or env.get("EDITOR", "").strip()
    if not command:
        path = env.get("PATH", os.defpath)
        found = next((name for name in FALLBACK_EDITORS if shutil.which(name, path=path)), None)
        if found is None:
            raise ExternalEditorError(
                "Ctrl+G opens your editor: set $VISUAL or $EDITOR (e.g. export EDITOR=nano); "
                "none of editor, nano or vi is installed."
            )
        return [found]
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ExternalEditorError(f"Cannot read the editor command {command!r}: {exc}") from None
    if not argv:
        raise ExternalEditorError("$VISUAL / $EDITOR is empty.")
    return argv


def edit_text(
    text: str,
    *,
    suspend: Suspend | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Open ``text`` in the editor and return what it saved.

    The file ends with a newline, as editors expect of a text file (without it a line
    appended with ``o`` or ``>>`` is glued onto the last one); exactly one trailing newline
    is dropped on the way back, so an untouched message comes back unchanged.

    ``suspend`` gives the terminal to the editor for the duration (``App.suspend``).
    Raises ExternalEditorError when the editor cannot start or exits with an error.
    """
    environ = os.environ if env is None else env
    argv = editor_command(environ)
    handle, name = tempfile.mkstemp(prefix="picode-message-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text + "\n" if text else text)
        stepping_aside = suspend() if suspend is not None else contextlib.nullcontext()
        failure: OSError | None = None
        # Nothing may raise inside the block: App.suspend only resumes the app when its
        # block ends normally.
        with stepping_aside:
            try:
                completed = subprocess.run([*argv, str(path)], env=dict(environ), check=False)
            except OSError as exc:
                failure = exc
        if failure is not None:
            reason = failure.strerror or str(failure)
            raise ExternalEditorError(f"Cannot run the editor {argv[0]!r}: {reason}") from None
        if completed.returncode != 0:
            raise ExternalEditorError(
                f"{argv[0]} exited with status {completed.returncode}; the message was left "
                "as it was."
            )
        try:
            edited = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ExternalEditorError(f"Cannot read the edited message: {exc}") from None
    finally:
        path.unlink(missing_ok=True)
    return edited[:-1] if edited.endswith("\n") else edited
