"""What Enter does with the typed text: a slash command, a ``!cmd``, a prompt for the
session, or a message queued for the run in progress. While the session is still
opening, messages wait here and go out, in order, once it is open; if it cannot open,
they go back to the editor. Nothing typed is lost on any path."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from picode.tui.controllers.attachments import collect_attachments, mentions_files
from picode.tui.controllers.shell import parse_shell
from picode.tui.widgets.notice import NoticeView

if TYPE_CHECKING:
    from picode.ai.types import UserContent
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import Reporter
    from picode.tui.controllers.router import EventRouter
    from picode.tui.controllers.shell import ShellRunner
    from picode.tui.controllers.warmup import ProviderWarmup
    from picode.tui.widgets.editor import PromptEditor
    from picode.tui.widgets.notice import NoticeLevel
    from picode.tui.widgets.status import StatusLine
    from picode.tui.widgets.transcript import Transcript

log = logging.getLogger(__name__)

NO_SESSION_TEXT = (
    "No session is open: /new starts a new one, /resume picks one (or /resume ID). "
    "Your message stays in the editor."
)


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class KeyAsker(Protocol):
        async def ask_and_save(
            self, session: AgentSession, provider: str, why: str | None = None
        ) -> bool: ...

    class CommandRunner(Protocol):
        @property
        def keys(self) -> KeyAsker: ...

        def try_run(self, text: str) -> bool: ...

    class SubmitHost(Reporter, Protocol):
        """What sending a message touches."""

        session: AgentSession | None
        router: EventRouter | None
        status: StatusLine
        shell: ShellRunner

        @property
        def transcript(self) -> Transcript: ...

        @property
        def editor(self) -> PromptEditor: ...

        @property
        def commands(self) -> CommandRunner: ...

        @property
        def warmup(self) -> ProviderWarmup: ...

        def close_completion(self) -> None: ...

        def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...


class Submitter:
    def __init__(self, host: SubmitHost) -> None:
        self._host = host
        #: (text, follow_up) sent before the session was open, oldest first.
        self._waiting: list[tuple[str, bool]] = []
        #: The session could not be opened: typing asks for /new or /resume instead.
        self.start_failed = False
        #: The lines saying why the start failed: gone once a session opens after all.
        self._failure_notes: list[NoticeView] = []

    def session_opened(self) -> None:
        """The lines about a failed start go, and what waited for the session goes out."""
        for note in self._failure_notes:
            self._host.transcript.remove_entry(note)
        self._failure_notes.clear()
        self._send_waiting()

    def session_failed(self, exc: Exception) -> None:
        """The app stays usable: what was typed goes back to the editor, and the lines
        say that /new and /resume work."""
        host = self._host
        self.start_failed = True
        self._report_no_session(f"Could not start the session: {exc}", "error")
        self._report_no_session(NO_SESSION_TEXT, "warning")
        host.status.set_notice(None)
        waiting = self._take_back_waiting()
        if waiting:
            host.editor.insert_before(waiting)
            host.editor.focus()

    def _report_no_session(self, text: str, level: NoticeLevel) -> None:
        view = NoticeView(text, level)
        self._failure_notes.append(view)
        self._host.transcript.add(view)

    def wait_for_session(self, text: str, follow_up: bool = False) -> None:
        self._waiting.append((text, follow_up))

    def hold_until_open(self, text: str, follow_up: bool = False) -> None:
        """Sent before the session is open: goes out, in order, once it is."""
        self.wait_for_session(text, follow_up)
        what = (
            "your command will run"
            if text.lstrip()[:1] in ("/", "!")
            else "your message will be sent"
        )
        self._host.status.set_notice(f"Starting the session… {what}")

    def _send_waiting(self) -> None:
        """The session is open: what was sent meanwhile goes out, in order."""
        waiting, self._waiting = self._waiting, []
        for text, follow_up in waiting:
            self.submit(text, follow_up)

    def _take_back_waiting(self) -> list[str]:
        """The session could not open: the texts that waited for it, to edit again."""
        waiting, self._waiting = self._waiting, []
        return [text for text, _ in waiting]

    def submit(self, text: str, follow_up: bool) -> None:
        host = self._host
        host.close_completion()
        host.transcript.scroll_end(animate=False)  # back to the newest, anchored again
        # Only a leading slash makes a command (``CommandRegistry.parse``): a message is
        # sent without building the command controller (the pickers, /rewind, ...).
        if text.strip().startswith("/") and host.commands.try_run(text):
            return
        session = host.session
        shell = parse_shell(text)
        if shell is not None:
            self._run_shell(session, text, *shell)
            return
        if session is None and self.start_failed:
            self._report_no_session(NO_SESSION_TEXT, "warning")
            host.restore_text(text)
            return
        if session is None:
            self.hold_until_open(text, follow_up)
            return
        host.status.set_notice(None)
        if session.is_running and not mentions_files(text):
            _queue(session, text, follow_up, [])  # at once: keeps the order of what was typed
            return
        host.run_worker(self._prompt(session, text, follow_up), group="prompt", exit_on_error=False)

    def _run_shell(
        self, session: AgentSession | None, text: str, command: str, add_to_context: bool
    ) -> None:
        host = self._host
        if not command:
            host.report("Type a command after ! (e.g. !git status).", "warning")
            host.restore_text(text)
        elif session is None and self.start_failed:
            self._report_no_session(NO_SESSION_TEXT, "warning")
            host.restore_text(text)
        elif session is None:
            self.hold_until_open(text)
        else:
            host.run_worker(host.shell.run(command, add_to_context), exit_on_error=False)

    async def _prompt(self, session: AgentSession, text: str, follow_up: bool) -> None:
        from picode.agent.agent import AgentBusyError

        host = self._host
        router = host.router
        assert router is not None  # built before the session is published
        attachments = await collect_attachments(session, text, host, router)
        if attachments is None:
            return
        if session.is_running:
            _queue(session, text, follow_up, attachments)
            return
        seen_before = router.user_messages
        host.warmup.announce(session.model)
        try:
            await session.prompt(text, attachments)
        except AgentBusyError:
            session.steer(text, attachments)
        except Exception as exc:
            if await self._key_given(session, exc):
                await self._prompt(session, text, follow_up)  # sent as it was meant to be
                return
            log.debug("prompt failed", exc_info=True)
            host.report(str(exc) or type(exc).__name__, "error")
            if router.user_messages == seen_before:
                # Nothing was sent: give the text back rather than lose it.
                host.editor.insert_before([text])
                router.show_notes_for_message()

    async def _key_given(self, session: AgentSession, error: Exception) -> bool:
        """A message refused for want of a key its provider takes: ask for one, and say
        whether it is there now. (A missing endpoint is not a key: that is only reported.)"""
        from picode.session.models import MissingApiKeyError

        model = session.model
        info = session.provider_info(model.provider)
        if not isinstance(error, MissingApiKeyError) or info is None or not info.needs_key:
            return False
        if session.has_key(model):
            return False  # what is missing is elsewhere (an endpoint's address)
        why = (
            f"Your message needs a key for {model.provider}, and none is set. Paste one to keep it"
            f" for next time and send the message; esc leaves the message in the editor."
        )
        return await self._host.commands.keys.ask_and_save(session, model.provider, why)


def _queue(
    session: AgentSession, text: str, follow_up: bool, attachments: list[UserContent]
) -> None:
    if follow_up:
        session.follow_up(text, attachments)
    else:
        session.steer(text, attachments)
