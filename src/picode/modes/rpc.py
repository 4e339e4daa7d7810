"""``--mode rpc``: newline-delimited JSON commands on stdin, responses and events on stdout.

Every command gets exactly one ``{"type":"response","command":..,"success":..}`` line (with
the command's ``id`` echoed when given). ``prompt`` answers as soon as the prompt is accepted;
its progress arrives as events. Malformed input gets an error response, never a crash.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from picode.ai.models import THINKING_LEVELS, UnknownModelError
from picode.ai.types import message_to_dict
from picode.modes.headless import open_session
from picode.modes.serialize import dumps, event_to_dict

Handler = Callable[[Any, dict[str, Any]], Awaitable[Any]]


class RpcError(Exception):
    pass


def run_rpc(options: Any) -> int:
    return asyncio.run(_serve(options))


async def _serve(options: Any) -> int:
    session = await open_session(options)
    if session is None:
        return 1
    server = RpcServer(session, _write_line)
    session.subscribe(lambda event: _write_line(dumps(event_to_dict(event))))
    reader = await _stdin_reader()
    try:
        while True:
            line = await reader.readline()
            if not line:
                break
            await server.handle_line(line.decode("utf-8", errors="replace"))
    finally:
        await server.shutdown()
    return 0


async def _stdin_reader() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


def _write_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class RpcServer:
    def __init__(self, session: Any, write: Callable[[str], None]) -> None:
        self.session = session
        self.write = write
        self.tasks: set[asyncio.Task[Any]] = set()
        self.handlers: dict[str, Handler] = {
            "prompt": _prompt,
            "steer": _steer,
            "follow_up": _follow_up,
            "abort": _abort,
            "set_model": _set_model,
            "cycle_model": _cycle_model,
            "set_thinking_level": _set_thinking,
            "cycle_thinking_level": _cycle_thinking,
            "compact": _compact,
            "new_session": _new_session,
            "switch_session": _switch_session,
            "set_session_name": _set_name,
            "get_state": _get_state,
            "get_messages": _get_messages,
            "wait_for_idle": _wait_idle,
        }

    async def handle_line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            command = json.loads(line)
        except ValueError as exc:
            self._respond(None, "parse", False, error=f"invalid JSON: {exc}")
            return
        if not isinstance(command, dict):
            self._respond(None, "parse", False, error="a command must be a JSON object")
            return
        request_id = command.get("id")
        name = command.get("type")
        handler = self.handlers.get(name) if isinstance(name, str) else None
        if handler is None:
            known = ", ".join(sorted(self.handlers))
            self._respond(request_id, str(name), False, error=f"unknown command; known: {known}")
            return
        try:
            data = await handler(self, command)
        except RpcError as exc:
            self._respond(request_id, name, False, error=str(exc))
        except Exception as exc:
            self._respond(request_id, name, False, error=f"{type(exc).__name__}: {exc}")
        else:
            self._respond(request_id, name, True, data=data)

    def _respond(
        self, request_id: Any, command: str, success: bool, *, data: Any = None, error: str = ""
    ) -> None:
        response: dict[str, Any] = {"type": "response", "command": command, "success": success}
        if request_id is not None:
            response["id"] = request_id
        if success and data is not None:
            response["data"] = data
        if not success:
            response["error"] = error
        self.write(dumps(response))

    def spawn(self, work: Awaitable[Any], command: str) -> None:
        async def runner() -> None:
            try:
                await work
            except Exception as exc:
                self.write(dumps({"type": "error", "command": command, "error": str(exc)}))

        task = asyncio.ensure_future(runner())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def shutdown(self) -> None:
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.session.close()


def _text(command: dict[str, Any]) -> str:
    text = command.get("message", command.get("text"))
    if not isinstance(text, str) or not text.strip():
        raise RpcError("'message' must be a non-empty string")
    return text


async def _prompt(server: RpcServer, command: dict[str, Any]) -> Any:
    session = server.session
    text = _text(command)
    if session.is_running:
        behaviour = command.get("streaming_behavior")
        if behaviour == "steer":
            session.steer(text)
            return {"queued": "steer"}
        if behaviour == "follow_up":
            session.follow_up(text)
            return {"queued": "follow_up"}
        raise RpcError("busy: send steer/follow_up, or prompt with streaming_behavior")
    session.credentials.require(session.model)
    server.spawn(session.prompt(text), "prompt")
    return None


async def _steer(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.steer(_text(command))


async def _follow_up(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.follow_up(_text(command))


async def _abort(server: RpcServer, command: dict[str, Any]) -> Any:
    server.session.abort()
    await server.session.wait_for_idle()


async def _set_model(server: RpcServer, command: dict[str, Any]) -> Any:
    ref = command.get("model")
    if ref is None and command.get("provider") and command.get("model_id"):
        ref = f"{command['provider']}/{command['model_id']}"
    if not isinstance(ref, str):
        raise RpcError("give 'model' as provider/id (or 'provider' and 'model_id')")
    try:
        resolved = server.session.registry.resolve(ref)
    except UnknownModelError as exc:
        raise RpcError(str(exc)) from None
    server.session.set_model(resolved.model)
    return {"provider": resolved.model.provider, "id": resolved.model.id}


async def _cycle_model(server: RpcServer, command: dict[str, Any]) -> Any:
    model = server.session.cycle_model()
    return {"provider": model.provider, "id": model.id}


async def _set_thinking(server: RpcServer, command: dict[str, Any]) -> Any:
    level = command.get("level")
    if level not in THINKING_LEVELS:
        raise RpcError(f"'level' must be one of {', '.join(THINKING_LEVELS)}")
    server.session.set_thinking_level(level)


async def _cycle_thinking(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"level": server.session.cycle_thinking_level()}


async def _compact(server: RpcServer, command: dict[str, Any]) -> Any:
    await server.session.compact(command.get("instructions"))


async def _new_session(server: RpcServer, command: dict[str, Any]) -> Any:
    await server.session.new_session()
    return {"session_id": server.session.session_id}


async def _switch_session(server: RpcServer, command: dict[str, Any]) -> Any:
    target = command.get("session")
    if not isinstance(target, str):
        raise RpcError("'session' must be an id, prefix or path")
    await server.session.switch_session(target)
    return {"session_id": server.session.session_id}


async def _set_name(server: RpcServer, command: dict[str, Any]) -> Any:
    name = command.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RpcError("'name' must be a non-empty string")
    server.session.set_session_name(name.strip())


async def _get_state(server: RpcServer, command: dict[str, Any]) -> Any:
    session = server.session
    usage = session.usage
    return {
        "model": {"provider": session.model.provider, "id": session.model.id},
        "thinking_level": session.thinking,
        "is_running": session.is_running,
        "session_id": session.session_id,
        "session_file": str(session.session_file_path) if session.session_file_path else None,
        "session_name": session.session_name,
        "message_count": len(session.messages),
        "queued_steering": session.queued_steering,
        "queued_follow_ups": session.queued_follow_ups,
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


async def _get_messages(server: RpcServer, command: dict[str, Any]) -> Any:
    return {"messages": [message_to_dict(m) for m in server.session.messages]}


async def _wait_idle(server: RpcServer, command: dict[str, Any]) -> Any:
    await server.session.wait_for_idle()
