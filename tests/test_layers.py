"""The import contract (docs/architecture.md): layers import downward only.

``ai`` ← ``agent`` ← ``tools`` / ``session`` ← ``tui`` / ``modes``; siblings never import
each other; the composition root (``cli``, ``launch``) may import anything. Every import
counts, including those inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "picode"
RANK = {"ai": 0, "agent": 1, "tools": 2, "session": 2, "tui": 3, "modes": 3}
#: Known debt, each to be removed by moving the code, never added to (none left).
ALLOWED: set[tuple[str, str]] = set()


def imports_of(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"{path}: use absolute imports (picode.…)")
    return found


def violations() -> set[tuple[str, str]]:
    bad: set[tuple[str, str]] = set()
    for path in SOURCE.rglob("*.py"):
        parts = path.relative_to(SOURCE).parts
        layer = parts[0] if len(parts) > 1 else None
        if layer not in RANK:
            continue  # the composition root
        for name in imports_of(path):
            pieces = name.split(".")
            if pieces[0] != "picode" or len(pieces) < 2 or pieces[1] == layer:
                continue
            target = pieces[1]
            if target not in RANK or RANK[target] >= RANK[layer]:
                bad.add(("/".join(parts), name))
    return bad


def test_layers_import_downward_only() -> None:
    unexpected = sorted(violations() - ALLOWED)
    assert unexpected == [], "upward or sideways imports:\n" + "\n".join(
        f"  {where} imports {name}" for where, name in unexpected
    )


def test_known_debt_is_still_debt() -> None:
    # When the code moves, the exception must go too, or it would hide a new violation.
    assert violations() >= ALLOWED


#: The session's parts; front ends reach them only through the session's own methods.
SESSION_INTERNALS = frozenset({"agent", "recorder", "extensions", "recovery", "approval"})


def reach_ins(root: Path = SOURCE) -> list[str]:
    """``x.agent.y`` and the like in the front ends (tui/, modes/)."""
    found: list[str] = []
    for layer in ("tui", "modes"):
        for path in (root / layer).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                inner = node.value if isinstance(node, ast.Attribute) else None
                if isinstance(inner, ast.Attribute) and inner.attr in SESSION_INTERNALS:
                    where = f"{path.relative_to(root)}:{node.lineno}"
                    found.append(f"{where}: .{inner.attr}.{node.attr}")
    return found


def test_front_ends_use_the_session_api_only() -> None:
    found = reach_ins()
    assert found == [], "front ends reaching into the session:\n" + "\n".join(found)


def test_the_reach_in_check_itself(tmp_path: Path) -> None:
    (tmp_path / "tui").mkdir()
    (tmp_path / "modes").mkdir()
    (tmp_path / "tui" / "a.py").write_text("session.recorder.record_message(m)\n")
    (tmp_path / "modes" / "b.py").write_text("session.messages\nx = app.session.model\n")
    assert reach_ins(tmp_path) == ["tui/a.py:1: .recorder.record_message"]


@pytest.mark.parametrize(
    ("layer", "source", "bad"),
    [
        ("ai", "from picode.agent.tool import ToolError\n", True),
        ("agent", "def f():\n    import picode.session.config.settings\n", True),
        ("tools", "from picode.session.paths import Paths\n", True),
        ("session", "from picode.tui.app import PicodeApp\n", True),
        ("tui", "from picode.modes.rpc.server import run_rpc\n", True),
        ("tui", "from picode.launch import quick_view\n", True),
        ("tui", "from picode.session.safety.trust import ProjectTrust\n", False),
        ("tools", "from picode.agent.tool import BaseTool\n", False),
    ],
)
def test_the_checker_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layer: str, source: str, bad: bool
) -> None:
    folder = tmp_path / "picode" / layer
    folder.mkdir(parents=True)
    (folder / "probe.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(f"{__name__}.SOURCE", tmp_path / "picode")
    assert bool(violations()) is bad


def app_imports(root: Path = SOURCE) -> list[str]:
    """Controllers that import the app (they take the Protocols of tui/controllers/host.py)."""
    return sorted(
        str(path.relative_to(root))
        for path in (root / "tui" / "controllers").rglob("*.py")
        if "picode.tui.app" in imports_of(path)
    )


def test_controllers_depend_on_protocols_not_on_the_app() -> None:
    assert app_imports() == []


def test_the_app_import_check_itself(tmp_path: Path) -> None:
    (tmp_path / "tui" / "controllers").mkdir(parents=True)
    (tmp_path / "tui" / "controllers" / "a.py").write_text(
        "if TYPE_CHECKING:\n    from picode.tui.app import PicodeApp\n"
    )
    assert app_imports(tmp_path) == ["tui/controllers/a.py"]


#: The session's packages: front ends import each one's face (its ``__init__``), never its
#: rooms. The session's own top-level modules are its API.
SESSION_PACKAGES = frozenset(
    {
        "store",
        "config",
        "recovery",
        "extensions",
        "safety",
        "models",
        "mcp",
        "checkpoints",
        "prompts",
        "skills",
    }
)


def rooms_entered(root: Path = SOURCE) -> list[str]:
    found: list[str] = []
    for layer in ("tui", "modes"):
        for path in (root / layer).rglob("*.py"):
            for name in imports_of(path):
                pieces = name.split(".")
                entered = len(pieces) > 3 and pieces[2] in SESSION_PACKAGES
                if pieces[:2] == ["picode", "session"] and entered:
                    found.append(f"{path.relative_to(root)} imports {name}")
    return found


def test_front_ends_import_the_session_packages_through_their_faces() -> None:
    assert rooms_entered() == []


def test_the_faces_name_only_what_their_rooms_hold() -> None:
    import importlib

    for package in sorted(SESSION_PACKAGES):
        face = importlib.import_module(f"picode.session.{package}")
        for name in face.__all__:
            assert getattr(face, name) is not None, f"picode.session.{package}.{name}"


def test_the_face_check_sees_a_room_entered(tmp_path: Path) -> None:
    tui = tmp_path / "tui"
    tui.mkdir()
    (tmp_path / "modes").mkdir()
    (tui / "x.py").write_text("from picode.session.store.index import SessionSummary\n")
    (tui / "y.py").write_text("from picode.session.store import SessionSummary\n")
    assert rooms_entered(tmp_path) == ["tui/x.py imports picode.session.store.index"]


DOCS = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


def documented_session_api() -> set[str]:
    """The backticked names of the "The session API" section of docs/architecture.md."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## The session API", 1)[1].split("\n## ", 1)[0]
    bullets = "".join(line for line in section.splitlines(True) if line.startswith(("-", " ")))
    return {name for name in re.findall(r"`([a-z_]+)`", bullets) if "/" not in name}


