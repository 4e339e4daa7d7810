"""The rpc commands. Each handler returns the response's ``data`` (or None) and raises
``RpcError`` (or a LookupError/ValueError) with a message for the client when it cannot
do what was asked."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from picode.ai.models import THINKING_LEVELS, Model, UnknownModelError
from picode.ai.types import ImageContent, message_to_dict

if TYPE_CHECKING:
    from picode.modes.rpc.approvals import RpcApprovals
    from picode.session.agent_session import AgentSession


class RpcServer(Protocol):
    """What a command handler may use of the server (``picode.modes.rpc.RpcServer``)."""

    session: AgentSession
    approvals: RpcApprovals
    prompt_task: asyncio.Task[Any] | None

    @property
    def busy(self) -> bool: ...

    async def settled(self) -> bool: ...

    def start_prompt(self, work: Awaitable[Any]) -> None: ...


Handler: TypeAlias = Callable[[RpcServer, dict[str, Any]], Awaitable[Any]]


class RpcError(Exception):
    """A command that cannot be carried out; its text becomes the error response."""


#: Seconds ``abort`` waits for the run to wind down before answering anyway.
ABORT_SETTLE_TIMEOUT = 10.0


def _text(command: dict[str, Any], key: str = "message") -> str:
    text = command.get(key)
    if not isinstance(text, str) or not text.strip():
        raise RpcError(f"'{key}' must be a non-empty string")
    return text


def _images(command: dict[str, Any]) -> list[ImageContent]:
    raw = command.get("images", [])
    if not isinstance(raw, list):
        raise RpcError("'images' must be a list of {data, mime_type} objects")
    images: list[ImageContent] = []
    for index, item in enumerate(raw):
        data = item.get("data") if isinstance(item, dict) else None
        mime = item.get("mime_type") if isinstance(item, dict) else None
        if not isinstance(data, str) or not isinstance(mime, str) or not mime.startswith("image/"):
            raise RpcError(f"images[{index}] needs 'data' (base64) and 'mime_type' (image/...)")
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise RpcError(f"images[{index}].data is not valid base64") from None
        images.append(ImageContent(data, mime))
    return images


def _model_info(model: Model) -> dict[str, Any]:
    return {
        "provider": model.provider,
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "reasoning": model.reasoning,
        "context_window": model.context_window,
        "max_tokens": model.max_tokens,
    }


# --- running -----------------------------------------------------------------------------


async def prompt(server: RpcServer, command: dict[str, Any]) -> Any:
    session = server.session
    text = _text(command)
    images = _images(command)
    if server.busy and not await server.settled():
        behaviour = command.get("streaming_behavior")
        if behaviour == "steer":
            session.steer(text)
            return {"queued": "steer"}
        if behaviour == "follow_up":
            session.follow_up(text)
            return {"queued": "follow_up"}
        raise RpcError("busy: send steer or follow_up, give streaming_behavior, or abort first")
    session.require_key()
    server.start_prompt(session.prompt(text, images))
    return None


async def steer(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.steer(_text(command))


async def follow_up(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.follow_up(_text(command))


async def clear_queue(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"cleared": server.session.clear_queues()}


async def abort(server: RpcServer, command: dict[str, Any]) -> Any:
    server.approvals.reject_all("aborted")
    task = server.prompt_task
    if task is not None and not task.done() and not server.session.is_running:
        task.cancel()  # accepted but not started yet: there is nothing to wind down
    server.session.abort()
    if task is not None and not task.done():
        _, pending = await asyncio.wait([task], timeout=ABORT_SETTLE_TIMEOUT)
        if pending:
            raise RpcError("abort requested, but the run has not stopped yet")
    try:
        await asyncio.wait_for(server.session.wait_for_idle(), ABORT_SETTLE_TIMEOUT)
    except TimeoutError:
        raise RpcError("abort requested, but the run has not stopped yet") from None


async def wait_for_idle(server: RpcServer, command: dict[str, Any]) -> Any:
    task = server.prompt_task
    if task is not None and not task.done():
        await asyncio.wait([task])
    await server.session.wait_for_idle()


async def approve(server: RpcServer, command: dict[str, Any]) -> Any:
    request_id = command.get("request_id")
    decision = command.get("decision")
    reason = command.get("reason")
    if not isinstance(request_id, str):
        raise RpcError("'request_id' must be the id of an approval_request")
    if not isinstance(decision, str):
        raise RpcError("'decision' must be yes, always or no")
    server.approvals.resolve(request_id, decision, reason if isinstance(reason, str) else None)


async def answer_plan(server: RpcServer, command: dict[str, Any]) -> Any:
    request_id = command.get("request_id")
    decision = command.get("decision")
    policy = command.get("policy")
    feedback = command.get("feedback")
    if not isinstance(request_id, str):
        raise RpcError("'request_id' must be the id of a plan_request")
    if not isinstance(decision, str):
        raise RpcError("'decision' must be approve, feedback or cancel")
    if policy is not None and not isinstance(policy, str):
        raise RpcError("'policy' must be never, edits or all")
    server.approvals.resolve_plan(
        request_id, decision, policy, feedback if isinstance(feedback, str) else None
    )


async def set_mode(server: RpcServer, command: dict[str, Any]) -> Any:
    mode = command.get("mode")
    if not isinstance(mode, str):
        raise RpcError("'mode' must be plan, never, edits or all")
    try:
        server.session.set_mode(mode)
    except ValueError as exc:
        raise RpcError(str(exc)) from None
    return {"mode": server.session.mode}


async def cycle_mode(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"mode": server.session.cycle_mode()}


# --- model and thinking ------------------------------------------------------------------


async def set_model(server: RpcServer, command: dict[str, Any]) -> Any:
    ref = command.get("model")
    if ref is None and command.get("provider") and command.get("model_id"):
        ref = f"{command['provider']}/{command['model_id']}"
    if not isinstance(ref, str) or not ref.strip():
        raise RpcError("give 'model' as provider/id (or 'provider' and 'model_id')")
    try:
        choice = await server.session.select_model(ref)
    except UnknownModelError as exc:
        raise RpcError(str(exc)) from None
    data = _model_info(choice.model)
    if choice.warnings:
        data["warning"] = " ".join(choice.warnings)
    return data


async def cycle_model(server: RpcServer, command: dict[str, Any]) -> Any:
    return _model_info(server.session.cycle_model())


async def get_available_models(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"models": [_model_info(model) for model in server.session.available_models()]}


async def set_thinking_level(server: RpcServer, command: dict[str, Any]) -> Any:
    level = command.get("level")
    if level not in THINKING_LEVELS:
        raise RpcError(f"'level' must be one of {', '.join(THINKING_LEVELS)}")
    session = server.session
    if level != "off" and not session.model.reasoning:
        raise RpcError(f"{session.model.ref} does not support thinking")
    session.set_thinking_level(level)
    return {"level": level}


async def cycle_thinking_level(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"level": server.session.cycle_thinking_level()}


# --- context and sessions ----------------------------------------------------------------


async def compact(server: RpcServer, command: dict[str, Any]) -> Any:
    instructions = command.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RpcError("'instructions' must be a string")
    if server.busy:
        raise RpcError("cannot compact while a prompt runs; abort or wait_for_idle first")
    before = server.session.context_tokens
    await server.session.compact(instructions)
    return {"tokens_before": before, "tokens_after": server.session.context_tokens}


async def new_session(server: RpcServer, command: dict[str, Any]) -> Any:
    await server.session.new_session()
    return {"session_id": server.session.session_id}


async def switch_session(server: RpcServer, command: dict[str, Any]) -> Any:
    target = command.get("session")
    if not isinstance(target, str) or not target.strip():
        raise RpcError("'session' must be an id, unique id prefix or path")
    await server.session.switch_session(target.strip())
    return {"session_id": server.session.session_id}


async def get_fork_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    entries = server.session.user_messages_for_fork()
    return {"messages": [{"entry_id": entry, "text": text} for entry, text in entries]}


async def fork(server: RpcServer, command: dict[str, Any]) -> Any:
    entry_id = command.get("entry_id")
    if not isinstance(entry_id, str):
        raise RpcError("'entry_id' must be one of get_fork_messages' entry ids")
    text = await server.session.fork(entry_id)
    return {"text": text, "session_id": server.session.session_id}


async def set_session_name(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.set_session_name(_text(command, "name").strip())


async def get_state(server: RpcServer, command: dict[str, Any]) -> Any:
    session = server.session
    usage = session.usage
    path = session.session_file_path
    return {
        "model": _model_info(session.model),
        "thinking_level": session.thinking,
        "is_running": server.busy,
        "retry_pending": session.retry_pending,
        "session_id": session.session_id,
        "session_file": str(path) if path else None,
        "session_name": session.session_name,
        "message_count": len(session.messages),
        "queued_steering": session.queued_steering,
        "queued_follow_ups": session.queued_follow_ups,
        "pending_approvals": sorted(server.approvals.pending),
        "mode": session.mode,
        "pending_plans": sorted(server.approvals.plans),
        "context_tokens": session.context_tokens,
        "context_window": session.context_window,
        "usage": {
            "input": usage.input,
            "output": usage.output,
            "cache_read": usage.cache_read,
            "cache_write": usage.cache_write,
            "cost": usage.cost,
        },
    }


async def get_mcp(server: RpcServer, command: dict[str, Any]) -> Any:
    """Each MCP server's state; ``mcp_servers_changed`` events say when it changes."""
    return {
        "servers": [
            {
                "name": status.name,
                "transport": status.transport,
                "state": status.state,
                "tools": list(status.tools),
                "error": status.error,
                "login": status.login,
            }
            for status in server.session.mcp_servers()
        ]
    }


