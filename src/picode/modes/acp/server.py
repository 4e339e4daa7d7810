"""The ACP agent: one picode AgentSession per ACP session, driven through the session API."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

from picode.modes.acp.updates import event_to_update
from picode.modes.headless import open_session
from picode.session.approval import ApprovalDecision, ApprovalRequest

PROTOCOL_VERSION = 1
STOP_REASONS: dict[str, Any] = {"stop": "end_turn", "length": "max_tokens", "aborted": "cancelled"}


def run_acp(options: Any) -> int:
    from acp import run_agent

    asyncio.run(run_agent(PicodeAcpAgent(options)))  # type: ignore[arg-type]
    return 0


class PicodeAcpAgent:
    def __init__(self, options: Any) -> None:
        self.options = options
        self.conn: Any = None
        self.sessions: dict[str, Any] = {}
        # Updates go out in order on their own tasks; held here so none is collected early.
        self.sending: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> Any:
        from acp import schema

        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=False,
                prompt_capabilities=schema.PromptCapabilities(image=False, embedded_context=True),
            ),
            agent_info=schema.Implementation(name="picode", version=_version()),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **_: Any) -> Any:
        from acp import RequestError, schema

        options = dataclasses.replace(self.options, cwd=Path(cwd), session="new")
        holder: dict[str, str] = {}

        async def approve(request: ApprovalRequest) -> ApprovalDecision:
            return await self._ask(holder["id"], request)

        options.approver = approve
        session = await open_session(options)
        if session is None:
            raise RequestError.internal_error({"message": "picode could not open a session"})
        session_id = session.session_id or f"picode-{len(self.sessions) + 1}"
        holder["id"] = session_id
        self.sessions[session_id] = session
        session.subscribe(lambda event: self._forward(session_id, event))
        return schema.NewSessionResponse(session_id=session_id)

    def _forward(self, session_id: str, event: Any) -> None:
        update = event_to_update(event)
        if update is not None and self.conn is not None:
            task = asyncio.ensure_future(
                self.conn.session_update(session_id=session_id, update=update)
            )
            self.sending.add(task)
            task.add_done_callback(self.sending.discard)

    async def _ask(self, session_id: str, request: ApprovalRequest) -> ApprovalDecision:
        from acp import schema

        options = [
            schema.PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
            schema.PermissionOption(option_id="always", name="Allow always", kind="allow_always"),
            schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ]
        tool_call = schema.ToolCallUpdate(
            tool_call_id=request.call_id, title=f"{request.tool_name}: {request.preview[:200]}"
        )
        response = await self.conn.request_permission(
            session_id=session_id, tool_call=tool_call, options=options
        )
        outcome = response.outcome
        chosen = getattr(outcome, "option_id", None)
        if chosen in ("yes", "always"):
            return ApprovalDecision(chosen)
        return ApprovalDecision("no", "the person declined in the client")

    def _session(self, session_id: str) -> Any:
        from acp import RequestError

        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id!r}"})
        return session

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> Any:
        from acp import RequestError, schema

        session = self._session(session_id)
        if session.is_running:
            raise RequestError.invalid_request({"message": "a prompt is already running"})
        text = "\n".join(_block_text(block) for block in prompt)
        await session.prompt(text)
        last = session.messages[-1] if session.messages else None
        reason = getattr(last, "stop_reason", "stop")
        if reason == "error":
            message = getattr(last, "error_message", None) or "the model request failed"
            raise RequestError.internal_error({"message": message})
        return schema.PromptResponse(stop_reason=STOP_REASONS.get(reason, "end_turn"))

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.abort()


def _block_text(block: Any) -> str:
    text = getattr(block, "text", None)
    if isinstance(text, str):
        return text
    resource = getattr(block, "resource", None)
    if resource is not None and isinstance(getattr(resource, "text", None), str):
        return f'<file uri="{resource.uri}">\n{resource.text}\n</file>'
    uri = getattr(block, "uri", None)
    return f"[{uri}]" if uri else ""


def _version() -> str:
    from picode import __version__

    return __version__
