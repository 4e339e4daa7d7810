"""Stream rules (TTSR, docs/stream-rules.md): regexes watched while the model writes.

A rule is a Markdown file with front matter (``condition``, ``scope``, ``globs``, ``name``,
``once``); its body is the reminder. ``RuleMatcher`` sees every streamed delta, tests the
block's accumulated text against the rules for that kind of block, and names the first rule
that matches; the session then aborts the stream, drops the partial message, injects
``reminder_message(rule)`` and retries the turn. See docs/stream-rules.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from picode.ai.events import (
    AssistantMessageEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallDeltaEvent,
)
from picode.ai.types import Message, ToolCall, UserMessage
from picode.session.recovery.front_matter import FrontMatterError, FrontValue, split_front_matter

KNOWN_KEYS = ("condition", "scope", "globs", "name", "once")
BLOCK_SCOPES = ("text", "thinking", "tool")
#: How far back from a new delta a match may start; keeps the work per delta bounded.
WINDOW = 512

REMINDER_OPEN = "<system-reminder>\n"
REMINDER_CLOSE = "</system-reminder>"

_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})


@dataclass(slots=True)
class Rule:
    name: str
    conditions: list[re.Pattern[str]]
    scopes: list[str]
    globs: list[str]
    body: str
    source: Path
    once: bool = True

    def applies_to_tool(self, tool_name: str) -> bool:
        return any(scope in ("tool", f"tool:{tool_name}") for scope in self.scopes)

    def matches_path(self, path: str) -> bool:
        return path_matches_globs(path, self.globs)


class RuleError(ValueError):
    pass


# --- loading -------------------------------------------------------------------------------


def load_rules(
    project_rules_dir: Path | None, user_rules_dir: Path
) -> tuple[list[Rule], list[str]]:
    """Rules from the user's folder, then the project's (None: not trusted), and problems
    found. A project rule never replaces the user's rule of the same name."""
    rules: list[Rule] = []
    problems: list[str] = []
    taken: dict[str, Path] = {}
    folders = [user_rules_dir] if project_rules_dir is None else [user_rules_dir, project_rules_dir]
    for folder in folders:
        seen_here: dict[str, Path] = {}
        for path in _rule_files(folder, problems):
            try:
                rule, warnings = parse_rule(path.read_text(encoding="utf-8"), path)
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"Rule {path}: cannot be read ({exc}); skipped.")
                continue
            except RuleError as exc:
                problems.append(f"Rule {path}: {exc}; skipped.")
                continue
            problems.extend(f"Rule {path}: {warning}" for warning in warnings)
            if rule.name in seen_here:
                problems.append(
                    f"Rule {path}: the name '{rule.name}' is already used by "
                    f"{seen_here[rule.name]}; skipped."
                )
                continue
            seen_here[rule.name] = path
            if rule.name in taken:
                problems.append(
                    f"Rule {path}: the name '{rule.name}' is already used by your rule "
                    f"{taken[rule.name]}; skipped."
                )
                continue
            taken[rule.name] = path
            rules.append(rule)
    return rules, problems


def _rule_files(folder: Path, problems: list[str]) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file())
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(f"Rules folder {folder} cannot be read: {exc}")
        return []


def parse_rule(text: str, source: Path) -> tuple[Rule, list[str]]:
    """The rule in ``text`` and warnings; raise ``RuleError`` when it cannot be used."""
    try:
        fields, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise RuleError(str(exc)) from None
    warnings = [
        f"unknown key '{key}' ignored (known keys: {', '.join(KNOWN_KEYS)})"
        for key in fields
        if key not in KNOWN_KEYS
    ]
    patterns = _as_list(fields.get("condition"))
    if not patterns:
        raise RuleError("'condition' is missing: give a regex or a list of regexes")
    conditions: list[re.Pattern[str]] = []
    for pattern in patterns:
        try:
            conditions.append(re.compile(pattern))
        except re.error as exc:
            raise RuleError(
                f"condition {pattern!r} is not a valid regular expression: {exc}"
            ) from None
    scopes = _as_list(fields.get("scope")) or ["text"]
    for scope in scopes:
        if scope not in BLOCK_SCOPES and not (scope.startswith("tool:") and scope[5:].strip()):
            raise RuleError(f"scope {scope!r} is not one of text, thinking, tool, tool:NAME")
    globs = _as_list(fields.get("globs"))
    if globs and not any(scope.startswith("tool") for scope in scopes):
        warnings.append("'globs' only apply to tool scopes; ignored for text and thinking")
    name = fields.get("name") or source.stem
    if not isinstance(name, str):
        raise RuleError("'name' must be a single value")
    once = _as_bool(fields.get("once"), "once", default=True)
    if not body:
        raise RuleError("the reminder text (the body after the front matter) is empty")
    rule = Rule(name.strip(), conditions, scopes, globs, body, source, once)
    return rule, warnings


def _as_list(value: FrontValue | None) -> list[str]:
    if value is None or value == "":
        return []
    items = [value] if isinstance(value, str) else value
    return [item for item in items if item]


def _as_bool(value: FrontValue | None, key: str, *, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, str) and value.lower() in _TRUE:
        return True
    if isinstance(value, str) and value.lower() in _FALSE:
        return False
    raise RuleError(f"'{key}' must be true or false, not {value!r}")


