"""Giving the terminal to something else for a while: ctrl+g (the message in an external
editor) and ctrl+z (suspend picode to the shell)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from picode.tui.widgets.editor import PromptEditor
    from picode.tui.widgets.notice import NoticeLevel


def edit_externally(
    editor: PromptEditor,
    suspend: Callable[[], Any] | None,
    close_completion: Callable[[], None],
    report: Callable[[str, NoticeLevel], None],
) -> None:
    """The message in ``$VISUAL``/``$EDITOR``; ``suspend`` is None where there is no real
    terminal to hand over (headless tests)."""
    from picode.tui.controllers.external_editor import edit_message

    close_completion()
    edit_message(editor, suspend, report)


def suspend_if_still_empty(editor: PromptEditor, suspend_process: Callable[[], None]) -> None:
    """ctrl+z suspends picode only with nothing typed; with text it undoes, as editors do."""
    if editor.is_empty:
        suspend_process()
    else:
        editor.action_undo()
