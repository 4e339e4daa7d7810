"""Extensions (docs/extensions.md): Python modules with ``register(api)``, loaded at session start.

Found in the user's ``<config_dir>/extensions/``, the project's ``.picode/extensions/`` (only
in a trusted folder: the launcher passes no project folder otherwise) and the
``picode.extensions`` entry-point group, in that order: a project extension never replaces
the user's own of the same name. Each is loaded in isolation; one that fails to import or register
is reported and skipped, and a handler that raises at runtime is reported through the sink,
never propagated: an extension can not break a session.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

from picode.agent.tool import AgentTool, ToolResult
from picode.session.extensions.api import (
    EVENTS,
    HOOK_EVENTS,
    PLAIN_EVENTS,
    Command,
    ExtensionAPI,
    ExtensionSink,
    Subscription,
    ToolCallInfo,
    ToolResultInfo,
)
from picode.session.extensions.imports import PROJECT_PREFIX, source_spec

__all__ = [
    "EVENTS",
    "Command",
    "ExtensionAPI",
    "ExtensionHost",
    "ExtensionSink",
    "LoadedExtension",
    "ToolCallInfo",
    "ToolResultInfo",
]

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "picode.extensions"
_module_ids = itertools.count(1)


@dataclass(slots=True)
class LoadedExtension:
    name: str
    source: str


@dataclass(slots=True)
class _Candidate:
    name: str
    source: str
    #: Returns the ``register`` callable (imports the module).
    load: Callable[[], Any]


class ExtensionHost:
    def __init__(
        self,
        *,
        cwd: Path,
        user_dir: Path,
        project_dir: Path | None,
        use_entry_points: bool = True,
        sink: ExtensionSink,
    ) -> None:
        """``user_dir`` and ``project_dir`` are the extension folders themselves; None for a
        project whose folder is not trusted."""
        self.cwd = cwd
        self.user_dir = user_dir
        self.project_dir = project_dir
        self.use_entry_points = use_entry_points
        self.sink = sink
        self.tools: list[AgentTool] = []
        self.commands: dict[str, Command] = {}
        self.loaded: list[LoadedExtension] = []
        self._subscriptions: dict[str, list[Subscription]] = {event: [] for event in EVENTS}
        self._tool_owner: dict[str, str] = {}
        self._problems: list[str] = []
        self._loading = False

    # --- loading -------------------------------------------------------------------------

    def load(self) -> list[str]:
        """Load every extension found (again, if called twice); return the problems."""
        self._problems = []
        self.tools.clear()
        self.commands.clear()
        self.loaded.clear()
        self._tool_owner.clear()
        for subscriptions in self._subscriptions.values():
            subscriptions.clear()
        self._loading = True
        try:
            self._load_all()
        finally:
            self._loading = False
        return list(self._problems)

    def _load_all(self) -> None:
        seen: set[str] = set()
        user = self._folder_candidates(self.user_dir)
        project = (
            self._folder_candidates(self.project_dir, project=True) if self.project_dir else []
        )
        candidates = [*user, *project]
        if self.use_entry_points:
            candidates.extend(self._entry_point_candidates())
        for candidate in candidates:
            if candidate.name in seen:
                self._problems.append(
                    f"Extension '{candidate.name}' ({candidate.source}) skipped: one of that "
                    "name is already loaded"
                )
                continue
            seen.add(candidate.name)
            self._load_one(candidate)

    def _folder_candidates(self, folder: Path, *, project: bool = False) -> list[_Candidate]:
        try:
            entries = sorted(folder.iterdir())
        except FileNotFoundError:
            return []
        except OSError as exc:
            self._problems.append(f"Extensions folder {folder} cannot be read: {exc}")
            return []
        found: list[_Candidate] = []
        for entry in entries:
            if entry.name.startswith(("_", ".")):
                continue
            if entry.is_file() and entry.suffix == ".py":
                loader = _file_loader(entry, project=project)
                found.append(_Candidate(entry.stem, str(entry), loader))
            elif entry.is_dir() and (entry / "__init__.py").is_file():
                loader = _file_loader(entry, project=project)
                found.append(_Candidate(entry.name, str(entry), loader))
        return found

    def _entry_point_candidates(self) -> list[_Candidate]:
        try:
            points = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name)
        except Exception as exc:
            self._problems.append(f"Extension entry points cannot be listed: {exc}")
            return []
        return [
            _Candidate(
                point.name, f"entry point {point.name} = {point.value}", _point_loader(point)
            )
            for point in points
        ]

    def _load_one(self, candidate: _Candidate) -> None:
        api = ExtensionAPI(self, candidate.name, candidate.source)
        try:
            register = candidate.load()
            outcome = register(api)
            if inspect.isawaitable(outcome):
                _discard(outcome)
                raise TypeError("register(api) must be a plain function, not async")
        except (Exception, SystemExit) as exc:
            log.debug("extension %s failed to load", candidate.source, exc_info=True)
            self._problems.append(
                f"Extension '{candidate.name}' ({candidate.source}) failed to load and was "
                f"skipped: {_describe(exc)}"
            )
            return
        api._commit()
        self.loaded.append(LoadedExtension(candidate.name, candidate.source))

    # --- registration (called by ExtensionAPI) -------------------------------------------

    def add_subscription(self, subscription: Subscription) -> None:
        self._subscriptions[subscription.event].append(subscription)

    def add_tool(self, tool: AgentTool, extension: str) -> None:
        owner = self._tool_owner.get(tool.name)
        if owner is not None:
            self._report_problem(
                f"Extension '{extension}': a tool named '{tool.name}' is already registered "
                f"by '{owner}'; this one was skipped."
            )
            return
        self._tool_owner[tool.name] = extension
        self.tools.append(tool)

    def add_command(self, command: Command) -> None:
        existing = self.commands.get(command.name)
        if existing is not None:
            self._report_problem(
                f"Extension '{command.extension}': the command /{command.name} is already "
                f"registered by '{existing.extension}'; this one was skipped."
            )
            return
        self.commands[command.name] = command

    def _report_problem(self, text: str) -> None:
        # While load() runs, problems are returned to its caller; later ones are notified.
        if self._loading:
            self._problems.append(text)
        else:
            self._notify(text, "warning", None)

    # --- dispatch ------------------------------------------------------------------------

    async def emit(self, event_name: str, payload: Any = None) -> None:
        """Tell every handler of a plain event; failures are reported, not raised."""
        if event_name not in PLAIN_EVENTS:
            hint = (
                " (use on_tool_call, on_tool_result or transform_input)"
                if (event_name in HOOK_EVENTS)
                else ""
            )
            raise ValueError(f"emit() does not dispatch {event_name!r}{hint}")
        for subscription in list(self._subscriptions[event_name]):
            args = (payload,) if subscription.takes_payload else ()
            await self._call(subscription, args)

    async def on_tool_call(self, name: str, args: Any, call_id: str) -> str | None:
        """The first handler that returns a reason blocks the call."""
        info = ToolCallInfo(name, args, call_id)
        for subscription in list(self._subscriptions["tool_call"]):
            ok, answer = await self._call(subscription, (info,))
            if not ok or answer is None:
                continue
            if isinstance(answer, str) and answer.strip():
                return answer
            self._wrong_answer(subscription, "a reason string or None", answer)
        return None

    async def on_tool_result(
        self, name: str, args: Any, call_id: str, result: ToolResult
    ) -> ToolResult | None:
        """Handlers may replace the result in turn; None when none did."""
        current = result
        replaced = False
        for subscription in list(self._subscriptions["tool_result"]):
            info = ToolResultInfo(name, args, call_id, current)
            ok, answer = await self._call(subscription, (info,))
            if not ok or answer is None:
                continue
            if isinstance(answer, ToolResult):
                current, replaced = answer, True
            else:
                self._wrong_answer(subscription, "a ToolResult or None", answer)
        return current if replaced else None

    async def transform_input(self, text: str) -> str:
        for subscription in list(self._subscriptions["input"]):
            ok, answer = await self._call(subscription, (text,))
            if not ok or answer is None:
                continue
            if isinstance(answer, str):
                text = answer
            else:
                self._wrong_answer(subscription, "a string or None", answer)
        return text

    async def run_command(self, name: str, argument: str) -> bool:
        """Run ``/name argument``; False when no extension registered ``name``."""
        command = self.commands.get(name.removeprefix("/"))
        if command is None:
            return False
        try:
            outcome = command.handler(argument)
            if inspect.isawaitable(outcome):
                await outcome
        except (Exception, SystemExit) as exc:
            log.debug("extension command /%s failed", command.name, exc_info=True)
            self._notify(
                f"Extension '{command.extension}': /{command.name} failed: {_describe(exc)}",
                "error",
                command.extension,
            )
        return True

    async def _call(self, subscription: Subscription, args: tuple[Any, ...]) -> tuple[bool, Any]:
        try:
            outcome = subscription.handler(*args)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except (Exception, SystemExit) as exc:
            log.debug("extension handler failed", exc_info=True)
            self._notify(
                f"Extension '{subscription.extension}' failed in its '{subscription.event}' "
                f"handler: {_describe(exc)}",
                "error",
                subscription.extension,
            )
            return False, None
        return True, outcome

    def _wrong_answer(self, subscription: Subscription, expected: str, answer: Any) -> None:
        self._notify(
            f"Extension '{subscription.extension}': its '{subscription.event}' handler returned "
            f"{type(answer).__name__}, expected {expected}; ignored.",
            "warning",
            subscription.extension,
        )

    def _notify(self, text: str, level: str, source: str | None) -> None:
        try:
            self.sink.notify(text, level, source)
        except Exception:
            log.exception("extension notice could not be delivered: %s", text)


def _file_loader(path: Path, *, project: bool = False) -> Callable[[], Any]:
    """``project``: from source only, never from bytecode (``extension_import``)."""

    def load() -> Any:
        stem = re.sub(r"\W", "_", path.stem if path.is_file() else path.name)
        prefix = PROJECT_PREFIX if project else "picode_extension"
        module_name = f"{prefix}_{next(_module_ids)}_{stem}"
        file = path / "__init__.py" if path.is_dir() else path
        package = path if path.is_dir() else None
        spec: ModuleSpec | None
        if project:
            spec = source_spec(module_name, file, package=package)
        elif package is not None:
            spec = importlib.util.spec_from_file_location(
                module_name, file, submodule_search_locations=[str(package)]
            )
        else:
            spec = importlib.util.spec_from_file_location(module_name, file)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        # Registered before running so the module's own imports (dataclasses, relative
        # imports in a package) can find it; removed again if it fails.
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(module_name, None)
            raise
        return _register_of(module)

    return load


def _point_loader(point: metadata.EntryPoint) -> Callable[[], Any]:
    def load() -> Any:
        target = point.load()
        if inspect.ismodule(target):
            return _register_of(target)
        if callable(target):
            return target
        raise TypeError(f"{point.value} is neither a module nor a register function")

    return load


def _register_of(module: Any) -> Any:
    register = getattr(module, "register", None)
    if not callable(register):
        raise AttributeError("it has no register(api) function")
    return register


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _discard(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if callable(close):
        close()
