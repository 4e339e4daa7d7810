"""The footer: where you are and what it costs (cwd, branch, tokens, cost, context, model)."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual.content import Content
from textual.widget import Widget

from picode.ai.thinking import thinking_request
from picode.ai.untrusted import one_line

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession
    from picode.tui.config import TuiConfig


@dataclass(slots=True, frozen=True)
class FooterInfo:
    cwd: str
    branch: str | None = None
    session_name: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cost: float = 0.0
    context_tokens: int = 0
    context_window: int = 0
    model: str = ""
    thinking: str = "off"
    reasoning: bool = False
    #: Set once a write to the session file failed: shown until another session opens.
    save_error: str | None = None
    #: The session's mode (``AgentSession.mode``); "never" asks nothing and says nothing.
    mode: str = "never"


#: How the footer names a mode; the default ("never") is not shown.
MODE_LABELS = {"plan": "⏸ plan mode", "edits": "ask edits", "all": "ask all"}


def footer_info(
    cwd: str, branch: str | None, session: AgentSession | None, config: TuiConfig
) -> FooterInfo:
    """What the footer shows: the configured model until the session is open."""
    if session is None:
        model = config.model
        return FooterInfo(
            cwd=cwd,
            branch=branch,
            context_window=model.context_window,
            model=model.id,
            thinking=thinking_request(model, config.thinking).label,
            reasoning=model.reasoning,
        )
    usage = session.usage
    model = session.model
    return FooterInfo(
        cwd=cwd,
        branch=branch,
        session_name=session.session_name,
        input_tokens=usage.input,
        output_tokens=usage.output,
        cache_read=usage.cache_read,
        cost=usage.cost,
        context_tokens=session.context_tokens,
        context_window=session.context_window,
        model=model.id,
        thinking=session.thinking_label,
        reasoning=model.reasoning,
        save_error=session.save_error,
        mode=session.mode,
    )


def format_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def format_cost(cost: float) -> str:
    return f"${cost:.3f}" if cost < 10 else f"${cost:.2f}"


def display_path(path: Path, home: Path | None = None) -> str:
    home = home if home is not None else Path.home()
    try:
        relative = path.relative_to(home)
    except ValueError:
        return str(path)
    return "~" if str(relative) == "." else f"~{os.sep}{relative}"


def git_branch(cwd: Path) -> str | None:
    """The current branch from ``.git/HEAD`` (worktrees too), without spawning git."""
    for folder in (cwd, *cwd.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_file():
                pointer = dot_git.read_text(encoding="utf-8").strip()
                if not pointer.startswith("gitdir:"):
                    return None
                git_dir = (folder / pointer.removeprefix("gitdir:").strip()).resolve()
            elif dot_git.is_dir():
                git_dir = dot_git
            else:
                continue
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if head.startswith("ref:"):
            return head.removeprefix("ref:").strip().removeprefix("refs/heads/")
        return head[:7] or None
    return None


SAVE_WARNING = "⚠ session NOT SAVED (disk?) · "
#: What a narrow footer leaves out first: why the thinking level differs from the one set
#: ("(the lowest this model allows)"), the cache count, then cost, the context window's
#: size, the token counts, the session name, the branch, the context share, the thinking
#: level. The folder and the model stay (the folder shortened from its start with "…").
LEAVE_OUT_ORDER = (
    "note",
    "cache",
    "cost",
    "window",
    "tokens",
    "name",
    "branch",
    "context",
    "thinking",
)
#: The folder keeps at least this many cells before other parts make way for it.
FOLDER_MIN = 16
GAP = 2


class InfoFooter(Widget):
    DEFAULT_CSS = """
    InfoFooter {
        height: 1;
        padding: 0 1;
        color: $muted;
        background: $background;
    }
    """

    def __init__(self, info: FooterInfo) -> None:
        super().__init__(id="footer")
        self.info = info

    def update_info(self, **changes: object) -> None:
        info = replace(self.info, **changes)  # type: ignore[arg-type]
        if info != self.info:
            self.info = info
            self.refresh()

    def right_text(self, left_out: frozenset[str] = frozenset()) -> Content:
        """Usage, model and thinking level, without the parts named in ``left_out``."""
        info = self.info
        parts: list[Content | str] = []
        if (mode := MODE_LABELS.get(info.mode)) is not None:
            parts.append(
                Content.styled(mode, "bold $warning" if info.mode == "plan" else "$accent")
            )
        if "tokens" not in left_out:
            parts.append(
                f"↑{format_tokens(info.input_tokens)} ↓{format_tokens(info.output_tokens)}"
            )
        if info.cache_read and "cache" not in left_out:
            parts.append(f"R{format_tokens(info.cache_read)}")
        if "cost" not in left_out:
            parts.append(format_cost(info.cost))
        if info.context_window and "context" not in left_out:
            percent = 100 * info.context_tokens / info.context_window
            style = "$warning" if percent >= 80 else ""
            window = "" if "window" in left_out else f" of {format_tokens(info.context_window)}"
            parts.append(Content.assemble((f"{percent:.0f}%", style), window))
        model = Content.styled(info.model, "$foreground")
        if info.reasoning and "thinking" not in left_out:
            level, note = _level_and_note(info.thinking)
            shown = level if "note" in left_out or not note else f"{level} {note}"
            thinking = Content.styled(f"thinking {shown}", "$secondary")
            model = Content.assemble(model, " • ", thinking)
        parts.append(model)
        return Content("  ").join(
            Content(part) if isinstance(part, str) else part for part in parts
        )

    def left_suffix(self, left_out: frozenset[str] = frozenset()) -> str:
        """What follows the folder: the git branch and the session name."""
        info = self.info
        text = ""
        # The branch is read from .git/HEAD and the name from the session file: untrusted.
        if info.branch and "branch" not in left_out:
            text += f" ({one_line(info.branch)})"
        if info.session_name and "name" not in left_out:
            text += f" • {one_line(info.session_name)}"
        return text

    def render(self) -> Content:
        width = self.content_size.width
        warning = Content.styled(SAVE_WARNING, "bold $error") if self.info.save_error else None
        fixed = warning.cell_length if warning is not None else 0
        # Parts go one by one, least useful first, until the line fits with the folder at
        # least FOLDER_MIN cells wide; the folder itself is shortened, never dropped.
        left_out: frozenset[str] = frozenset()
        folder = one_line(self.info.cwd)
        for part in ("", *LEAVE_OUT_ORDER):
            left_out = left_out | {part} if part else left_out
            right, suffix = self.right_text(left_out), self.left_suffix(left_out)
            wanted = min(cell_len(folder), FOLDER_MIN) + cell_len(suffix)
            if fixed + wanted + GAP + right.cell_length <= width:
                break
        room = width - fixed - GAP - right.cell_length - cell_len(suffix)
        if room < 2:
            # Too narrow even for "…" and a letter: the save warning still shows.
            return Content.assemble(warning, " ", right) if warning is not None else right
        if cell_len(folder) > room:
            # Keep the end of the path: the folder you are in matters most.
            folder = "…" + _right_cells(folder, room - 1)
        line = Content.assemble(warning or "", folder, suffix)
        gap = " " * max(GAP, width - line.cell_length - right.cell_length)
        return Content.assemble(line, gap, right)


def _level_and_note(label: str) -> tuple[str, str]:
    """``"low (the lowest this model allows)"`` → ``("low", "(the lowest …)")``."""
    level, space, note = label.partition(" (")
    return (level, f"({note}") if space and note.endswith(")") else (label, "")


def _right_cells(text: str, cells: int) -> str:
    """The longest end of ``text`` that fits in ``cells`` terminal cells."""
    taken = 0
    for index in range(len(text) - 1, -1, -1):
        taken += cell_len(text[index])
        if taken > cells:
            return text[index + 1 :]
    return text
