"""Folder trust: a project's ``.picode/`` is a stranger's input until the person trusts it.

What a project can put there that redirects requests, runs code or relaxes safety (gated
config keys, extensions, ``SYSTEM.md``, stream rules) is only used in a folder the person
trusted, for exactly those files: the decision is remembered per folder together with a
fingerprint of them, and any change asks again. Context files (``AGENTS.md``,
``APPEND_SYSTEM.md``) and settings that only tighten safety need no trust.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from picode.ai.untrusted import one_line
from picode.session.paths import Paths, project_dir
from picode.session.safety.claude_permissions import project_allow_rules
from picode.session.safety.private_files import write_private_json
from picode.session.safety.trust_scan import Scan

__all__ = ["ProjectTrust", "TrustItem", "TrustStore", "assess_project"]

TRUST_FILE_NAME = "trusted-folders.json"

Decision = Literal["trusted", "untrusted"]


@dataclass(frozen=True, slots=True)
class TrustItem:
    #: Relative to the folder, e.g. ``.picode/config.toml``.
    source: str
    description: str


@dataclass(slots=True)
class ProjectTrust:
    folder: Path
    items: list[TrustItem]
    fingerprint: str
    #: What the person answered for exactly these files, if anything.
    decision: Decision | None = None
    #: The folder was decided on before, for other files: they changed since.
    changed: bool = False
    #: ``--trust-project``: trusted for this run, whatever was decided.
    override: bool = False
    problems: list[str] = field(default_factory=list)
    #: What the folder adds that is used trusted or not (shown, never asked about).
    context: list[TrustItem] = field(default_factory=list)

    @property
    def trusted(self) -> bool:
        return bool(self.items) and (self.override or self.decision == "trusted")

    @property
    def needs_answer(self) -> bool:
        return bool(self.items) and not self.override and self.decision is None

    def ignored_summary(self, *, interactive: bool) -> str | None:
        """What an untrusted run leaves out, in one message; None when nothing is."""
        if not self.items or self.trusted:
            return None
        # Descriptions quote the project's own values: one escaped line each.
        lines = "\n".join(
            one_line(f"  - {item.source}: {item.description}", 200) for item in self.items
        )
        if interactive:
            how = "Trust the folder with /trust to use them."
        else:
            how = "Run picode here once to answer the trust question, or pass --trust-project."
        return f"This folder is not trusted, so picode ignored:\n{lines}\n{how}"


class TrustStore:
    """``{"folders": {"/abs/path": {"decision", "fingerprint", "decided_at"}}}``, mode 0600."""

    def __init__(self, paths: Paths) -> None:
        self.path = paths.data_dir / TRUST_FILE_NAME
        self.problem: str | None = None

    def get(self, folder: Path) -> dict[str, Any] | None:
        entry = self._load().get(str(folder))
        return entry if isinstance(entry, dict) else None

    def set(self, folder: Path, decision: Decision, fingerprint: str) -> None:
        """Raises ``OSError`` when the file cannot be written."""
        folders = self._load()
        folders[str(folder)] = {
            "decision": decision,
            "fingerprint": fingerprint,
            "decided_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        }
        write_private_json(self.path, {"version": 1, "folders": folders})

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # Unreadable decisions count as none: the person is asked again, nothing is trusted.
            self.problem = f"{self.path} cannot be read ({exc}); trusted folders will ask again"
            return {}
        folders = data.get("folders") if isinstance(data, dict) else None
        return folders if isinstance(folders, dict) else {}


def assess_project(paths: Paths, cwd: Path, *, override: bool = False) -> ProjectTrust:
    """What ``cwd``'s ``.picode/`` holds that needs trust, and what was decided about it."""
    from picode.session.config.claude_hooks import project_hook_commands, wants_claude_hooks
    from picode.session.config.settings import project_config_gates

    folder = cwd.resolve()
    project = project_dir(folder)
    items: list[TrustItem] = []
    scan = Scan(project, folder)
    config_file = project / "config.toml"
    for gate in project_config_gates(paths, folder):
        items.append(TrustItem(_relative(config_file, folder), gate.description))
        scan.update("config", list(gate.loc), gate.value)
    for claude_file, rules in project_allow_rules(folder):
        what = f"lets commands run unasked (Claude Code's allow list): {_some(rules)}"
        items.append(TrustItem(claude_file, what))
        scan.update("claude", claude_file, rules)
    # The folder's files first: your config is read again only where they hold hooks.
    hook_files = project_hook_commands(folder)
    for claude_file, commands in hook_files if hook_files and wants_claude_hooks(paths) else []:
        what = f"runs commands on picode's events (Claude Code hooks): {_some(commands)}"
        items.append(TrustItem(claude_file, what))
        scan.update("claude-hooks", claude_file, commands)
    for source, description, files in _gated_files(project, scan):
        items.append(TrustItem(_relative(source, folder), description))
        for file in files:
            scan.add_file(file)
    items.extend(_link_items(scan, project))
    fingerprint = scan.digest.hexdigest()
    if scan.over_cap is not None:
        # Past a bound the scan cannot vouch for what it did not read: a fingerprint no
        # stored one matches, so the folder counts as changed every time.
        fingerprint = "unbounded:" + secrets.token_hex(16)
        items.append(
            TrustItem(
                _relative(project, folder),
                f"holds {scan.over_cap} to check: picode cannot tell whether they change, "
                "so it asks every time",
            )
        )
    trust = ProjectTrust(folder, items, fingerprint, override=override)
    if not items:
        return trust  # no question: what it would list as context is not read at all
    trust.context = [*_context_items(folder), *_skill_items(folder), *_agent_items(folder)]
    store = TrustStore(paths)
    entry = store.get(folder)
    if store.problem:
        trust.problems.append(store.problem)
    if entry is not None:
        if entry.get("fingerprint") == trust.fingerprint and entry.get("decision") in (
            "trusted",
            "untrusted",
        ):
            trust.decision = entry["decision"]
        else:
            trust.changed = True
    return trust