def path_matches_globs(path: str, globs: Sequence[str]) -> bool:
    """Glob match on a tool's path; a relative glob may match any tail of the path."""
    if not globs:
        return True
    normalised = path.strip().replace("\\", "/")
    while normalised.startswith("./"):
        normalised = normalised[2:]
    parts = normalised.split("/")
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    for glob in globs:
        if fnmatchcase(normalised, glob):
            return True
        if glob.startswith("/"):
            continue
        bare = glob[3:] if glob.startswith("**/") else glob
        if any(fnmatchcase(tail, bare) for tail in tails):
            return True
    return False


# --- matching ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Buffer:
    """One streamed block: its recent tail, and all of it when a path-dependent rule needs
    a rescan once the path is known."""

    tail: str = ""
    chunks: list[str] | None = None
    path: str | None = None
    glob_ok: set[str] = field(default_factory=set)


class RuleMatcher:
    def __init__(self, rules: Sequence[Rule], fired: Iterable[str] = ()) -> None:
        self.rules = list(rules)
        self.fired: set[str] = set(fired)
        self._text = [rule for rule in self.rules if "text" in rule.scopes]
        self._thinking = [rule for rule in self.rules if "thinking" in rule.scopes]
        self._tool = [rule for rule in self.rules if any(s.startswith("tool") for s in rule.scopes)]
        self._buffers: dict[tuple[str, int], _Buffer] = {}
        self._fired_in_message: set[str] = set()

    def reset_buffers(self) -> None:
        """Call at each new assistant message."""
        self._buffers.clear()
        self._fired_in_message.clear()

    def _armed(self, rule: Rule) -> bool:
        if rule.name in self._fired_in_message:
            return False
        return not (rule.once and rule.name in self.fired)

    def feed(self, event: AssistantMessageEvent) -> Rule | None:
        """The first not-yet-fired rule this delta makes match (marked fired), else None."""
        if isinstance(event, TextDeltaEvent):
            kind, pool = "text", self._text
        elif isinstance(event, ThinkingDeltaEvent):
            kind, pool = "thinking", self._thinking
        elif isinstance(event, ToolCallDeltaEvent):
            kind, pool = "tool", self._tool
        else:
            return None
        tool: ToolCall | None = None
        if kind == "tool":
            content = event.partial.content
            block = content[event.content_index] if event.content_index < len(content) else None
            if not isinstance(block, ToolCall):
                return None
            tool = block
            pool = [rule for rule in pool if rule.applies_to_tool(block.name)]
        candidates = [rule for rule in pool if self._armed(rule)]
        if not candidates or not event.delta:
            return None
        key = (kind, event.content_index)
        buffer = self._buffers.get(key)
        if buffer is None:
            buffer = self._buffers[key] = _Buffer()
            if tool is not None and any(rule.globs for rule in candidates):
                buffer.chunks = []
        found = self._match(buffer, event.delta, candidates, tool)
        if found is not None:
            self._fired_in_message.add(found.name)
            if found.once:
                self.fired.add(found.name)
        return found

    def _match(
        self, buffer: _Buffer, delta: str, candidates: list[Rule], tool: ToolCall | None
    ) -> Rule | None:
        if buffer.chunks is not None:
            buffer.chunks.append(delta)
        tail = buffer.tail + delta
        keep = 2 * WINDOW + len(delta)
        if len(tail) > keep:
            # What is dropped lies more than WINDOW before this delta, and the start index
            # below stays positive, so '^' and lookbehinds never see a false beginning.
            tail = tail[-keep:]
        buffer.tail = tail
        start = max(0, len(tail) - len(delta) - WINDOW)
        rescan: set[str] = set()
        if tool is not None and buffer.chunks is not None:
            rescan = self._refresh_path(buffer, tool, candidates)
        full_text = "".join(buffer.chunks) if rescan and buffer.chunks is not None else ""
        for rule in candidates:
            if rule.globs and tool is not None and rule.name not in buffer.glob_ok:
                continue
            if rule.name in rescan:
                if any(p.search(full_text) for p in rule.conditions):
                    return rule
            elif any(p.search(tail, start) for p in rule.conditions):
                return rule
        return None

    @staticmethod
    def _refresh_path(buffer: _Buffer, tool: ToolCall, candidates: list[Rule]) -> set[str]:
        """Rules whose globs start matching now: their whole block must be searched once."""
        path = tool.arguments.get("path")
        path = path if isinstance(path, str) and path else None
        if path == buffer.path:
            return set()
        buffer.path = path
        before = buffer.glob_ok
        buffer.glob_ok = {
            rule.name
            for rule in candidates
            if rule.globs and path is not None and rule.matches_path(path)
        }
        return buffer.glob_ok - before


def reminder_message(rule: Rule) -> UserMessage:
    """The hidden reminder injected into the context when ``rule`` fires."""
    text = (
        f"{REMINDER_OPEN}Rule '{rule.name}' applies: your previous response was stopped "
        f"because it matched this rule. Follow it and continue.\n\n{rule.body}\n{REMINDER_CLOSE}"
    )
    return UserMessage(text)


def is_reminder(message: Message) -> bool:
    if not isinstance(message, UserMessage):
        return False
    text = message.text
    return text.startswith(REMINDER_OPEN) and text.rstrip().endswith(REMINDER_CLOSE)
