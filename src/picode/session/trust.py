"""Folder trust: a project's ``.picode/`` is a stranger's input until the person trusts it.

What a project can put there that redirects requests, runs code or relaxes safety (gated
config keys, extensions, ``SYSTEM.md``, stream rules) is only used in a folder the person
trusted, for exactly those files: the decision is remembered per folder together with a
fingerprint of them, and any change asks again. Context files (``AGENTS.md``,
``APPEND_SYSTEM.md``) and settings that only tighten safety need no trust.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from picode.session.paths import Paths, project_dir
from picode.session.private_files import write_private_json

__all__ = ["ProjectTrust", "TrustItem", "TrustStore", "assess_project"]

TRUST_FILE_NAME = "trusted-folders.json"
#: Files read for the fingerprint of an extensions folder; more than this is still gated.
_MAX_FILES = 2000
_MAX_HASHED_BYTES = 16 * 1024 * 1024

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
        lines = "\n".join(f"  - {item.source}: {item.description}" for item in self.items)
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
    from picode.session.config import project_config_gates

    folder = cwd.resolve()
    project = project_dir(folder)
    items: list[TrustItem] = []
    digest = hashlib.sha256()
    config_file = project / "config.toml"
    for gate in project_config_gates(paths, folder):
        items.append(TrustItem(_relative(config_file, folder), gate.description))
        digest.update(json.dumps(["config", list(gate.loc), gate.value], default=str).encode())
    for source, description, files in _gated_files(project):
        items.append(TrustItem(_relative(source, folder), description))
        for file in files:
            digest.update(json.dumps(["file", _relative(file, folder)]).encode())
            digest.update(_file_digest(file))
    trust = ProjectTrust(folder, items, digest.hexdigest(), override=override)
    if not items:
        return trust
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


def _gated_files(project: Path) -> Iterator[tuple[Path, str, list[Path]]]:
    extensions = project / "extensions"
    files = _files_below(extensions)
    if files:
        names = sorted({file.relative_to(extensions).parts[0] for file in files})
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        yield extensions, f"runs Python code at start-up (extensions: {shown})", files
    system = project / "SYSTEM.md"
    if system.is_file():
        yield system, "replaces picode's system prompt", [system]
    rules = project / "rules"
    rule_files = [file for file in _files_below(rules) if file.suffix == ".md"]
    if rule_files:
        yield (
            rules,
            f"adds {len(rule_files)} stream rule(s) that can stop and steer replies",
            (rule_files),
        )


def _files_below(folder: Path) -> list[Path]:
    found: list[Path] = []
    try:
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(name for name in dirs if name != "__pycache__")
            for name in sorted(names):
                found.append(Path(root) / name)
                if len(found) >= _MAX_FILES:
                    return found
    except OSError:
        pass
    return found


def _file_digest(file: Path) -> bytes:
    digest = hashlib.sha256()
    try:
        with file.open("rb") as handle:
            digest.update(handle.read(_MAX_HASHED_BYTES))
    except OSError as exc:
        digest.update(f"unreadable: {exc.errno}".encode())
    return digest.digest()


def _relative(path: Path, folder: Path) -> str:
    try:
        return str(path.relative_to(folder))
    except ValueError:
        return str(path)
