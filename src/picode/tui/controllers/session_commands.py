"""Commands about the session itself: /new, /resume, /fork, /compact, /session, /name, and
the session picker ``picode -r`` shows before anything is opened."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from picode.tui.controllers.command_error import CommandError, session_of
from picode.tui.widgets.info import InfoView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.session.store import SessionSummary
    from picode.tui.controllers.host import CommandHost


class SessionCommands:
    def __init__(self, host: CommandHost) -> None:
        self.host = host

    def _session(self) -> AgentSession:
        return session_of(self.host)

    # --- switching ------------------------------------------------------------------------

    async def new(self, argument: str) -> None:
        await self._session().new_session()

    async def resume(self, argument: str) -> None:
        session = self._session()
        if argument:
            await self._switch(session, argument)
            return
        from picode.tui.pickers import SessionPicker

        picker = SessionPicker(session.store, session.cwd, current_id=session.session_id)
        chosen: SessionSummary | None = await self.host.push_screen_wait(picker)
        if chosen is None:
            return
        if chosen.id == session.session_id:
            self.host.report("That is the session you are in.")
            return
        await self._switch(session, str(chosen.path))
        self._note_other_folder(chosen.cwd, session.cwd)

    async def _switch(self, session: AgentSession, id_or_path: str) -> None:
        from picode.session.store import AmbiguousSessionError, SessionNotFoundError

        try:
            await session.switch_session(id_or_path)
        except (SessionNotFoundError, AmbiguousSessionError, OSError, ValueError) as exc:
            raise CommandError(f"Could not resume {id_or_path}: {exc}") from None
        label = session.session_name or session.session_id or id_or_path
        self.host.report(f"Resumed session {label}.")

    def _note_other_folder(self, recorded_in: Path, cwd: Path) -> None:
        if str(recorded_in) and recorded_in != cwd:
            self.host.report(
                f"This session was recorded in {recorded_in}; picode keeps working in {cwd}.",
                "warning",
            )

    async def fork(self, argument: str) -> None:
        session = self._session()
        entries = session.user_messages_for_fork()
        if not entries:
            raise CommandError(
                "Nothing to fork from yet: fork starts before one of your saved messages."
            )
        from picode.tui.pickers import ForkPicker

        entry_id: str | None = await self.host.push_screen_wait(ForkPicker(entries))
        if entry_id is None:
            return
        try:
            text = await session.fork(entry_id)
        except (ValueError, OSError) as exc:
            raise CommandError(f"Could not fork: {exc}") from None
        self.host.report(
            f"Forked to new session {session.session_id} from before that message; edit it "
            "and press Enter."
        )
        if text:
            self.host.restore_text(text)

    async def compact(self, argument: str) -> None:
        from picode.agent.agent import AgentBusyError

        keep, instructions = parse_compact_argument(argument)
        try:
            await self._session().compact(instructions or None, keep)
        except AgentBusyError as exc:
            raise CommandError(str(exc)) from None

    # --- information ------------------------------------------------------------------------

    async def info(self, argument: str) -> None:
        self.host.transcript.add(InfoView("Session", session_lines(self._session())))

    async def name(self, argument: str) -> None:
        session = self._session()
        name = " ".join(argument.split())
        if not name:
            current = session.session_name
            now = f"It is called “{current}”. " if current else ""
            raise CommandError(f"{now}Usage: /name <name>")
        if not session.persistent:
            raise CommandError("This session is not saved (--no-session), so it cannot be named.")
        session.set_session_name(name)
        self.host.report(f"Session named “{name}”.")

    # --- picode -r ----------------------------------------------------------------------------

    async def open_picked(
        self, open_session: Callable[..., Awaitable[AgentSession]], sessions_dir: Path | None
    ) -> AgentSession:
        """``picode -r``: the session picker before any session is open, then
        ``open_session(path)`` for the choice, or ``open_session("new")`` after Esc."""
        from picode.session.store import SessionStore
        from picode.tui.pickers import SessionPicker

        if sessions_dir is None:
            from picode.session.paths import resolve_paths

            sessions_dir = resolve_paths().sessions_dir
        picker = SessionPicker(SessionStore(sessions_dir), self.host.config.cwd)
        chosen: SessionSummary | None = await self.host.push_screen_wait(picker)
        if chosen is None:
            self.host.report("No session chosen: this is a new one.")
            return await open_session("new")
        try:
            session = await open_session(str(chosen.path))
        except Exception as exc:
            self.host.report(
                f"Could not resume {chosen.path}: {exc}; this is a new session.", "error"
            )
            return await open_session("new")
        self._note_other_folder(chosen.cwd, session.cwd)
        return session


def session_lines(session: AgentSession) -> list[str | tuple[str, str]]:
    """What ``/session`` shows: where it is saved, what it holds, what it cost."""
    from picode.ai.types import AssistantMessage, ToolResultMessage, UserMessage
    from picode.tui.widgets.footer import format_cost

    path = session.session_file_path
    if path is not None:
        where = str(path)
    elif session.persistent:
        where = "not written yet (the file appears with the first message)"
    else:
        where = "not saved (--no-session)"
    counts = {"user": 0, "assistant": 0, "tool results": 0}
    for message in session.messages:
        if isinstance(message, UserMessage):
            counts["user"] += 1
        elif isinstance(message, AssistantMessage):
            counts["assistant"] += 1
        elif isinstance(message, ToolResultMessage):
            counts["tool results"] += 1
    in_context = ", ".join(f"{count:,} {role}" for role, count in counts.items())
    usage = session.usage
    window = session.context_window
    used = session.context_tokens
    percent = f" ({used / window:.0%})" if window else ""
    return [
        ("File", where),
        ("ID", session.session_id or "—"),
        ("Name", session.session_name or "—"),
        ("Messages", f"{session.display_count:,} in all · in context: {in_context}"),
        (
            "Tokens",
            f"in {usage.input:,} · out {usage.output:,} · cache read {usage.cache_read:,} · "
            f"cache write {usage.cache_write:,}",
        ),
        ("Cost", format_cost(usage.cost)),
        ("Context", f"{used:,} of {window:,} tokens{percent}"),
        ("Model", f"{session.model.ref} · thinking {session.thinking_label}"),
    ]


KEEP_USAGE = "--keep takes a number of tokens to keep verbatim, e.g. /compact --keep 4000"


def parse_compact_argument(argument: str) -> tuple[int | None, str]:
    """``[--keep N] [instructions]`` → (tokens to keep or None, instructions)."""
    words = argument.split(maxsplit=2)
    if not words or words[0] not in ("--keep", "-k"):
        return None, argument.strip()
    if len(words) < 2:
        raise CommandError(KEEP_USAGE)
    number = words[1].lower().replace(",", "").replace("_", "")
    scale = 1000 if number.endswith("k") else 1
    try:
        keep = int(float(number.removesuffix("k")) * scale)
    except ValueError:
        raise CommandError(KEEP_USAGE) from None
    if keep <= 0:
        raise CommandError(KEEP_USAGE)
    return keep, words[2] if len(words) > 2 else ""
