"""``/permissions [allow COMMAND|clear|forget]``: what runs without asking, adding to it and
taking it back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.ai.untrusted import one_line
from picode.tui.controllers.command_error import CommandError

if TYPE_CHECKING:
    from picode.session.agent_session import AgentSession

USAGE = (
    "/permissions: use /permissions, /permissions allow COMMAND, /permissions clear or "
    "/permissions forget."
)
HINT = (
    "/permissions allow npm test saves commands starting so for this folder; clear asks "
    "again about this conversation's, forget about this folder's; shift+tab changes the mode."
)

Lines = list[str | tuple[str, str]]


def permissions_lines(session: AgentSession) -> Lines:
    """The mode, then each source of "runs unasked", then the commands' network."""
    from picode.tui.controllers.mode_keys import MODE_MEANINGS

    saved, problem = session.approvals_saved
    if problem is not None:
        saved = [f"none count: {problem}"]
    state = session.sandbox_state
    network = "allowed" if state is not None and state[1] else "cut off"
    listed = [
        *(("Always", item) for item in session.approvals_granted or ["nothing yet"]),
        *(("This folder", item) for item in saved or ["nothing saved (p at a question)"]),
        *session.approvals_configured,
    ]
    lines: Lines = [("Mode", MODE_MEANINGS.get(session.mode, session.mode))]
    shown = None
    for label, item in listed:
        # Commands are the model's words, and a damaged file's message may quote the file.
        lines.append(("" if label == shown else label, one_line(item, 200)))
        shown = label
    turns, dollars = session.run_limits
    alone = [
        *([f"{turns} model requests"] if turns else []),
        *([f"${dollars:.2f}"] if dollars else []),
    ]
    limits = f"stops after {' or '.join(alone)} in a row without a message" if alone else "none"
    cost = session.model.cost
    if dollars and not (cost.input or cost.output):
        # A model without prices (a local one, a provider of your own) counts $0 a reply.
        limits += f"; {one_line(session.model.ref, 80)} has no prices, so $ never adds up"
    lines += [
        ("Network", f"{network} for the model's commands (/sandbox)"),
        ("Limits", f"{limits} ([limits] in config.toml)"),
        HINT,
    ]
    return lines


def change(session: AgentSession, argument: str) -> str:
    """``allow WORDS``, ``clear`` or ``forget``: what changed, as a sentence."""
    from picode.session.safety import SavedApprovalsError

    word, _, rest = argument.strip().partition(" ")
    word = word.lower()
    if word == "allow":
        try:
            described = session.save_approval(rest)
        except ValueError as exc:
            raise CommandError(f"/permissions allow: {one_line(str(exc), 300)}") from exc
        except SavedApprovalsError as exc:
            raise CommandError(f"/permissions allow: not saved: {one_line(str(exc), 300)}") from exc
        return f"Saved for this folder: {one_line(described, 200)} run without asking."
    if word == "clear":
        session.revoke_approvals()
        return 'Every "always" of this conversation is taken back: picode asks again.'
    if word != "forget":
        raise CommandError(USAGE)
    try:
        count = session.forget_saved_approvals()
    except SavedApprovalsError as exc:
        raise CommandError(f"/permissions forget: {one_line(str(exc), 300)}") from exc
    if not count:
        return "Nothing was saved for this folder."
    noun = "approval" if count == 1 else "approvals"
    return f"{count} saved {noun} of this folder taken back: picode asks again."
