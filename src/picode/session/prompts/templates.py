"""Prompt templates: ``<config>/prompts/``, ``.picode/prompts/`` and ``.claude/commands/``.

A Markdown file is a command named after the file (``review.md`` is ``/review``). As in
Claude Code, a subfolder only labels it: ``git/log.md`` is ``/log``, described "(git)". Optional
front matter gives ``description``,
``argument-hint`` and ``model``. ``/name args`` sends the body with ``$ARGUMENTS`` and
``$1``…``$9`` filled in. A bad file is left out with one warning; start-up goes on.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from picode.session.recovery.front_matter import FrontMatterError, split_front_matter

TemplateSource = Literal["builtin", "user", "project"]

#: Commands of picode's front ends (TUI, ACP) and the skills' commands: a template may not
#: take their names, or typing one would do something else than the person expects.
RESERVED_NAMES = frozenset(
    {
        "model", "thinking", "theme", "new", "resume", "fork", "rewind", "undo", "tree",
        "label", "compact", "session", "name", "copy", "export", "mcp", "hotkeys", "trust",
        "sandbox", "quit", "help", "clear", "exit", "init", "checkpoints", "skill", "skills",
        "plan", "login", "logout", "context", "permissions",
    }
)  # fmt: skip

_NAME = re.compile(r"^[A-Za-z0-9][\w-]*$")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")
_INVOCATION = re.compile(r"^/(\S+)(?:\s+(.*))?$", re.DOTALL)
#: A template bigger than this is a mistake (a log saved as .md), not a prompt.
MAX_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    name: str
    body: str
    #: None for picode's own (``/init``).
    path: Path | None
    source: TemplateSource
    description: str = ""
    argument_hint: str | None = None
    #: ``provider/id`` or an alias: the model this template's message is sent to.
    model: str | None = None


@dataclass(slots=True)
class LoadedTemplates:
    templates: dict[str, PromptTemplate] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def template_folders(config_dir: Path | None, cwd: Path) -> list[tuple[Path, TemplateSource]]:
    """Lowest precedence first: a project's template replaces the person's of that name."""
    folders: list[tuple[Path, TemplateSource]] = []
    if config_dir is not None:
        folders.append((config_dir / "prompts", "user"))
    folders.append((cwd / ".claude" / "commands", "project"))
    folders.append((cwd / ".picode" / "prompts", "project"))
    return folders


def load_templates(config_dir: Path | None, cwd: Path) -> LoadedTemplates:
    """picode's own ``/init`` and every file of the template folders."""
    from picode.session.prompts.init import INIT

    loaded = LoadedTemplates({INIT.name: INIT})
    for folder, source in template_folders(config_dir, cwd):
        if not folder.is_dir():
            continue
        here: dict[str, Path] = {}
        for path in sorted(folder.rglob("*.md")):
            template = _read(path, folder, source, loaded.warnings)
            if template is None:
                continue
            if template.name in here:
                loaded.warnings.append(
                    f"Prompt template {path} left out: /{template.name} is already "
                    f"{here[template.name]}."
                )
                continue
            here[template.name] = path
            loaded.templates[template.name] = template
    return loaded


def _read(
    path: Path, folder: Path, source: TemplateSource, warnings: list[str]
) -> PromptTemplate | None:
    *labels, name = path.relative_to(folder).with_suffix("").parts
    if not _NAME.match(name):
        warnings.append(
            f"Prompt template {path} left out: its name must be letters, digits, '_' or '-'."
        )
        return None
    if name in RESERVED_NAMES:
        warnings.append(f"Prompt template {path} left out: /{name} is a built-in command.")
        return None
    try:
        if path.stat().st_size > MAX_BYTES:
            warnings.append(f"Prompt template {path} left out: larger than {MAX_BYTES} bytes.")
            return None
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"Prompt template {path} left out: cannot be read ({exc}).")
        return None
    fields: dict[str, str | list[str]] = {}
    body = text.strip()
    if text.lstrip("\ufeff").startswith("---"):
        try:
            fields, body = split_front_matter(text)
        except FrontMatterError as exc:
            warnings.append(f"Prompt template {path} left out: front matter: {exc}.")
            return None
    if not body:
        warnings.append(f"Prompt template {path} left out: it has no text to send.")
        return None
    values = {key: value for key, value in fields.items() if isinstance(value, str)}
    description = values.get("description") or _first_line(body)
    if labels:
        description += f" ({'/'.join(labels)})"
    return PromptTemplate(
        name=name,
        body=body,
        path=path,
        source=source,
        description=description,
        argument_hint=values.get("argument-hint") or None,
        model=values.get("model") or None,
    )


def _first_line(body: str) -> str:
    line = next((line.strip() for line in body.splitlines() if line.strip()), "")
    return line if len(line) <= 60 else line[:59] + "…"


def expand(template: PromptTemplate, arguments: str) -> str:
    """The body with ``$ARGUMENTS`` (everything typed after the name) and ``$1``…``$9``
    (its words, shell-quoted words kept whole) filled in; a body that uses none of them gets
    the arguments after it, so what was typed is never dropped."""
    arguments = arguments.strip()
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words rather than an error
        words = arguments.split()

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    if _PLACEHOLDER.search(template.body) is None:
        return f"{template.body}\n\n{arguments}" if arguments else template.body
    return _PLACEHOLDER.sub(fill, template.body).strip()


def parse_invocation(
    text: str, templates: dict[str, PromptTemplate]
) -> tuple[PromptTemplate, str] | None:
    """``/name args`` → the template and the arguments; None when ``text`` is not one."""
    match = _INVOCATION.match(text.strip())
    if match is None:
        return None
    template = templates.get(match.group(1))
    if template is None:
        return None
    return template, (match.group(2) or "").strip()