async def get_todos(server: RpcServer, command: dict[str, Any]) -> Any:
    """The model's todo list; ``todos_changed`` events say when it changes."""
    return {"todos": [todo.as_record() for todo in server.session.todos]}


async def get_context(server: RpcServer, command: dict[str, Any]) -> Any:
    """What fills the context window, part by part (as ``/context`` shows it): the total the
    session measures, the estimated parts, the largest tool results."""
    usage = server.session.context_usage()
    return {
        "window": usage.window,
        "in_use": usage.in_use,
        "compacts_at": usage.compacts_at,
        "parts": [{"label": part.label, "tokens": part.tokens} for part in usage.shares],
        "largest_results": [
            {"tool": result.tool, "arguments": result.arguments, "tokens": result.tokens}
            for result in usage.largest
        ],
    }


async def get_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"messages": [message_to_dict(m) for m in server.session.messages]}


async def get_commands(server: RpcServer, command: dict[str, Any]) -> Any:
    """The prompt templates ``prompt`` expands as ``/name args`` (docs/prompts.md), then
    the skills as ``/skill:name args`` (docs/skills.md)."""
    templates = [
        {
            "name": t.name,
            "description": t.description,
            "argument_hint": t.argument_hint,
            "source": t.source,
            "path": str(t.path) if t.path is not None else None,
        }
        for t in server.session.prompt_templates
    ]
    skills = [
        {
            "name": f"skill:{s.name}",
            "description": s.description,
            "argument_hint": "[args]",
            "source": "skill",
            "path": str(s.path),
        }
        for s in server.session.skills
    ]
    prompts = [
        {
            "name": p.command,
            "description": p.description,
            "argument_hint": p.usage or None,
            "source": "mcp",
            "path": None,
        }
        for p in server.session.mcp_prompts()
    ]
    return {"commands": templates + skills + prompts}


HANDLERS: dict[str, Handler] = {
    "prompt": prompt,
    "steer": steer,
    "follow_up": follow_up,
    "clear_queue": clear_queue,
    "abort": abort,
    "wait_for_idle": wait_for_idle,
    "approve": approve,
    "answer_plan": answer_plan,
    "set_mode": set_mode,
    "cycle_mode": cycle_mode,
    "set_model": set_model,
    "cycle_model": cycle_model,
    "get_available_models": get_available_models,
    "set_thinking_level": set_thinking_level,
    "cycle_thinking_level": cycle_thinking_level,
    "compact": compact,
    "new_session": new_session,
    "switch_session": switch_session,
    "get_fork_messages": get_fork_messages,
    "fork": fork,
    "set_session_name": set_session_name,
    "get_state": get_state,
    "get_messages": get_messages,
    "get_mcp": get_mcp,
    "get_commands": get_commands,
    "get_todos": get_todos,
    "get_context": get_context,
}

#: Commands answered when their work is done, while later commands are read meanwhile.
BACKGROUND = frozenset({"compact", "wait_for_idle"})
