"""Giving the terminal to something else for a while: ctrl+g (the message in an external
editor) and ctrl+z (suspend picode to the shell)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from picode.tui.controllers.host import Reporter
    from picode.tui.widgets.editor import PromptEditor


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class StepAsideHost(Reporter, Protocol):
        @property
        def editor(self) -> PromptEditor: ...

        @property
        def is_headless(self) -> bool:
            """No real terminal to hand over (headless tests)."""
            ...

        def suspend(self) -> AbstractContextManager[None]: ...

        def close_completion(self) -> None: ...

        def action_suspend_process(self) -> None: ...


def edit_externally(host: StepAsideHost) -> None:
    """The message in ``$VISUAL``/``$EDITOR`` (pastes expanded) and back; a problem is
    reported and the text left as it was."""
    from picode.tui.controllers.external_editor import ExternalEditorError, edit_text

    host.close_completion()
    editor = host.editor
    try:
        text = edit_text(editor.expanded_text(), suspend=None if host.is_headless else host.suspend)
    except ExternalEditorError as exc:
        host.report(str(exc), "warning")
        return
    except Exception as exc:  # the terminal could not be handed over
        host.report(f"Could not open the editor: {exc}", "warning")
        return
    editor.set_text(text)
    editor.focus()


def suspend_if_still_empty(host: StepAsideHost) -> None:
    """ctrl+z suspends picode only with nothing typed; with text it undoes, as editors do."""
    if host.editor.is_empty:
        host.action_suspend_process()
    else:
        host.editor.action_undo()
