"""Finding skills: each folder in a skills folder that holds a ``SKILL.md`` (docs/skills.md).

Only the front matter is read, and at most ``MAX_FRONT_MATTER_BYTES`` of it: a skill's body
is for the model to read when it uses the skill, and a huge ``SKILL.md`` must not slow the
start. The user's folders come first and the first skill of a name wins, so a project cannot
take the name of one of the person's own skills. A problem with one skill is a warning about
that skill and never stops the session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from picode.session.paths import project_dir
from picode.session.recovery.front_matter import FrontMatterError, parse_fields
from picode.session.system_prompt import project_root

SKILL_FILE = "SKILL.md"
#: The Agent Skills specification's limits.
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_FRONT_MATTER_BYTES = 64 * 1024

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(.*)$")
_BLOCK_SCALARS = frozenset({"|", "|-", "|+", ">", ">-", ">+"})

Scope = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    #: The skill's ``SKILL.md`` (its folder holds its scripts and references).
    path: Path
    scope: Scope
    #: The skills folder it was found in.
    folder: Path


@dataclass(frozen=True, slots=True)
class SkillSet:
    skills: tuple[Skill, ...] = ()
    #: One line per skill left out or loaded with a caveat.
    problems: tuple[str, ...] = field(default=())

    def get(self, name: str) -> Skill | None:
        return next((skill for skill in self.skills if skill.name == name), None)


def skill_folders(cwd: Path, config_dir: Path, home: Path) -> list[tuple[Scope, Path]]:
    """Where skills are looked for, in order of precedence (the first of a name wins)."""
    return [
        ("user", config_dir / "skills"),
        ("user", home / ".agents" / "skills"),
        ("user", home / ".claude" / "skills"),
        ("project", project_dir(cwd) / "skills"),
        ("project", cwd / ".agents" / "skills"),
        ("project", cwd / ".claude" / "skills"),
    ]


def open_skills(cwd: Path, config_dir: Path, notify: Callable[[str, str, str], None]) -> SkillSet:
    """The session's skills, each problem told once (a warning with source "skills")."""
    found = discover_skills(cwd, config_dir, Path.home())
    for problem in found.problems:
        notify(problem, "warning", "skills")
    return found


def discover_skills(cwd: Path, config_dir: Path, home: Path) -> SkillSet:
    skills: list[Skill] = []
    problems: list[str] = []
    taken: dict[str, Path] = {}
    seen_folders: set[Path] = set()
    root = project_root(cwd.resolve())
    for scope, folder in skill_folders(cwd, config_dir, home):
        try:
            real_folder = folder.resolve()
        except OSError:
            continue
        if real_folder in seen_folders:  # home is the project: one folder, read once
            continue
        seen_folders.add(real_folder)
        for path in _skill_files(folder, problems):
            skill, notes = _load(path, scope, folder, root)
            problems.extend(f"Skill {path}: {note}" for note in notes)
            if skill is None:
                continue
            if skill.name in taken:
                problems.append(
                    f"Skill {path}: the name '{skill.name}' is already used by "
                    f"{taken[skill.name]}; skipped."
                )
                continue
            taken[skill.name] = path
            skills.append(skill)
    return SkillSet(tuple(skills), tuple(problems))


def _skill_files(folder: Path, problems: list[str]) -> Iterator[Path]:
    # os rather than pathlib: a Path made per entry cost more than reading the front matter.
    try:
        names = sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        problems.append(f"Skills folder {folder} cannot be read: {exc.strerror or exc}")
        return
    base = str(folder)
    for name in names:
        path = os.path.join(base, name, SKILL_FILE)
        if os.path.isfile(path):
            yield Path(path)


