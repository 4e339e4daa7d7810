"""The ACP agent: one picode AgentSession per ACP session, driven through the session API.

ACP session ids are picode session ids, so ``session/load`` (and ``picode -r`` in a
terminal) resume what an editor started.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError, helpers, run_agent
from acp.core import DEFAULT_STDIO_BUFFER_LIMIT_BYTES
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    ToolCallUpdate,
)
from acp.stdio import stdio_streams

from picode.agent.events import ToolExecutionEnd, ToolExecutionStart
from picode.ai.types import AssistantMessage
from picode.ai.untrusted import one_line
from picode.modes.acp import plan_approval, session_config
from picode.modes.acp.auth import auth_methods, require_key
from picode.modes.acp.changes import CHANGING_TOOLS, FileChanges
from picode.modes.acp.commands import available_commands
from picode.modes.acp.files import ClientFiles
from picode.modes.acp.link import SessionLink
from picode.modes.acp.listing import list_sessions
from picode.modes.acp.outbox import Outbox
from picode.modes.acp.prompt import prompt_parts
from picode.modes.acp.terminal import ClientTerminalBash
from picode.modes.acp.transport import LineTransport
from picode.modes.acp.updates import (
    ReplyChunks,
    ToolContent,
    event_to_update,
    resumed_updates,
    tool_finished,
    tool_started,
    turn_usage,
    usage_update,
)
from picode.modes.headless import after_first_run
from picode.modes.output import warn
from picode.session.events import Notice
from picode.session.safety import ApprovalDecision, ApprovalRequest
from picode.tools import DISK, BashTool, FileAccess, coding_tools

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
METHOD_NOT_FOUND = -32601
#: How long a prompt sent right after session/cancel waits for the cancelled one to end.
CANCEL_SETTLE_S = 10.0
STOP_REASONS: dict[str, Any] = {"stop": "end_turn", "length": "max_tokens", "aborted": "cancelled"}
#: What picode's session ids look like; anything else (a path, say) is not looked up.
SESSION_ID = re.compile(r"[0-9A-Za-z_-]{1,128}")
PERMISSION_OPTIONS = [
    PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="always", name="Allow always", kind="allow_always"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]
SAVE_OPTION = PermissionOption(
    option_id="project", name="Allow always in this folder (saved)", kind="allow_always"
)


def run_acp(options: Any, start_up_over: Callable[[], None] = lambda: None) -> int:
    """``start_up_over``: as for ``run_rpc``, once a session's first run has ended."""
    try:
        asyncio.run(serve(options, start_up_over))
    except StdioError as exc:
        warn(str(exc))
        return 1
    return 0


class StdioError(Exception):
    """stdin/stdout cannot carry the protocol (a regular file, say, instead of a pipe)."""


