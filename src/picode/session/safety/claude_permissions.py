"""Claude Code's ``permissions`` for commands, read where its users keep them
(docs/security.md "Claude Code's permission rules").

``Bash(...)`` rules, in Claude Code's own order: a command a ``deny`` rule matches is not
run, one an ``ask`` rule matches is asked about whatever the mode, and one an ``allow`` rule
matches runs unasked. ``~/.claude/settings.json`` is yours; a project's
``.claude/settings.json`` and ``settings.local.json`` add their ``allow`` only in a trusted
folder, while their ``deny`` and ``ask`` (which only refuse or ask more) count everywhere.

A pattern is matched against the whole command: ``Bash(npm test)`` that command exactly,
``Bash(git diff:*)`` and ``Bash(git diff *)`` it and anything after a space, ``*`` elsewhere
any characters. An ``allow`` pattern with a wildcard covers plain commands only (words: no
``;``, ``|``, ``$``... where a wildcard could hide a second command); ``Bash`` or
``Bash(*)`` alone, every command, is not taken from an allow list (that is ``approval =
"never"``, yours to choose).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from picode.session.safety.command_scope import plain_words

#: The project's files, beside its ``.claude/skills`` and ``.claude/commands``.
PROJECT_FILES = (Path(".claude") / "settings.json", Path(".claude") / "settings.local.json")
_RULE = re.compile(r"Bash(?:\((?P<pattern>.*)\))?", re.DOTALL)
_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ClaudeRule:
    #: As written in the file: ``Bash(npm run test:*)``.
    text: str
    #: None: every command (``Bash``, ``Bash(*)``).
    pattern: re.Pattern[str] | None
    wildcard: bool

    def matches(self, command: str) -> bool:
        return self.pattern is None or self.pattern.fullmatch(command.strip()) is not None


def parse_rule(text: str) -> ClaudeRule | None:
    """A ``Bash`` rule; None for any other tool's rule."""
    found = _RULE.fullmatch(text.strip())
    if found is None:
        return None
    body = (found.group("pattern") or "").strip()
    if body in ("", "*", ":*"):
        return ClaudeRule(text, None, True)
    if body.endswith(":*"):  # the older prefix form: `npm run:*`
        return ClaudeRule(text, re.compile(re.escape(body[:-2].rstrip()) + r"(?: .*)?"), True)
    if "*" not in body:
        return ClaudeRule(text, re.compile(re.escape(body)), False)
    if body.endswith(" *") and body.count("*") == 1:  # a lone trailing wildcard is optional
        return ClaudeRule(text, re.compile(re.escape(body[:-2].rstrip()) + r"(?: .*)?"), True)
    parts = (re.escape(part) for part in body.split("*"))
    return ClaudeRule(text, re.compile(".*".join(parts), re.DOTALL), True)


@dataclass(frozen=True, slots=True)
class ClaudeRules:
    """The ``Bash`` rules of the files read, and which of them picode uses."""

    #: (rule, the file it came from) of each allow rule used.
    allow: tuple[tuple[ClaudeRule, str], ...] = ()
    #: A command a deny rule matches is not run, whatever the mode and the other lists.
    deny: tuple[ClaudeRule, ...] = ()
    #: A command an ask rule matches is asked about, whatever the mode and the lists.
    ask: tuple[ClaudeRule, ...] = ()
    #: What was read and not used, as lines for ``/permissions``.
    unused: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=())

    def denied_by(self, command: str) -> str | None:
        """The deny rule that matches ``command``, as written."""
        return next((rule.text for rule in self.deny if rule.matches(command)), None)

    def asked_by(self, command: str) -> str | None:
        return next((rule.text for rule in self.ask if rule.matches(command)), None)

    def approves(self, command: str) -> bool:
        if self.denied_by(command) or self.asked_by(command):
            return False
        plain = plain_words(command) is not None
        return any(rule.matches(command) for rule, _ in self.allow if plain or not rule.wildcard)

    def described(self) -> list[str]:
        return [f"{rule.text} ({source})" for rule, source in self.allow]


def read_claude_rules(cwd: Path, *, home: Path | None = None, trusted: bool) -> ClaudeRules:
    """Your ``~/.claude/settings.json``, and the project's files (their allow when
    ``trusted``)."""
    home = home if home is not None else Path.home()
    allow: list[tuple[ClaudeRule, str]] = []
    refusing: dict[str, list[ClaudeRule]] = {"deny": [], "ask": []}
    unused: list[str] = []
    problems: list[str] = []
    files = [(home / ".claude" / "settings.json", "~/.claude/settings.json", True)]
    files += [(cwd / name, str(name), trusted) for name in PROJECT_FILES]
    for file, shown, allow_used in files:
        lists = _permission_lists(file, problems)
        for kind, rules in refusing.items():
            rules += (rule for rule in _rules(lists.get(kind, [])) if rule is not None)
        for rule in _rules(lists.get("allow", [])):
            if rule is None:
                continue
            if rule.pattern is None:
                unused.append(f"{rule.text} ({shown}): every command; not taken")
            elif allow_used:
                allow.append((rule, shown))
            else:
                unused.append(f"{rule.text} ({shown}): this folder is not trusted")
    if problems and allow:
        # What was not read may hold a deny rule: none of the allow rules is used then.
        unused += [f"{rule.text} ({source}): a file could not be read" for rule, source in allow]
        allow = []
    deny, ask = (tuple(refusing[kind]) for kind in ("deny", "ask"))
    return ClaudeRules(tuple(allow), deny, ask, tuple(unused), tuple(problems))


def project_allow_rules(cwd: Path) -> list[tuple[str, list[str]]]:
    """(file, its allow rules for commands) of the project's files: what trusting the
    folder would add (the trust question lists them)."""
    found: list[tuple[str, list[str]]] = []
    for name in PROJECT_FILES:
        lists = _permission_lists(cwd / name, [])
        rules = [rule.text for rule in _rules(lists.get("allow", [])) if rule is not None]
        if rules:
            found.append((str(name), rules))
    return found


def _rules(entries: Iterable[object]) -> Iterator[ClaudeRule | None]:
    for entry in entries:
        yield parse_rule(entry) if isinstance(entry, str) else None


def read_claude_settings(file: Path, problems: list[str]) -> dict[str, object]:
    """A Claude Code settings file's top level; {} when absent, and a problem when it cannot
    be read (larger than 1 MB, not JSON)."""
    try:
        if file.stat().st_size > _MAX_BYTES:
            problems.append(f"{file}: larger than 1 MB; not read")
            return {}
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        problems.append(f"{file}: cannot be read ({exc})")
        return {}
    return data if isinstance(data, dict) else {}


def _permission_lists(file: Path, problems: list[str]) -> dict[str, list[object]]:
    permissions = read_claude_settings(file, problems).get("permissions")
    if not isinstance(permissions, dict):
        return {}
    return {
        kind: value
        for kind in ("allow", "deny", "ask")
        if isinstance(value := permissions.get(kind), list)
    }