def record_decision(paths: Paths, trust: ProjectTrust, decision: Decision) -> None:
    """Remember ``decision`` for the files ``trust`` saw. Raises ``OSError``."""
    TrustStore(paths).set(trust.folder, decision, trust.fingerprint)
    trust.decision = decision
    trust.changed = False


def _gated_files(project: Path, scan: Scan) -> Iterator[tuple[Path, str, list[Path]]]:
    extensions = project / "extensions"
    # Bytecode included although the loader never reads it (extensions.py): a changed
    # ``.pyc`` beside a project extension is worth a second look.
    files = scan.files_below(extensions)
    if files:
        names = sorted({file.relative_to(extensions).parts[0] for file in files})
        shown = _some(names)
        yield extensions, f"runs Python code at start-up (extensions: {shown})", files
    hooks = project / "hooks"
    # Where project hooks keep their scripts: a changed script is a changed hook.
    hook_files = scan.files_below(hooks)
    if hook_files:
        yield hooks, f"holds {len(hook_files)} file(s) that hooks may run", hook_files
    system = project / "SYSTEM.md"
    if system.is_file():
        yield system, "replaces picode's system prompt", [system]
    rules = project / "rules"
    rule_files = scan.files_below(rules, suffix=".md")
    if rule_files:
        yield (
            rules,
            f"adds {len(rule_files)} stream rule(s) that can stop and steer replies",
            (rule_files),
        )


def _context_items(folder: Path) -> Iterator[TrustItem]:
    """The project's prompt templates: text the person chooses to send (docs/prompts.md)."""
    from picode.session.prompts.templates import template_folders

    for where, _ in template_folders(None, folder):
        names = sorted({path.stem for path in where.rglob("*.md")}) if where.is_dir() else []
        if names:
            shown = _some(["/" + name for name in names])
            yield TrustItem(
                _relative(where, folder),
                f"adds prompt templates you may send: {shown}",
            )


def _skill_items(folder: Path) -> Iterator[TrustItem]:
    """The project's skill folders, named (only listed: their front matter is read when the
    session opens, and a skill's scripts run through bash, approval and the sandbox)."""
    for skills in (
        project_dir(folder) / "skills",
        folder / ".agents" / "skills",
        folder / ".claude" / "skills",
    ):
        try:
            names = sorted(p.name for p in skills.iterdir() if (p / "SKILL.md").is_file())
        except OSError:
            continue
        if names:
            shown = _some(names)
            yield TrustItem(
                _relative(skills, folder),
                f"adds {len(names)} skill(s) the model may read and follow: {shown}",
            )


def _agent_items(folder: Path) -> Iterator[TrustItem]:
    """The project's agent definitions, named: instructions and a choice among the tools
    picode already has, never more (docs/subagents.md)."""
    for agents in (project_dir(folder) / "agents", folder / ".claude" / "agents"):
        try:
            names = sorted(p.stem for p in agents.glob("*.md") if p.is_file())
        except OSError:
            continue
        if names:
            shown = _some(names)
            yield TrustItem(
                _relative(agents, folder),
                f"adds {len(names)} agent(s) the model may hand tasks to: {shown}",
            )


def _link_items(scan: Scan, project: Path) -> Iterator[TrustItem]:
    """Each link leaving ``.picode/``, named: what it points to is used as if it were there."""
    seen: set[Path] = set()
    for link, target in scan.links_out:
        if link in seen:
            continue
        seen.add(link)
        yield TrustItem(
            scan.relative(link),
            f"is a link to {target}, outside {project.name}/: that is what picode would use",
        )


def _relative(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)


def _some(names: list[str], shown: int = 5) -> str:
    """The first ``shown`` names, and how many more there are."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more
