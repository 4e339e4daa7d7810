"""The tool protocol: what the agent loop needs from a tool, and nothing more.

A tool states its name, a label for people, a description and a JSON Schema for the model,
and runs with ``execute(call_id, args, signal, on_update)``. Arguments arrive validated by
the tool's pydantic model (``params_model``) when it has one; otherwise as the raw dict.
Tools report failure by raising ``ToolError`` (or any exception): the loop turns it into an
error result the model can read, never an exception out of the loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from picode.ai.abort import AbortSignal
from picode.ai.types import ImageContent, TextContent, Tool, UserContent


class ToolError(Exception):
    """A failure the model should read as the tool's result (``is_error``)."""

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


@dataclass(slots=True)
class ToolResult:
    content: list[UserContent]
    details: Any = None
    is_error: bool = False

    @classmethod
    def text(cls, text: str, details: Any = None, *, is_error: bool = False) -> ToolResult:
        return cls([TextContent(text)], details, is_error)

    @property
    def text_content(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def images(self) -> list[ImageContent]:
        return [b for b in self.content if isinstance(b, ImageContent)]


#: Called with partial results while a tool runs (bash output, progress).
OnUpdate = Callable[[ToolResult], None]


@dataclass(slots=True)
class EarlyVerdict:
    """A streamed call that cannot succeed, known before its arguments are complete."""

    #: What was judged, for people (e.g. the file's path).
    subject: str
    #: A few words for the notice ("old_text not found").
    reason: str
    #: The error result the model reads instead of running the call.
    tool_message: str


class StreamingCheck(Protocol):
    def check(
        self, index: int, arguments: dict[str, Any], earlier: Sequence[tuple[str, dict[str, Any]]]
    ) -> EarlyVerdict | None:
        """Judge the partial ``arguments`` of the call at content ``index``; ``earlier`` is
        (name, arguments) of the calls before it in the same message. None: no verdict yet.
        It must never stop a call that could still succeed."""
        ...


@runtime_checkable
class ChecksStreamedArguments(Protocol):
    """Optional for tools: a check that can stop a doomed call while it is still written."""

    def streaming_check(self) -> StreamingCheck:
        """A fresh check for one assistant message (it may cache what it reads)."""
        ...


@runtime_checkable
class AgentTool(Protocol):
    # Read-only so that class attributes (``BaseTool`` subclasses) satisfy the protocol.
    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    def validate(self, arguments: dict[str, Any]) -> Any:
        """Return what ``execute`` receives; raise ``ToolArgumentsError`` when invalid."""
        ...

    def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate
    ) -> Awaitable[ToolResult]: ...


class ToolArgumentsError(ValueError):
    """Arguments that do not fit the schema; the message names fields and expectations."""


class StrictParams(BaseModel):
    """Base for tool parameter models: unknown fields are an error the model can fix."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class BaseTool:
    """Convenience base: subclasses set ``name``, ``label``, ``description``, ``params_model``
    and implement ``run``. The schema is generated from ``params_model``."""

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str]
    params_model: ClassVar[type[BaseModel]]
    #: Changes nothing (files, processes, the network): plan mode runs it (``is_read_only``).
    read_only: ClassVar[bool] = False

    @property
    def parameters(self) -> dict[str, Any]:
        return schema_of(self.params_model)

    def validate(self, arguments: dict[str, Any]) -> Any:
        return validate_arguments(self.params_model, arguments)

    async def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate
    ) -> ToolResult:
        return await self.run(args, signal, on_update)

    async def run(self, args: Any, signal: AbortSignal, on_update: OnUpdate) -> ToolResult:
        raise NotImplementedError


@dataclass(slots=True)
class FunctionTool:
    """A tool from a hand-written schema and an async function (extensions use this)."""

    name: str
    label: str
    description: str
    schema: dict[str, Any]
    function: Callable[[dict[str, Any], AbortSignal, OnUpdate], Awaitable[ToolResult]]
    required: tuple[str, ...] = field(default=())
    read_only: bool = False

    @property
    def parameters(self) -> dict[str, Any]:
        return self.schema

    def validate(self, arguments: dict[str, Any]) -> Any:
        return require_arguments(arguments, self.required or self.schema.get("required", ()))

    async def execute(
        self, call_id: str, args: Any, signal: AbortSignal, on_update: OnUpdate
    ) -> ToolResult:
        return await self.function(args, signal, on_update)


def require_arguments(arguments: dict[str, Any], required: Iterable[Any]) -> dict[str, Any]:
    """``arguments`` when every name in ``required`` is among them (a hand-written schema's
    check; the schema's owner validates the rest)."""
    missing = [key for key in required if isinstance(key, str) and key not in arguments]
    if missing:
        raise ToolArgumentsError(
            "Missing required argument(s): " + ", ".join(f"'{key}'" for key in missing)
        )
    return arguments


@cache
def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON schema without pydantic's titles. Built once per model: every request
    sends every tool's schema (pydantic builds one in ~0.5 ms). Shared: read, never change."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def validate_arguments(model: type[BaseModel], arguments: dict[str, Any]) -> BaseModel:
    """Validate with pydantic's lax mode ("5" → 5 where safe) and explain failures plainly."""
    from pydantic import ValidationError

    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"]) or "(arguments)"
            message = error["msg"]
            if error["type"] == "missing":
                message = "is required"
            elif error["type"] == "extra_forbidden":
                message = "is not a parameter of this tool"
            problems.append(f"'{where}' {message}")
        expected = ", ".join(
            f"{name}{'' if name in model.model_json_schema().get('required', ()) else '?'}"
            for name in model.model_fields
        )
        raise ToolArgumentsError(
            f"Invalid arguments: {'; '.join(problems)}. Expected parameters: {expected}."
        ) from None


def is_read_only(tool: object) -> bool:
    """Does ``tool`` declare that it changes nothing? An optional part of the protocol: a
    ``read_only`` attribute that is ``True`` (``BaseTool``, ``FunctionTool``); any other tool
    counts as one that may change things. Plan mode runs only these."""
    return getattr(tool, "read_only", False) is True


def tool_spec(tool: AgentTool) -> Tool:
    """What the provider sends to the model for this tool."""
    return Tool(tool.name, tool.description, tool.parameters)