def _load(path: Path, scope: Scope, folder: Path, root: Path) -> tuple[Skill | None, list[str]]:
    """The skill and its notes; None (with the reason) when it cannot be used."""
    if scope == "project":
        # A repository decides what its files are, not what they point to (as AGENTS.md).
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(root):
            return None, [f"it is a link to {real}, outside {root}; skipped."]
    try:
        fields = read_front_matter(path)
    except FrontMatterError as exc:
        return None, [f"{exc}; skipped."]
    except OSError as exc:
        return None, [f"cannot be read ({exc.strerror or exc}); skipped."]
    name, description = fields.get("name", ""), fields.get("description", "")
    if not name:
        return None, ["the front matter has no 'name'; skipped."]
    if len(name) > MAX_NAME_CHARS or not _NAME.match(name):
        return None, [
            f"the name {name!r} is not a skill name (1 to {MAX_NAME_CHARS} lowercase letters, "
            "digits and single hyphens, not at either end); skipped."
        ]
    if not description.strip():
        return None, ["the front matter has no 'description'; skipped."]
    notes: list[str] = []
    if name != path.parent.name:
        notes.append(
            f"the name '{name}' differs from its folder's name '{path.parent.name}' "
            f"(loaded as '{name}')."
        )
    if len(description) > MAX_DESCRIPTION_CHARS:
        notes.append(
            f"the description has {len(description)} characters, more than "
            f"{MAX_DESCRIPTION_CHARS}; only the first {MAX_DESCRIPTION_CHARS} are used."
        )
        description = description[:MAX_DESCRIPTION_CHARS]
    return Skill(name, description.strip(), path.absolute(), scope, folder), notes


def read_front_matter(path: Path) -> dict[str, str]:
    """``name`` and ``description`` from the front matter (other fields are allowed and
    ignored); raises ``FrontMatterError`` or ``OSError``."""
    with path.open("rb") as handle:
        data = handle.read(MAX_FRONT_MATTER_BYTES + 1)
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise FrontMatterError("no front matter: SKILL.md must start with a '---' line")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        within = (
            f" within its first {MAX_FRONT_MATTER_BYTES // 1024} kB"
            if len(data) > MAX_FRONT_MATTER_BYTES
            else ""
        )
        raise FrontMatterError(f"the front matter is not closed by a '---' line{within}")
    blocks = _top_level_blocks(lines[1:end])
    return {key: _text(key, blocks[key]) for key in ("name", "description") if key in blocks}


def _top_level_blocks(lines: list[str]) -> dict[str, tuple[int, list[str]]]:
    """Each top-level key's lines (its own and the indented ones below it), with the line
    number of the first: fields such as ``metadata`` hold nested maps, which are skipped."""
    blocks: dict[str, tuple[int, list[str]]] = {}
    current: list[str] | None = None
    for offset, raw in enumerate(lines):
        number = offset + 2
        if not raw.strip() or (current is None and raw.lstrip().startswith("#")):
            continue
        if raw[:1] in (" ", "\t", "-", "#"):
            if current is None:
                raise FrontMatterError(f"line {number}: expected 'key: value': {raw!r}")
            current.append(raw)
            continue
        match = _TOP_KEY.match(raw)
        if match is None:
            raise FrontMatterError(f"line {number}: expected 'key: value': {raw!r}")
        if match.group(1) in blocks:
            raise FrontMatterError(f"line {number}: key '{match.group(1)}' appears twice")
        current = [raw]
        blocks[match.group(1)] = (number, current)
    return blocks


def _text(key: str, block: tuple[int, list[str]]) -> str:
    number, lines = block
    first, rest = lines[0], [line.strip() for line in lines[1:] if not line.startswith("#")]
    value = first.partition(":")[2].strip()
    if value in _BLOCK_SCALARS:  # "description: >" and the indented lines below it
        return ("\n" if value.startswith("|") else " ").join(rest).strip()
    if rest and value[:1] not in ("'", '"', "["):  # a plain value folded over lines
        return " ".join([value, *rest]).strip()
    # A quoted value may go on over lines too: YAML joins them with a space.
    joined = " ".join([first.rstrip(), *rest])
    parsed = parse_fields([joined], first_line_number=number).get(key, "")
    if not isinstance(parsed, str):
        raise FrontMatterError(f"line {number}: '{key}' must be text, not a list")
    return parsed
