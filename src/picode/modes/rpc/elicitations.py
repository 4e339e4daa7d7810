"""A server's request for input over rpc: an ``elicitation_request`` event out, an ``elicit``
command back (docs/cli.md, docs/mcp.md "Elicitation")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from picode.modes.rpc.pending import PendingAnswers
from picode.session.mcp import ElicitationAnswer, ElicitationRequest, ElicitField, Value, convert

ACTIONS = ("accept", "decline", "cancel")


class RpcElicitations:
    def __init__(self, write: Callable[[dict[str, Any]], None]) -> None:
        self._answers = PendingAnswers[ElicitationAnswer]("elicitation", write)
        #: The questions waiting, by request id: an answer is checked against its fields.
        self.requests: dict[str, ElicitationRequest] = {}

    async def ask(self, request: ElicitationRequest) -> ElicitationAnswer:
        request_id = self._answers.new_id()
        self.requests[request_id] = request
        event = {
            "type": "elicitation_request",
            "server": request.server,
            "message": request.message,
            "fields": [_field(item) for item in request.fields],
        }
        try:
            return await self._answers.ask(request_id, event)
        finally:
            self.requests.pop(request_id, None)

    async def command(self, server: Any, command: dict[str, Any]) -> Any:
        """``{"type": "elicit", "request_id", "action", "content"}``."""
        request_id, action = command.get("request_id"), command.get("action")
        future = self._answers.waiting(request_id)
        if action not in ACTIONS:
            raise ValueError(f"'action' must be one of {', '.join(ACTIONS)}")
        content: dict[str, Value] = {}
        if action == "accept":
            content = _content(self.requests[str(request_id)], command.get("content"))
        future.set_result(ElicitationAnswer(action, content))  # type: ignore[arg-type]


def _content(request: ElicitationRequest, raw: Any) -> dict[str, Value]:
    """The answer's values, each checked as the TUI's form checks it; ValueError names
    the first field that is wrong (the request stays pending)."""
    given = raw if isinstance(raw, dict) else {}
    content: dict[str, Value] = {}
    for item in request.fields:
        value = given.get(item.name)
        if item.kind == "boolean":
            if value is None:
                continue
            if not isinstance(value, bool):
                raise ValueError(f"content.{item.name}: true or false")
            content[item.name] = value
            continue
        text = "" if value is None else str(value)
        try:
            converted = convert(item, text)
        except ValueError as exc:
            raise ValueError(f"content.{item.name}: {exc}") from None
        if converted is not None:
            content[item.name] = converted
    return content


def _field(item: ElicitField) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": item.name,
        "type": item.kind,
        "title": item.title,
        "description": item.description,
        "required": item.required,
    }
    optional = {
        "default": item.default,
        "choices": list(item.choices) or None,
        "choice_titles": list(item.choice_titles) or None,
        "minimum": item.minimum,
        "maximum": item.maximum,
        "min_length": item.min_length,
        "max_length": item.max_length,
        "format": item.format,
    }
    out.update({key: value for key, value in optional.items() if value is not None})
    return out
