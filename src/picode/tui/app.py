"""The Textual app: lays out the widgets, owns the keys, and hands events to the router.

It holds no agent logic: typing becomes ``prompt`` / ``steer`` / ``follow_up`` calls, keys
become session commands, and session events become widget updates (``EventRouter``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from picode.tui.controllers.interrupt import InterruptController
from picode.tui.themes import DEFAULT_THEME, default_tokens, load_themes
from picode.tui.widgets.editor import PromptEditor
from picode.tui.widgets.footer import FooterInfo, InfoFooter, display_path, git_branch
from picode.tui.widgets.notice import NoticeLevel, NoticeView, WelcomeView
from picode.tui.widgets.queue import QueueView
from picode.tui.widgets.status import StatusLine
from picode.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from picode.ai.types import Message
    from picode.session.agent_session import AgentSession
    from picode.tui.config import TuiConfig
    from picode.tui.controllers.router import EventRouter

log = logging.getLogger(__name__)

DOUBLE_PRESS_S = 1.0
CLOSE_TIMEOUT_S = 10.0
PLACEHOLDER = "Ask picode…  (enter to send, shift+enter or ctrl+j for a new line)"


class PicodeApp(App[int]):
    CSS_PATH = "styles/app.tcss"
    ENABLE_COMMAND_PALETTE = False
    AUTO_FOCUS = "#editor"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", id="interrupt", priority=True, show=False),
        Binding("ctrl+c", "clear_or_quit", "Clear / quit", id="clear_or_quit", priority=True),
        Binding("ctrl+d", "quit_if_empty", "Quit", id="quit_if_empty", priority=True),
        Binding(
            "shift+tab", "cycle_thinking", "Thinking level", id="cycle_thinking", priority=True
        ),
        Binding("ctrl+p", "cycle_model", "Next model", id="cycle_model", priority=True),
        Binding(
            "ctrl+t", "toggle_thinking", "Thinking blocks", id="toggle_thinking", priority=True
        ),
        Binding("ctrl+o", "expand_tools", "Expand tool output", id="expand_tools", priority=True),
        Binding("alt+up", "dequeue", "Edit queued messages", id="dequeue", priority=True),
    ]

    def __init__(self, config: TuiConfig) -> None:
        super().__init__()
        self.config = config
        self.session: AgentSession | None = None
        self._clock = config.clock
        self._cwd_label = config.cwd_label or display_path(config.cwd)
        self._branch = git_branch(config.cwd) if config.branch is None else config.branch or None
        self.transcript = Transcript(max_entries=config.max_entries)
        self.status = StatusLine(clock=config.clock)
        self.queue = QueueView()
        self.editor = PromptEditor(placeholder=PLACEHOLDER)
        self.info_footer = InfoFooter(self._footer_info())
        #: Built with the session: its imports (agent events, Markdown) wait for the first frame.
        self.router: EventRouter | None = None
        self.interrupts = InterruptController(
            session=lambda: self.session,
            restore_to_editor=self.editor.insert_before,
            on_abort=self._mark_interrupted,
        )
        self._waiting_prompts: list[tuple[str, bool]] = []
        self._last_ctrl_c: float | None = None
        self._shutting_down = False
        self._unsubscribe: list[Callable[[], None]] = []
        self._theme_problems = self._register_themes()
        self._theme_fallback: str | None = None
        # Chosen before the stylesheet is first parsed: switching later re-parses all CSS.
        self.theme = self._initial_theme()

    # --- layout and start-up ---------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.transcript
        yield self.queue
        yield self.status
        yield self.editor
        yield self.info_footer

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return default_tokens(self.current_theme.dark)

    def on_mount(self) -> None:
        self._report_theme_problems()
        self._apply_keymap()
        self.transcript.add(WelcomeView(self.config.version, self.config.model.id, self._cwd_label))
        for warning in self.config.warnings:
            self.report(warning, "warning")
        if self.config.initial_prompt:
            self._waiting_prompts.append((self.config.initial_prompt, False))
        self.call_after_refresh(self._after_first_frame)

    def _after_first_frame(self) -> None:
        if self.config.exit_after_first_frame:
            self.exit(0)
            return
        if self.config.warm_provider:
            self.run_worker(self._warm_provider(), name="warm-provider", exit_on_error=False)
        self.run_worker(self._open_session(), name="open-session", exit_on_error=False)

    async def _warm_provider(self) -> None:
        from picode.ai.builder import import_provider
        from picode.ai.stream import provider_module

        module = provider_module(self.config.model.api)
        if module is not None:
            try:
                await import_provider(module)
            except Exception:  # the first request reports it properly
                log.debug("warming %s failed", module, exc_info=True)

    async def _open_session(self) -> None:
        from picode.tui.controllers.router import EventRouter

        try:
            session = await self.config.open_session()
        except Exception as exc:
            log.debug("session failed to open", exc_info=True)
            self.report(f"Could not start the session: {exc}", "error")
            return
        self.router = router = EventRouter(
            transcript=self.transcript,
            status=self.status,
            queue=self.queue,
            host=self,
            history=self._history,
        )
        self.session = session
        self._unsubscribe.append(session.subscribe(router.handle))
        router.show_history(session.display_tail(self.config.max_entries))
        self.refresh_footer()
        waiting, self._waiting_prompts = self._waiting_prompts, []
        for text, follow_up in waiting:
            self._submit(text, follow_up)

    def report(self, text: str, level: NoticeLevel = "info") -> None:
        """A line in the transcript for something the person should read."""
        self.transcript.add(NoticeView(text, level))

    def _mark_interrupted(self) -> None:
        if self.router is not None:
            self.router.mark_interrupted()

    def _history(self) -> list[Message]:
        return self.session.display_tail(self.config.max_entries) if self.session else []

    # --- themes and keys -----------------------------------------------------------------

    def _register_themes(self) -> list[str]:
        found = load_themes(self.config.config_dir)
        for theme in found.themes.values():
            self.register_theme(theme)
        return found.problems

    def _initial_theme(self) -> str:
        wanted = self.config.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            return wanted
        if not any(wanted in problem for problem in self._theme_problems):
            names = ", ".join(sorted(n for n in self.available_themes if "-" not in n))
            self._theme_fallback = (
                f"Unknown theme '{wanted}' (available: {names}); using '{DEFAULT_THEME}'."
            )
        return DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"

    def _report_theme_problems(self) -> None:
        for problem in self._theme_problems:
            self.notify(problem, title="Theme not loaded", severity="error", timeout=10)
        if self._theme_fallback:
            self.notify(self._theme_fallback, severity="warning", timeout=10)

    def _apply_keymap(self) -> None:
        path = self.config.keymap_file
        if path is None or not path.exists():
            return
        from picode.tui.keymap import apply_keymap_file  # only when there is a file to read

        for problem in apply_keymap_file(self, path, self.BINDINGS):
            self.notify(problem, title="Keymap", severity="warning", timeout=10)

    # --- session → footer ------------------------------------------------------------------

    def _footer_info(self) -> FooterInfo:
        session = self.session
        if session is None:
            model = self.config.model
            return FooterInfo(
                cwd=self._cwd_label,
                branch=self._branch,
                context_window=model.context_window,
                model=model.id,
                thinking=self.config.thinking,
                reasoning=model.reasoning,
            )
        usage = session.usage
        model = session.model
        return FooterInfo(
            cwd=self._cwd_label,
            branch=self._branch,
            session_name=session.session_name,
            input_tokens=usage.input,
            output_tokens=usage.output,
            cache_read=usage.cache_read,
            cost=usage.cost,
            context_tokens=session.context_tokens,
            context_window=session.context_window,
            model=model.id,
            thinking=session.thinking,
            reasoning=model.reasoning,
        )

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
        self._submit(message.text, message.follow_up)

    def _submit(self, text: str, follow_up: bool) -> None:
        session = self.session
        if session is None:
            self._waiting_prompts.append((text, follow_up))
            self.status.set_notice("Starting the session… your message will be sent")
            return
        self.status.set_notice(None)
        if session.is_running:
            if follow_up:
                session.follow_up(text)
            else:
                session.steer(text)
            return
        self.run_worker(self._prompt(session, text), group="prompt", exit_on_error=False)

    async def _prompt(self, session: AgentSession, text: str) -> None:
        from picode.agent.agent import AgentBusyError

        router = self.router
        assert router is not None  # built before the session is published
        seen_before = router.user_messages
        try:
            await session.prompt(text)
        except AgentBusyError:
            session.steer(text)
        except Exception as exc:
            log.debug("prompt failed", exc_info=True)
            self.report(str(exc) or type(exc).__name__, "error")
            if router.user_messages == seen_before:
                # Nothing was sent: give the text back rather than lose it.
                self.editor.insert_before([text])

    # --- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        match action:
            case "interrupt":
                return self.interrupts.can_handle()
            case "quit_if_empty":
                return self.editor.is_empty
            case "dequeue":
                return bool(self.queue.steering or self.queue.follow_ups)
            case "cycle_model" | "cycle_thinking":
                return self.session is not None or action == "cycle_thinking"
        return True

    def action_interrupt(self) -> None:
        self.interrupts.handle()

    def action_clear_or_quit(self) -> None:
        now = self._clock()
        if self._last_ctrl_c is not None and now - self._last_ctrl_c <= DOUBLE_PRESS_S:
            self._last_ctrl_c = None
            self.run_worker(self.shutdown(), exit_on_error=False)
            return
        self._last_ctrl_c = now
        self.editor.reset()
        self.status.set_notice("Press ctrl+c again to quit")
        self.set_timer(DOUBLE_PRESS_S, self._forget_ctrl_c)

    def _forget_ctrl_c(self) -> None:
        if self.status.notice is not None and self.status.notice[0].startswith("Press ctrl+c"):
            self.status.set_notice(None)

    def action_quit_if_empty(self) -> None:
        self.run_worker(self.shutdown(), exit_on_error=False)

    async def action_quit(self) -> None:
        await self.shutdown()

    def action_cycle_thinking(self) -> None:
        if self.session is not None:
            self.session.cycle_thinking_level()

    def action_cycle_model(self) -> None:
        session = self.session
        if session is None:
            return
        before = session.model.ref
        if session.cycle_model(1).ref == before:
            self.notify("No other model has an API key configured.", timeout=4)

    def action_toggle_thinking(self) -> None:
        self.transcript.set_thinking_collapsed(not self.transcript.thinking_collapsed)

    def action_expand_tools(self) -> None:
        self.transcript.set_tools_expanded(not self.transcript.tools_expanded)

    def action_dequeue(self) -> None:
        if self.session is not None:
            self.editor.insert_before(self.session.clear_queues())
            self.editor.focus()

    async def shutdown(self) -> None:
        """Quit: abort what runs, let the session save, then leave."""
        if self._shutting_down:
            return
        self._shutting_down = True
        session = self.session
        if session is not None:
            if session.is_running:
                self.status.set_notice("Stopping and saving…")
            try:
                await asyncio.wait_for(session.close(), CLOSE_TIMEOUT_S)
            except Exception:
                log.warning("closing the session failed", exc_info=True)
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self.exit(0)