class _UnknownNotifications(logging.Filter):
    """The ACP library logs a notification picode has no handler for with a traceback:
    one line says it instead (a client may send notifications of newer protocol versions)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, RequestError) and error.code == METHOD_NOT_FOUND:
            method = (error.data or {}).get("method", "?")
            warn(f"acp: ignored the notification {method!r}, which picode does not know")
            return False
        return True


async def serve(options: Any, start_up_over: Callable[[], None] = lambda: None) -> None:
    logging.getLogger().addFilter(_UnknownNotifications())
    agent = PicodeAcpAgent(options, start_up_over)
    try:
        reader, writer = await stdio_streams(limit=DEFAULT_STDIO_BUFFER_LIMIT_BYTES)
    except (OSError, ValueError) as exc:
        raise StdioError(
            f"acp mode talks to its client over pipes on stdin and stdout: {exc}"
        ) from None
    try:
        await run_agent(agent, LineTransport(reader, writer))  # type: ignore[arg-type]
    finally:
        await agent.close()


@dataclass(slots=True)
class Hosted:
    """A picode session as one ACP session."""

    session_id: str
    session: Any
    cwd: Path
    changes: FileChanges
    #: A prompt is being handled (set before its first await, unlike the session's own flag).
    prompting: bool = False
    #: session/cancel came during this prompt: it ends "cancelled", whatever ran last.
    cancelled: bool = False
    #: Set while no prompt is being handled: a prompt sent right after a cancel waits on it.
    idle: asyncio.Event = dataclasses.field(default_factory=lambda: _set(asyncio.Event()))
    chunks: ReplyChunks = field(default_factory=ReplyChunks)


class PicodeAcpAgent:
    def __init__(self, options: Any, start_up_over: Callable[[], None] = lambda: None) -> None:
        self.options = options
        self.start_up_over = start_up_over
        self.conn: Any = None
        self.client = ClientCapabilities()
        self.sessions: dict[str, Hosted] = {}
        self.outbox = Outbox()
        #: The protocol starts with initialize: nothing else is served before it.
        self.initialized = False

    def _require_initialized(self) -> None:
        if not self.initialized:
            raise RequestError.invalid_request({"message": "send initialize first"})

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.outbox.start(conn)

    async def close(self) -> None:
        for hosted in list(self.sessions.values()):
            await hosted.session.close()
        self.sessions.clear()
        await self.outbox.close()

    # --- connection ----------------------------------------------------------------------

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **_: Any
    ) -> InitializeResponse:
        if client_capabilities is not None:
            self.client = client_capabilities
        self.initialized = True
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            auth_methods=auth_methods(self.options),
            agent_info=Implementation(name="picode", title="picode", version=_version()),
        )

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        self._require_initialized()
        require_key(self.options, method_id)
        return AuthenticateResponse()

    # --- sessions ------------------------------------------------------------------------

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> ListSessionsResponse:
        self._require_initialized()
        return list_sessions(self.options.paths.sessions_dir, cwd, cursor)

    async def new_session(self, cwd: str, **_: Any) -> NewSessionResponse:
        self._require_initialized()
        hosted = await self._open(cwd, "new")
        # After the response that tells the client this session's id.
        loop = asyncio.get_running_loop()
        loop.call_soon(self.outbox.put, hosted.session_id, available_commands(hosted.session))
        return NewSessionResponse(
            session_id=hosted.session_id,
            modes=session_config.mode_state(hosted.session),
            config_options=session_config.config_options(hosted.session),
        )

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        self._require_initialized()
        hosted = self.sessions.get(session_id)
        if hosted is None:
            if not SESSION_ID.fullmatch(session_id):
                raise RequestError.invalid_params({"message": f"no session {session_id!r}"})
            hosted = await self._open(cwd, session_id)
        for update in resumed_updates(hosted.session, hosted.cwd):
            self.outbox.put(hosted.session_id, update)
        self.outbox.put(hosted.session_id, available_commands(hosted.session))
        await self.outbox.flush()
        return LoadSessionResponse(
            modes=session_config.mode_state(hosted.session),
            config_options=session_config.config_options(hosted.session),
        )

    async def set_session_mode(
        self, mode_id: str, session_id: str, **_: Any
    ) -> SetSessionModeResponse:
        session_config.set_mode(self._hosted(session_id).session, mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **_: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._hosted(session_id).session
        for warning in await session_config.set_option(session, config_id, value):
            warn(warning)
        options = session_config.config_options(session)
        return SetSessionConfigOptionResponse(config_options=options)

    async def _open(self, cwd: str, spec: str) -> Hosted:
        from picode.session.agent_session import AgentSession

        folder = Path(cwd)
        if not folder.is_absolute() or not await asyncio.to_thread(folder.is_dir):
            raise RequestError.invalid_params({"message": f"cwd {cwd!r} is not an absolute folder"})
        link = SessionLink(self.conn)
        files = self._file_access(link)
        tools = self._tools(folder, link, files)
        holder: list[Hosted] = []

        async def approve(request: ApprovalRequest) -> ApprovalDecision:
            return await self._ask(holder[0], request)

        # The launcher's tools work in its own folder on the disk: the same set is composed
        # again for this session's folder, with the editor's file system and terminal when
        # it offers them.
        options = dataclasses.replace(
            self.options,
            cwd=folder,
            session=spec,
            tools=tools,
            approver=approve,
            project_trusted=await asyncio.to_thread(self._trusted, folder),
        )
        try:
            session = await AgentSession.open(options)
        except (LookupError, ValueError, OSError) as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if spec != "new" and session.session_id != spec:
            found = session.session_id
            await session.close()
            raise RequestError.invalid_params(
                {"message": f"no session {spec!r} (its id begins {found!r}: give it whole)"}
            )
        header = session.session_header()
        session_id = header["id"] if header else f"unsaved-{len(self.sessions) + 1}"
        hosted = Hosted(session_id, session, folder, FileChanges(files, folder))
        link.session_id = session_id
        holder.append(hosted)
        plan_approval.attach(self, hosted)
        self.sessions[session_id] = hosted
        session.subscribe(lambda event: self._forward(hosted, event))
        after_first_run(session, self.start_up_over)
        return hosted

    def _trusted(self, folder: Path) -> bool:
        """The launch folder keeps the trust the launcher settled (``--trust-project``
        included); any other folder an editor opens is trusted only if the person trusted
        it (from the TUI) and its gated files have not changed since."""
        from picode.session.safety import assess_project

        if folder.resolve() == self.options.cwd.resolve():
            return bool(self.options.project_trusted)
        return assess_project(self.options.paths, folder).trusted

    def _file_access(self, link: SessionLink) -> FileAccess:
        fs = self.client.fs
        reads = bool(fs and fs.read_text_file)
        writes = bool(fs and fs.write_text_file)
        if reads or writes:
            return ClientFiles(link, read=reads, write=writes)
        return DISK

    def _tools(self, folder: Path, link: SessionLink, files: FileAccess) -> list[Any]:
        from picode.session.safety import model_command_environment, unset_script

        settings = self.options.settings
        timeout = settings.bash.default_timeout_s
        names = [tool.name for tool in self.options.tools]
        # The launcher's sandbox settings confine this folder's bash the same way.
        launched = next((t for t in self.options.tools if isinstance(t, BashTool)), None)
        sandbox = launched.sandbox.config if launched and launched.sandbox else None
        env = model_command_environment(self.options.registry, settings.bash.env_allow)
        tools = coding_tools(
            folder, names=names, bash_timeout_s=timeout, bash_env=env, files=files, sandbox=sandbox
        )
        if not self.client.terminal:
            return tools
        # The editor starts the command with its own environment, most likely the one it
        # started picode with: the shell drops what picode's own copy would lose.
        terminal = ClientTerminalBash(folder, link, timeout, prelude=unset_script(os.environ, env))
        return [terminal if tool.name == "bash" else tool for tool in tools]

    def _hosted(self, session_id: str) -> Hosted:
        self._require_initialized()
        hosted = self.sessions.get(session_id)
        if hosted is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id!r}"})
        return hosted

    # --- events --------------------------------------------------------------------------

    async def _forward(self, hosted: Hosted, event: Any) -> None:
        match event:
            case ToolExecutionStart(tool_call_id=call_id, tool_name=name, args=args):
                if name in CHANGING_TOOLS:
                    await hosted.changes.remember(call_id, name, args)
            case ToolExecutionEnd(tool_call_id=call_id, result=result, is_error=failed):
                diff = None if failed else await hosted.changes.made(call_id)
                hosted.changes.forget(call_id)
                self.outbox.put(hosted.session_id, tool_finished(call_id, result, failed, diff))
                return
            case Notice(level=level, text=text) if level != "info":
                warn(text)
        for chunk in hosted.chunks.updates(event):
            self.outbox.put(hosted.session_id, chunk)
        update = event_to_update(event, hosted.cwd)
        if update is not None:
            self.outbox.put(hosted.session_id, update)

    async def _ask(self, hosted: Hosted, request: ApprovalRequest) -> ApprovalDecision:
        started = tool_started(request.call_id, request.tool_name, request.args, hosted.cwd)
        content: list[ToolContent] = [*(hosted.changes.proposed(request.call_id) or [])]
        tool_call = ToolCallUpdate(
            tool_call_id=request.call_id,
            title=f"{request.asker}: {started.title}" if request.asker else started.title,
            kind=started.kind,
            locations=started.locations,
            raw_input=request.args,
            content=[*_protected_note(request.protected), *(content or _preview(request.preview))],
        )
        # The call waits for the person, not running: "pending" until they answer.
        self.outbox.put(
            hosted.session_id, helpers.update_tool_call(request.call_id, status="pending")
        )
        # Updates sent before the ask must reach the client first (the call it is about).
        await self.outbox.flush()
        response = await self.conn.request_permission(
            session_id=hosted.session_id, tool_call=tool_call, options=_options_for(request)
        )
        chosen = getattr(response.outcome, "option_id", None)
        if chosen in ("yes", "always", "project"):
            update = helpers.update_tool_call(request.call_id, status="in_progress")
            self.outbox.put(hosted.session_id, update)
            return ApprovalDecision(chosen)
        return ApprovalDecision("no", "the person declined in the client")

    # --- prompts -------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        hosted = self._hosted(session_id)
        if hosted.prompting and hosted.cancelled:
            # Cancel-then-ask: the cancelled prompt is settling; this one goes next.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(hosted.idle.wait(), CANCEL_SETTLE_S)
        if hosted.prompting:
            raise RequestError.invalid_request(
                {"message": "a prompt is already running in this session; cancel it first"}
            )
        text, images = prompt_parts(prompt)
        if not text.strip() and not images:
            raise RequestError.invalid_params({"message": "the prompt is empty"})
        hosted.prompting, hosted.cancelled = True, False
        hosted.idle.clear()
        try:
            await hosted.session.wait_for_idle()  # an aborted run may still be unwinding
            return await self._run_prompt(hosted, prompt)
        finally:
            hosted.prompting = False
            hosted.idle.set()

    async def _run_prompt(self, hosted: Hosted, prompt: list[Any]) -> PromptResponse:
        from picode.agent.agent import AgentBusyError
        from picode.session.models import MissingApiKeyError

        session = hosted.session
        text, attachments = prompt_parts(prompt)
        if text.startswith("/") and not attachments:
            answered = await self._run_command(hosted, text)
            if answered is not None:
                return answered
        before = dataclasses.replace(session.usage)
        try:
            await session.prompt(text, attachments)
        except MissingApiKeyError as exc:
            raise RequestError.auth_required({"message": str(exc)}) from None
        except AgentBusyError as exc:
            raise RequestError.invalid_request({"message": str(exc)}) from None
        finally:
            await self.outbox.flush()
        last = next(
            (m for m in reversed(session.messages) if isinstance(m, AssistantMessage)), None
        )
        reason = "aborted" if hosted.cancelled else getattr(last, "stop_reason", "stop")
        if reason == "error":
            message = getattr(last, "error_message", None) or "the model request failed"
            raise RequestError.internal_error({"message": message})
        self.outbox.put(hosted.session_id, usage_update(session))
        await self.outbox.flush()
        return PromptResponse(
            stop_reason=STOP_REASONS.get(reason, "end_turn"), usage=turn_usage(before, session)
        )

    async def _run_command(self, hosted: Hosted, text: str) -> PromptResponse | None:
        from picode.modes.acp.commands import run_command
        from picode.session.rewinding import RewindError

        try:
            reply = await run_command(hosted.session, text)
        except RewindError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
        if reply is None:
            return None
        self.outbox.put(hosted.session_id, helpers.update_agent_message_text(reply))
        await self.outbox.flush()
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        hosted = self.sessions.get(session_id)
        if hosted is not None and hosted.prompting:
            hosted.cancelled = True
            hosted.session.abort()


def _options_for(request: ApprovalRequest) -> list[PermissionOption]:
    """The choices, "Allow always" saying what it covers (a command: those like it)."""
    if request.asked_by is not None:  # asked each time: "always" would mean nothing
        return [PERMISSION_OPTIONS[0], *PERMISSION_OPTIONS[2:]]
    if not request.always_means:
        return PERMISSION_OPTIONS
    always = f"Allow always: {one_line(request.always_means, 60)}"
    # A command may be approved for good in this folder too (docs/security.md).
    saved = [SAVE_OPTION] if request.can_save else []
    return [
        PERMISSION_OPTIONS[0],
        PERMISSION_OPTIONS[1].model_copy(update={"name": always}),
        *saved,
        *PERMISSION_OPTIONS[2:],
    ]


def _set(event: asyncio.Event) -> asyncio.Event:
    event.set()
    return event


def _preview(text: str) -> list[ToolContent]:
    return [helpers.tool_content(helpers.text_block(text))] if text else []


def _protected_note(what: str | None) -> list[ToolContent]:
    # Asked even in the "never" mode: say why, or the ask would look like a mistake.
    return _preview(f"picode always asks before this: it changes {what}.") if what else []


def _version() -> str:
    from picode import __version__

    return __version__