def test_the_session_api_is_the_documented_one() -> None:
    # A new public member is a decision: it goes into docs/architecture.md with it.
    from picode.session.agent_session import AgentSession

    public = {name for name in dir(AgentSession) if not name.startswith("_")}
    assert public == documented_session_api()


def private_session_uses(root: Path = SOURCE) -> list[str]:
    """``session._x`` (or ``app.session._x``) in the front ends."""
    found: list[str] = []
    for layer in ("tui", "modes"):
        for path in (root / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
                    continue
                owner = node.value
                named = isinstance(owner, ast.Name) and owner.id == "session"
                if named or (isinstance(owner, ast.Attribute) and owner.attr == "session"):
                    found.append(f"{path.relative_to(root)}:{node.lineno}: .{node.attr}")
    return found


def test_front_ends_use_no_private_session_member() -> None:
    assert private_session_uses() == []


def test_the_private_use_check_itself(tmp_path: Path) -> None:
    (tmp_path / "tui").mkdir()
    (tmp_path / "modes").mkdir()
    (tmp_path / "tui" / "a.py").write_text("self.app.session._agent.abort()\nsession.model\n")
    (tmp_path / "modes" / "b.py").write_text("session._usage\nother._x\n")
    assert sorted(private_session_uses(tmp_path)) == [
        "modes/b.py:1: ._usage",
        "tui/a.py:1: ._agent",
    ]
