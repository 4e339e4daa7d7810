"""The Textual app: lays out the widgets, owns the keys, and hands events to the router.

It holds no agent logic: typing becomes ``prompt`` / ``steer`` / ``follow_up`` calls, keys
become session commands, and session events become widget updates (``EventRouter``).
Commands, completion, ``!cmd``, approvals and history paging live in ``controllers/``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from functools import cached_property, partial
from typing import TYPE_CHECKING, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from picode.tui.bindings import APP_BINDINGS
from picode.tui.controllers.approvals import ApprovalController
from picode.tui.controllers.history import HistoryPager
from picode.tui.controllers.interrupt import InterruptController
from picode.tui.controllers.quit import QuitController
from picode.tui.controllers.shell import ShellRunner
from picode.tui.controllers.submit import Submitter
from picode.tui.themes import default_tokens, initial_theme, load_themes
from picode.tui.widgets.editor_placeholder import EditorPlaceholder, after_typed_keys
from picode.tui.widgets.footer import (
    FooterInfo,
    InfoFooter,
    display_path,
    footer_info,
    git_branch,
)
from picode.tui.widgets.notice import NoticeLevel, NoticeView, WelcomeView
from picode.tui.widgets.output_below import OutputBelow
from picode.tui.widgets.queue import QueueView
from picode.tui.widgets.status import StatusLine
from picode.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from textual.driver import Driver
    from textual.widgets import OptionList, TextArea

    from picode.session.agent_session import AgentSession
    from picode.tui.completion.popup import CompletionPopup
    from picode.tui.config import TuiConfig
    from picode.tui.controllers.commands import CommandController
    from picode.tui.controllers.completion import CompletionController
    from picode.tui.controllers.interrupt import Popup
    from picode.tui.controllers.notify import TerminalNotifier
    from picode.tui.controllers.router import EventRouter
    from picode.tui.controllers.search import TranscriptSearch
    from picode.tui.controllers.trust import TrustController
    from picode.tui.controllers.warmup import ProviderWarmup
    from picode.tui.widgets.editor import PromptEditor
    from picode.tui.widgets.todos import TodoPanel

log = logging.getLogger(__name__)

PLACEHOLDER = "Ask picode…  (enter to send, / commands, @ files, !cmd shell, ctrl+g editor)"


class PicodeApp(App[int]):
    CSS_PATH = "styles/app.tcss"
    ENABLE_COMMAND_PALETTE = False
    AUTO_FOCUS = "#editor, #editor-placeholder"

    #: Each binding's id is its action's name: the id keymap.toml remaps (tui/bindings.py).
    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)
    #: Actions of the bindings above: switched off while a picker or approval is shown.
    OWN_ACTIONS: ClassVar[frozenset[str]] = frozenset(
        b.action for b in BINDINGS if isinstance(b, Binding)
    )

    def __init__(self, config: TuiConfig) -> None:
        super().__init__()
        if self.no_color:
            from picode.tui.no_color import without_colour

            without_colour(self)
        self.config = config
        self.session: AgentSession | None = None
        self._cwd_label = config.cwd_label or display_path(config.cwd)
        self._branch = git_branch(config.cwd) if config.branch is None else config.branch or None
        self.transcript = Transcript(max_entries=config.max_entries)
        self.output_below = OutputBelow(self.transcript)
        self.status = StatusLine(clock=config.clock)
        self.queue = QueueView()
        self.info_footer = InfoFooter(self._footer_info())
        #: Built with the session: its imports (agent events, Markdown) wait for the first frame.
        self.router: EventRouter | None = None
        # Each controller is given the app as the small host Protocol it declares.
        self.interrupts = InterruptController(self, clock=config.clock)
        #: Set up right after the first frame (``_start_completion``): not needed before.
        self.completion: CompletionController | None = None
        self.completion_popup: CompletionPopup | None = None
        self.shell = ShellRunner(self, cwd=config.cwd)
        self.approvals = ApprovalController(self, clock=config.clock)
        self.history = HistoryPager(self)
        #: Passed to the clipboard tools (tests point PATH at fakes); None = os.environ.
        self.clipboard_env: Mapping[str, str] | None = None
        self.keymap_applied: dict[str, str] = {}
        self.submitter = Submitter(self)
        #: Printed to the terminal after the app exits: how to come back to the session.
        self.resume_hint: str | None = None
        self.quitter = QuitController(self, clock=config.clock)
        self.unsubscribers: list[Callable[[], None]] = []
        found = load_themes(config.config_dir)
        for loaded in found.themes.values():
            self.register_theme(loaded)
        self._theme_names, self._theme_problems = sorted(found.themes), found.problems
        # Chosen before the stylesheet is first parsed: switching later re-parses all CSS.
        self.theme, self._theme_fallback = initial_theme(
            config.theme, self.available_themes, self._theme_problems
        )

    # --- layout and start-up ---------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, but on POSIX one whose Esc is not held for 100 ms (tui/driver.py)."""
        from textual import constants

        if constants.DRIVER is not None or os.name != "posix":
            return super().get_driver_class()
        from picode.tui.driver import PromptEscDriver

        return PromptEscDriver

    def compose(self) -> ComposeResult:
        yield self.transcript  # the "new output below" row comes after the first frame
        yield self.queue
        yield self.status
        yield EditorPlaceholder(PLACEHOLDER)  # the editor takes its place after this frame
        yield self.info_footer

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return default_tokens(self.current_theme.dark)

    def on_mount(self) -> None:
        self.app_resume_signal.subscribe(self, self._repaint_after_resume)
        self._report_theme_problems()
        self._apply_keymap()
        self.transcript.add(self._welcome())
        for warning in self.config.warnings:
            self.report(warning, "warning")
        if self.config.initial_prompt:
            self.submitter.wait_for_session(self.config.initial_prompt)
        self.call_after_refresh(self._after_first_frame)

    def _welcome(self) -> WelcomeView:
        model = self.session.model.id if self.session is not None else self.config.model.id
        return WelcomeView(self.config.version, model, self._cwd_label)

    async def _after_first_frame(self) -> None:
        if self.config.exit_after_first_frame:
            self.exit(0)
            return
        self.warmup.begin(self.config.model.api, warm=self.config.warm_provider)
        await self._mount_editor()
        if (keys := self.keymap_applied.get("scroll_to_end")) is not None:
            self.output_below.set_key(keys.split(",")[0])  # the row names the key to press
        # Not awaited: a quit may already be on its way, and the row follows once mounted.
        self.mount(self.output_below, after=self.transcript)
        self._start_completion()
        self.start_session()

    @cached_property
    def search(self) -> TranscriptSearch:
        from picode.tui.controllers.search import TranscriptSearch

        return TranscriptSearch(self)

    @cached_property
    def warmup(self) -> ProviderWarmup:
        from picode.tui.controllers.warmup import ProviderWarmup

        return ProviderWarmup(self)

    @cached_property
    def editor(self) -> PromptEditor:
        """Built on first use (at the latest right after the first frame, by
        ``_mount_editor``): its ``TextArea`` modules are not needed to draw that frame."""
        from picode.tui.widgets.editor import PromptEditor

        return PromptEditor(placeholder=PLACEHOLDER)

    async def _mount_editor(self) -> None:
        await self.query_one(EditorPlaceholder).hand_over(self.editor)

    @cached_property
    def trust_controller(self) -> TrustController:
        from picode.session.paths import resolve_paths
        from picode.tui.controllers.trust import TrustController

        assess = self.config.assess_trust
        assert assess is not None, "only built when the launcher assesses trust"
        return TrustController(self, assess=assess, paths=resolve_paths)

    @cached_property
    def commands(self) -> CommandController:
        from picode.tui.controllers.commands import CommandController

        return CommandController(self)

    def _start_completion(self) -> None:
        from picode.tui.controllers.completion import CompletionController

        self.completion = CompletionController.start(self, self.config.cwd)
        self.completion_popup = self.completion.popup

    def start_session(self, spec: str | None = None, pick: bool | None = None) -> None:
        """Open the session (tui/session_opener.py): at start, then after a failed start a
        new one (``/new``, ``spec`` "new") or a picked one (``/resume``)."""
        from picode.tui.session_opener import open_session

        opening = open_session(self, spec, pick)
        self.run_worker(opening, name="open-session", exit_on_error=False)

    def session_switched(self, reason: str) -> None:
        if reason == "new":
            self.transcript.add(self._welcome())
        self.history.show_tail()

    def report(self, text: str, level: NoticeLevel = "info") -> None:
        """A line in the transcript for something the person should read."""
        self.transcript.add(NoticeView(text, level))

    @property
    def start_failed(self) -> bool:
        """The session could not be opened: typing asks for /new or /resume instead."""
        return self.submitter.start_failed

    def hold_until_open(self, text: str) -> None:
        """A command or ``!cmd`` sent while the session opens runs once it is open."""
        self.submitter.hold_until_open(text)

    def restore_text(self, text: str) -> None:
        """Give typed text back to the editor (a prompt that could not be sent)."""
        if text.strip():
            self.editor.insert_before([text])
            self.editor.focus()

    def popups(self) -> list[Popup]:
        """What Esc closes before it interrupts, checked last to first."""
        popups: list[Popup] = [self.shell]
        if "search" in self.__dict__:  # built on the first ctrl+f
            popups.append(self.search)
        if self.completion is not None:
            popups.append(self.completion)
        popups.append(self.approvals)
        return popups

    @cached_property
    def todo_panel(self) -> TodoPanel:
        """Mounted when a session opens: the first frame has no list to show."""
        from picode.tui.widgets.todos import TodoPanel

        panel = TodoPanel()
        self.mount(panel, before=self.queue)
        return panel

    @cached_property
    def notifier(self) -> TerminalNotifier:
        from picode.tui.controllers.notify import TerminalNotifier

        return TerminalNotifier(self)

    def mark_interrupted(self) -> None:
        self.notifier.run_aborted()
        if self.router is not None:
            self.router.mark_interrupted()

    def open_rewind(self) -> None:
        self.commands.try_run("/rewind")

    def write_terminal(self, data: str) -> None:
        if self._driver is not None:  # the driver's writer thread: between frames
            self._driver.write(data)

    def tool_waiting(self, call_id: str, waiting: bool) -> None:
        if self.router is not None and (view := self.router.tools.get(call_id)) is not None:
            view.set_awaiting(waiting)

    # --- themes and keys -----------------------------------------------------------------

    def theme_names(self) -> list[str]:
        return list(self._theme_names)

    def _report_theme_problems(self) -> None:
        for problem in self._theme_problems:
            self.notify(problem, title="Theme not loaded", severity="error", timeout=10)
        if self._theme_fallback:
            self.notify(self._theme_fallback, severity="warning", timeout=10)

    def _apply_keymap(self) -> None:
        if (path := self.config.keymap_file) is not None and path.exists():
            from picode.tui.keymap import apply_keymap  # only when there is a file to read

            result = apply_keymap(self, path, self.BINDINGS)
            self.keymap_applied.update(result.keymap)
            for problem in result.problems:
                self.notify(problem, title="Keymap", severity="warning", timeout=10)

    def refresh_completion(self) -> None:
        if self.completion is not None:
            self.completion.update(force=True)

    def hotkey_lines(self) -> list[str]:
        from picode.tui.keymap import hotkey_lines

        return hotkey_lines(self.BINDINGS, self.keymap_applied, self.config.keymap_file)

    # --- session → footer ------------------------------------------------------------------

    def _footer_info(self) -> FooterInfo:
        return footer_info(self._cwd_label, self._branch, self.session, self.config)

    def queued_messages(self) -> tuple[list[str], list[str]]:
        session = self.session
        if session is None:
            return [], []
        return session.queued_steering, session.queued_follow_ups

    def refresh_footer(self) -> None:
        self.info_footer.info = self._footer_info()
        self.info_footer.refresh()

    # --- typing ----------------------------------------------------------------------------

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self.submitter.submit(message.text, message.follow_up)

    def on_prompt_editor_paste_requested(self, _message: PromptEditor.PasteRequested) -> None:
        from picode.tui.controllers.paste_image import paste_image

        self.run_worker(paste_image(self), exit_on_error=False)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self.editor and self.completion is not None:
            self.completion.update()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if event.text_area is self.editor and self.completion is not None:
            self.completion.update()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if self.completion is not None and event.option_list is self.completion_popup:
            self.completion.accept(run=False)  # a click on the list
            self.editor.focus()

    def close_completion(self) -> None:
        if self.completion is not None:
            self.completion.close()

    # --- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.OWN_ACTIONS:
            # A picker or the approval prompt owns the keyboard (Esc reaches the prompt
            # through the interrupt chain).
            if len(self.screen_stack) > 1:
                return False
            if self.approvals.is_open() and action != "interrupt":
                return False
        match action:
            case "interrupt":
                return self.interrupts.can_handle()
            case "dequeue":
                return bool(self.queue.steering or self.queue.follow_ups)
            case "cycle_model" | "model_picker":
                return self.session is not None
            case "copy_selection":
                return bool(self.selected_text())
            case "clear_or_quit" | "quit_if_empty":
                # The search field has the keys then: ctrl+c/ctrl+d edit the query.
                return not ("search" in self.__dict__ and self.search.has_focus())
        return True

    def action_interrupt(self) -> None:
        self.interrupts.handle()

    def action_clear_or_quit(self) -> None:
        self._after_typed_keys(self.quitter.clear_or_quit)

    def _after_typed_keys(self, callback: Callable[[], object]) -> None:
        after_typed_keys(self, self.editor, callback)

    def selected_text(self) -> str:
        if self.editor.selected_text:
            return self.editor.selected_text
        return self.screen.get_selected_text() or ""

    def action_copy_selection(self) -> None:
        from picode.tui.clipboard import copy_selection

        if text := self.selected_text():
            copying = copy_selection(self, text, self.screen.clear_selection, self.clipboard_env)
            self.run_worker(copying, exit_on_error=False)

    def action_quit_if_empty(self) -> None:
        self._after_typed_keys(self._quit_if_still_empty)

    def _quit_if_still_empty(self) -> None:
        if self.editor.is_empty:
            self.quit_soon()
        else:
            self.editor.action_delete_right()  # what ctrl+d does to typed text

    def quit_soon(self) -> None:
        self.run_worker(self.shutdown(), exit_on_error=False)

    async def action_quit(self) -> None:
        await self.shutdown()

    def action_cycle_thinking(self) -> None:
        from picode.tui.controllers.model_keys import cycle_thinking

        if self.session is not None:
            cycle_thinking(self.session, self)

    def action_cycle_mode(self) -> None:
        from picode.tui.controllers.mode_keys import cycle_mode

        if self.session is not None:
            cycle_mode(self.session, self)

    def action_cycle_model(self) -> None:
        from picode.tui.controllers.model_keys import cycle_model

        if self.session is not None:
            cycle_model(self.session, self)

    def action_model_picker(self) -> None:
        self.close_completion()
        self.commands.try_run("/model")

    def action_toggle_thinking(self) -> None:
        self.output_below.hush()
        self.transcript.set_thinking_collapsed(not self.transcript.thinking_collapsed)

    def action_expand_tools(self) -> None:
        self.output_below.hush()
        self.transcript.set_tools_expanded(not self.transcript.tools_expanded)

    def action_scroll_up(self) -> None:
        self.transcript.scroll_pages(-1)

    def action_scroll_down(self) -> None:
        self.transcript.scroll_pages(1)

    def action_scroll_to_end(self) -> None:
        self.transcript.scroll_end(animate=False, immediate=True)

    def action_search(self) -> None:
        self.close_completion()
        self.search.open()

    def action_dequeue(self) -> None:
        if self.session is not None:
            self.editor.insert_before(self.session.clear_queues())
            self.editor.focus()

    def action_external_editor(self) -> None:
        from picode.tui.controllers.step_aside import edit_externally

        # Through the editor's queue: keys typed just before Ctrl+G are still waiting there.
        self.editor.call_later(partial(edit_externally, self))

    def action_suspend(self) -> None:
        from picode.tui.controllers.step_aside import suspend_if_still_empty

        self._after_typed_keys(partial(suspend_if_still_empty, self))

    def _repaint_after_resume(self, _app: object) -> None:
        # The shell drew over the screen while picode was stopped: draw all of it again.
        self.screen.refresh(layout=True)

    async def shutdown(self) -> None:
        """Quit: abort what runs, let the session save, then leave."""
        if not self.quitter.begin_shutdown():
            return
        if "notifier" in self.__dict__:  # made only once something needed it
            self.notifier.stop()
        self.approvals.refuse_all()
        self.shell.stop()
        self.resume_hint = await self.quitter.close_session(self.session)
        for unsubscribe in self.unsubscribers:
            unsubscribe()
        self.exit(0)
