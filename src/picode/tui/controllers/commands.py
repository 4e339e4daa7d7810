"""Slash commands: parse what was sent, run the built-in or extension command, report.

Every command runs in a worker (pickers wait for the person there). A command sent while
the session is still opening waits for it, as a prompt does. A command that cannot run (bad
argument, unknown name) says why; its text is in the history (Up recalls it to edit), not
left in the editor, where the next command typed would be appended to it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from picode.ai.thinking import runs_at
from picode.tui.completion.commands import (
    CommandRegistry,
    ParsedCommand,
    SlashCommand,
    UnknownCommandError,
)
from picode.tui.controllers.command_error import CommandError, session_of
from picode.tui.controllers.help import TemplateCommands, help_views
from picode.tui.controllers.key_commands import KeyCommands
from picode.tui.controllers.mcp_commands import McpCommands, McpPromptCommands
from picode.tui.controllers.rewind_commands import RewindCommands
from picode.tui.controllers.session_commands import SessionCommands
from picode.tui.controllers.skill_commands import SkillCommands
from picode.tui.widgets.info import InfoView

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.controllers.host import CommandHost

log = logging.getLogger(__name__)

#: Commands that work before the session has opened.
NO_SESSION_NEEDED = frozenset({"help", "hotkeys", "quit", "exit", "theme", "trust"})

Handler = Callable[[str], Awaitable[None]]


class CommandController:
    def __init__(self, host: CommandHost) -> None:
        self.host = host
        self.registry = CommandRegistry()
        self.sessions = SessionCommands(host)
        self.rewinds = RewindCommands(host)
        self.skills = SkillCommands(host, self.registry)
        self.keys = keys = KeyCommands(host)
        handlers: dict[str, Handler] = {
            "model": self.model,
            "thinking": self.thinking,
            "theme": self.theme,
            "help": self.help,
            "new": self.sessions.new,
            "clear": self.sessions.new,
            "resume": self.sessions.resume,
            "fork": self.sessions.fork,
            "rewind": self.rewinds.rewind,
            "undo": self.rewinds.undo,
            "tree": self.rewinds.tree,
            "label": self.rewinds.label,
            "compact": self.sessions.compact,
            "session": self.sessions.info,
            "context": self.context,
            "name": self.sessions.name,
            "copy": self.copy,
            "export": self.export,
            "login": keys.login,
            "logout": keys.logout,
            "mcp": McpCommands(host).run,
            "skills": self.skills.list,
            "hotkeys": self.hotkeys,
            "trust": self.trust,
            "sandbox": self.sandbox,
            "permissions": self.permissions,
            "plan": self.plan,
            "quit": self.quit,
            "exit": self.quit,
        }
        for name, handler in handlers.items():
            self.registry.set_handler(name, handler)
        self._extension_names: list[str] = []
        #: Every extension command name at the last sync, taken or refused.
        self._synced: set[str] = set()
        self.templates = TemplateCommands(host, self.registry)
        self.mcp_prompts = McpPromptCommands(host, self.registry)

    # --- extension commands --------------------------------------------------------------

    def sync_extensions(self, session: AgentSession) -> None:
        """List the session's extension commands (completion shows their descriptions)."""
        for name in self._extension_names:
            self.registry.remove(name)
        self._extension_names = []
        self._synced = set(session.extension_commands)
        for command in session.extension_commands.values():
            try:
                self.registry.add_extension_command(command.name, command.description)
            except ValueError as exc:
                self.host.report(f"Extension '{command.extension}': {exc}", "warning")
                continue
            self._extension_names.append(command.name)

    def current(self) -> CommandRegistry:
        """The registry, with commands an extension registered since the last look."""
        session = self.host.session
        if session is not None and set(session.extension_commands) != self._synced:
            self.sync_extensions(session)
        self.templates.sync(session)
        self.mcp_prompts.sync(session)
        self.skills.sync(session)
        return self.registry

    # --- dispatch ------------------------------------------------------------------------

    def try_run(self, text: str) -> bool:
        """Run ``text`` if it is a slash command; True when it was one (run or reported)."""
        opening = self.host.session is None and not self.host.start_failed
        try:
            parsed = self.current().parse(text)
        except UnknownCommandError as exc:
            if opening:  # perhaps a prompt template: the session knows once it is open
                self.host.hold_until_open(text)
            else:
                self.host.report(str(exc), "warning")
            return True
        if parsed is None or parsed.command.source == "template":
            return False  # a template is a message: the session expands it
        if opening and parsed.command.name not in NO_SESSION_NEEDED:
            self.host.hold_until_open(text)
            return True
        self.host.run_worker(
            self.run(parsed, text), group="command", exit_on_error=False, name=parsed.command.name
        )
        return True

    async def run(self, parsed: ParsedCommand, text: str) -> None:
        command = parsed.command
        session = self.host.session
        if session is None and self.host.start_failed and command.name in ("new", "resume"):
            # The start failed: these open a session instead of switching one.
            argument = parsed.argument.strip() if command.name == "resume" else ""
            pick = command.name == "resume" and not argument
            self.host.start_session(argument or "new", pick=pick)
            return
        if session is None and command.name not in NO_SESSION_NEEDED:
            self.host.report(f"/{command.name} needs a session: /new or /resume.", "warning")
            return
        try:
            await self._dispatch(command, parsed.argument, session)
        except CommandError as exc:
            self.host.report(str(exc), "warning")
        except Exception as exc:
            log.debug("/%s failed", command.name, exc_info=True)
            self.host.report(f"/{command.name} failed: {exc or type(exc).__name__}", "error")

    async def _dispatch(
        self, command: SlashCommand, argument: str, session: AgentSession | None
    ) -> None:
        if command.source == "extension":
            assert session is not None
            if not await session.run_extension_command(command.name, argument):
                raise CommandError(f"/{command.name} is no longer available.")
            return
        assert command.handler is not None
        await command.handler(argument)

    def session_or_error(self) -> AgentSession:
        return session_of(self.host)

    async def context(self, _argument: str) -> None:
        from picode.tui.controllers.context_command import context_lines

        self.host.transcript.add(InfoView("Context", context_lines(self.session_or_error())))

    # --- model and thinking --------------------------------------------------------------

    async def model(self, argument: str) -> None:
        session = self.session_or_error()
        if not argument:
            await self.pick_model()
            return
        await self._select(session, argument)

    async def pick_model(self) -> None:
        """``/model`` and Ctrl+L: every known model, those without a key marked."""
        from picode.tui.pickers import ModelPicker

        session = self.session_or_error()
        models = session.known_models()
        if all(m.ref != session.model.ref for m in models):
            models.insert(0, session.model)
        keyed = [m for m in models if session.has_key(m)]
        missing = [m for m in models if not session.has_key(m)]
        picker = ModelPicker(
            [*keyed, *missing],
            session.model,
            missing_key={m.ref for m in missing},
            aliases=session.model_aliases(),
        )
        chosen = await self.host.push_screen_wait(picker)
        if chosen is not None:
            await self._select(session, chosen.ref)

    async def _select(self, session: AgentSession, ref: str) -> None:
        from picode.ai.models import UnknownModelError

        before = session.model.ref
        try:
            choice = await session.select_model(ref)
        except UnknownModelError as exc:
            raise CommandError(str(exc)) from None
        if choice.model.ref == before:
            self.host.report(f"Already using {before}.")
        else:
            self.host.report(f"Model: {choice.model.ref}")
        for warning in choice.warnings:
            self.host.report(warning, "warning")
        if choice.thinking is not None:
            self.host.report(f"Thinking level: {session.thinking_label}")
        _, note = runs_at(choice.model, session.thinking)
        if note:
            self.host.report(note, "info")

    async def thinking(self, argument: str) -> None:
        from picode.ai.models import THINKING_LEVELS

        session = self.session_or_error()
        model = session.model
        level = argument.strip().lower()
        if level and level not in THINKING_LEVELS:
            raise CommandError(
                f"Unknown thinking level '{argument}'. Choose one of: {', '.join(THINKING_LEVELS)}."
            )
        _, note = runs_at(model, "high")
        if note:
            if level in ("", "off"):
                self.host.report(note)
                if level == "off" and session.thinking != "off":
                    session.set_thinking_level("off")
                return
            raise CommandError(note)
        if not level:
            from picode.tui.pickers import ThinkingPicker

            chosen = await self.host.push_screen_wait(
                ThinkingPicker(THINKING_LEVELS, session.thinking)
            )
            if chosen is None:
                return
            level = chosen
        session.set_thinking_level(level)  # type: ignore[arg-type]  # checked above
        self.host.report(f"Thinking level: {session.thinking_label}")

    # --- look and keys -------------------------------------------------------------------

    async def theme(self, argument: str) -> None:
        names = self.host.theme_names()
        if argument:
            if argument not in self.host.available_themes:
                raise CommandError(f"Unknown theme '{argument}'. Available: {', '.join(names)}.")
            self.host.theme = argument
            self._theme_chosen(argument)
            return
        from picode.tui.pickers import ThemePicker

        picker = ThemePicker(names, self.host.theme, partial(setattr, self.host, "theme"))
        chosen = await self.host.push_screen_wait(picker)
        if chosen is not None:
            self._theme_chosen(chosen)

    def _theme_chosen(self, name: str) -> None:
        """Kept in the person's config.toml, as pi and Claude Code keep it."""
        from picode.session.config import CONFIG_FILE_NAME, ConfigWriteError, set_user_setting

        folder = self.host.config.config_dir
        if folder is None:
            self.host.report(f"Theme: {name} (for this run).")
            return
        file = folder / CONFIG_FILE_NAME
        try:
            set_user_setting(file, "theme", name)
        except ConfigWriteError as exc:
            self.host.report(f"Theme: {name} for this run; not saved: {exc}", "warning")
            return
        self.host.report(f"Theme: {name} (saved in {file}).")

    async def help(self, argument: str) -> None:
        for view in help_views(self.current(), self.host.hotkey_lines(), self.host.config):
            self.host.transcript.add(view)

    async def hotkeys(self, argument: str) -> None:
        self.host.transcript.add(InfoView("Keys", self.host.hotkey_lines()))

    async def trust(self, argument: str) -> None:
        if self.host.config.assess_trust is None:
            raise CommandError("/trust: this app was started without folder trust.")
        trust = await self.host.trust_controller.settle(ask_again=True)
        if not trust.items:
            self.host.report(
                "Nothing here needs trust: this folder's .picode/ only adds context or "
                "safer settings."
            )
            return
        self.host.config.trust = trust
        session = self.host.session
        now = "trusted" if trust.trusted else "not trusted"
        if session is not None and session.project_trusted != trust.trusted:
            # At once, not from the next start: a revoked folder's approval, providers,
            # extensions and rules must stop now. The conversation is opened again with
            # everything prepared anew for the answer.
            await self._reopen(session)
            self.host.report(f"This folder is now {now}; the conversation goes on with that.")
        else:
            self.host.report(f"This folder is {now}.")

    async def sandbox(self, argument: str) -> None:
        session = self.host.session
        assert session is not None
        words = argument.split()
        if words and (words[0] != "network" or len(words) != 2 or words[1] not in ("on", "off")):
            raise CommandError(
                "/sandbox: use /sandbox, /sandbox network on or /sandbox network off."
            )
        if words:
            session.allow_sandbox_network(words[1] == "on")
        state = session.sandbox_state
        if state is None or not state[0]:
            self.host.report(
                "No sandbox: the model's commands run unconfined (see docs/security.md).",
                "warning",
            )
            return
        network = "allowed" if state[1] else "cut off"
        self.host.report(
            f"Sandbox on: the model's commands write only in this folder and the temp "
            f"folder; network {network}."
        )

    async def permissions(self, argument: str) -> None:
        """What runs without asking; ``allow`` adds to it, ``clear`` / ``forget`` take back."""
        from picode.tui.controllers.permissions_command import change, permissions_lines

        session = self.session_or_error()
        if argument.strip():
            self.host.report(change(session, argument))
            return
        self.host.transcript.add(InfoView("Permissions", permissions_lines(session)))

    async def plan(self, argument: str) -> None:
        """Plan mode on or off (Shift+Tab cycles it with the approval policies)."""
        from picode.tui.controllers.mode_keys import mode_text

        session = self.session_or_error()
        word = argument.strip().lower()
        if word not in ("", "on", "off"):
            raise CommandError("/plan: use /plan, /plan on or /plan off.")
        on = session.mode != "plan" if not word else word == "on"
        # Off: back to the approval policy that was in force before plan mode.
        session.set_mode("plan" if on else session.approval_policy)
        self.host.report(mode_text(session.mode))

    async def _reopen(self, session: AgentSession) -> None:
        path = session.session_file_path
        saved = session.persistent and path is not None and path.exists()
        spec = str(path) if saved else ("new" if session.persistent else None)
        await session.close()
        self.host.session = None
        self.host.transcript.clear()
        self.host.start_session(spec, False)

    async def quit(self, argument: str) -> None:
        await self.host.shutdown()

    # --- copy and export -----------------------------------------------------------------

    async def copy(self, argument: str) -> None:
        from picode.ai.types import AssistantMessage
        from picode.tui.clipboard import copy_text

        session = self.session_or_error()
        text = next(
            (
                m.text
                for m in reversed(session.messages)
                if isinstance(m, AssistantMessage) and m.text.strip()
            ),
            "",
        )
        if not text:
            raise CommandError("Nothing to copy yet: no reply has text.")
        notice = await copy_text(self.host, text, env=self.host.clipboard_env)
        self.host.report(notice, "warning" if notice.startswith("Could not") else "info")

    def _exports_folder(self) -> Path | None:
        """picode's own exports folder (0700): an export holds the whole conversation and
        has no business in the project, where it could be committed."""
        folder = self.host.config.exports_dir
        if folder is None:
            return None
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"Cannot create {folder}: {exc.strerror or exc}") from None
        return folder

    async def export(self, argument: str) -> None:
        from picode.tui.export import ExportError, export_session

        session = self.session_or_error()
        target = Path(argument) if argument else self._exports_folder()
        try:
            html_path, md_path = await asyncio.to_thread(export_session, session, target)
        except ExportError as exc:
            raise CommandError(str(exc)) from None
        self.host.transcript.add(
            InfoView("Exported", [("HTML", str(html_path)), ("Markdown", str(md_path))])
        )
