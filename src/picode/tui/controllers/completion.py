"""Completion as you type: ``/`` lists commands, ``@`` lists files, above the editor.

While the list is open the editor hands it Up/Down (move), Tab (accept) and Enter (accept;
a command that needs no argument also runs). Esc closes it through the interrupt chain, so
the first Esc never aborts a run while a list is open.

File search is synchronous for ordinary projects (it takes well under a millisecond) and
moves to a thread for large indexes so typing never waits on it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from picode.tui.completion.popup import MAX_ITEMS, CompletionItem, CompletionPopup
from picode.tui.completion.trigger import Trigger, apply_completion, find_trigger

if TYPE_CHECKING:
    from picode.tui.completion.files import FileIndex
    from picode.tui.controllers.host import CompletionHost

#: Above this many paths the search runs in a thread.
THREADED_SEARCH_PATHS = 20_000


class CompletionController:
    def __init__(self, host: CompletionHost, *, popup: CompletionPopup, cwd: Path) -> None:
        self._host = host
        self.editor = editor = host.editor
        self.popup = popup
        self.cwd = cwd
        self.trigger: Trigger | None = None
        self.index: FileIndex | None = None
        self._index_error_shown = False
        self._generation = 0
        self._last_state: tuple[int, int, str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        editor.key_filter = self.on_key

    @classmethod
    def start(cls, host: CompletionHost, cwd: Path) -> CompletionController:
        """Mount the list above the editor and start completing (after the first frame)."""
        popup = CompletionPopup()
        host.mount(popup, before=host.editor)
        return cls(host, popup=popup, cwd=cwd)

    # --- open / close ----------------------------------------------------------------------

    def is_open(self) -> bool:
        return self.popup.is_open

    def close(self) -> bool:
        self._generation += 1
        self.trigger = None
        self._last_state = None
        if not self.popup.is_open:
            return False
        self.popup.hide()
        return True

    def update(self, *, force: bool = False) -> None:
        """Look at the text before the cursor and show what completes it (or nothing).

        Called on every edit and cursor move; nothing is redone while both stay put.
        """
        editor = self.editor
        if editor.is_recalling:
            self.close()  # history recall: Up/Down belong to the history
            return
        row, column = editor.cursor_location
        line = editor.document.get_line(row)[:column]
        state = (row, column, line)
        if state == self._last_state and not force:
            return
        trigger = find_trigger(line if row == 0 else "\n" + line)
        if trigger is None:
            self.close()
            return
        if row != 0:
            trigger = Trigger(trigger.kind, trigger.query, trigger.start - 1)
        self.trigger = trigger
        self._last_state = state
        self._generation += 1
        if trigger.kind == "command":
            commands = self._host.commands.current().complete(trigger.query)
            self._show([CompletionItem.for_command(c) for c in commands])
        else:
            self._complete_file(trigger.query, self._generation)

    def _show(self, items: list[CompletionItem]) -> None:
        if self.trigger is None:
            return
        self.popup.show(items)

    # --- files --------------------------------------------------------------------------------

    def _file_index(self) -> FileIndex:
        if self.index is None:
            from picode.tui.completion.files import FileIndex

            self._loop = asyncio.get_running_loop()
            self.index = FileIndex(self.cwd, on_ready=self._index_ready)
        return self.index

    def _index_ready(self) -> None:
        # Called from the indexing thread.
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._refresh_after_index)
            except RuntimeError:  # the loop closed meanwhile
                pass

    def _refresh_after_index(self) -> None:
        index = self.index
        if index is not None and index.error and not self._index_error_shown:
            self._index_error_shown = True
            self._host.report(index.error, "warning")
        if self.trigger is not None and self.trigger.kind == "file":
            self.update(force=True)

    def _complete_file(self, query: str, generation: int) -> None:
        index = self._file_index()
        if not index.ready:
            index.start()  # _index_ready runs update() again once it is built
            self.popup.hide()
            return
        if index.path_count <= THREADED_SEARCH_PATHS:
            paths = [CompletionItem.for_path(p) for p in index.search(query, MAX_ITEMS)]
            self._show(self._resources(query) + paths)
            return
        self._host.run_worker(
            self._search_in_thread(index, query, generation),
            group="file-search",
            exclusive=True,
            exit_on_error=False,
        )

    async def _search_in_thread(self, index: FileIndex, query: str, generation: int) -> None:
        paths = await asyncio.to_thread(index.search, query, MAX_ITEMS)
        if generation == self._generation:
            self._show(self._resources(query) + [CompletionItem.for_path(p) for p in paths])

    def _resources(self, query: str) -> list[CompletionItem]:
        """The MCP servers' resources whose ``server:uri`` or name holds what was typed."""
        session = self._host.session
        if session is None:
            return []
        typed = query.lower()
        return [
            CompletionItem.for_resource(resource)
            for resource in session.mcp_resources()
            if typed in f"{resource.server}:{resource.uri} {resource.name}".lower()
        ][:MAX_ITEMS]

    # --- keys ------------------------------------------------------------------------------------

    def on_key(self, key: str) -> bool:
        """The editor's key filter: True when the open list used the key."""
        if not self.popup.is_open or key not in ("up", "down", "tab", "enter"):
            return False
        # Keys typed just before this one may not have updated the list yet (the editor's
        # change messages reach the app later): bring it up to date first.
        self.update()
        if not self.popup.is_open:
            return False
        match key:
            case "up":
                self.popup.move(-1)
            case "down":
                self.popup.move(1)
            case "tab":
                self.accept(run=False)
            case "enter":
                self.accept(run=True)
            case _:
                return False
        return True

    def accept(self, *, run: bool) -> None:
        """Put the highlighted item in place of what was typed; with ``run``, a command that
        takes no required argument is sent at once."""
        item = self.popup.selected()
        trigger = self.trigger
        self.close()
        if item is None or trigger is None:
            return
        editor = self.editor
        row, column = editor.cursor_location
        line = editor.document.get_line(row)
        new_line, new_column = apply_completion(line, column, trigger, item.value)
        editor.replace(new_line, (row, 0), (row, len(line)))
        editor.move_cursor((row, new_column))
        if run and trigger.kind == "command" and not self._needs_argument(item.value):
            editor.submit()

    def _needs_argument(self, value: str) -> bool:
        command = self._host.commands.current().get(value)
        hint = command.argument_hint if command is not None else None
        return bool(hint and hint.startswith("<"))
