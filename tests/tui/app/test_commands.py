"""Slash commands through the real app: typed in the editor, run on a real AgentSession."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from picode.ai.providers.faux import text_turn
from picode.session.config.settings import CompactionSettings, Settings
from picode.tui.widgets.info import InfoView
from picode.tui.widgets.notice import WelcomeView
from tests.tui.conftest import (
    SIZE,
    TuiHarness,
    has_notice,
    hold_open,
    notices,
    opened,
    run,
    send,
    wait_until,
)


def _info(app: object, title: str) -> InfoView | None:
    views = [v for v in app.query(InfoView) if v.title_text == title]  # type: ignore[attr-defined]
    return views[-1] if views else None


async def _turn(pilot: object, text: str) -> None:
    app = pilot.app  # type: ignore[attr-defined]
    before = len(app.session.messages)
    await send(pilot, text)
    await wait_until(
        pilot,
        lambda: not app.session.is_running and len(app.session.messages) > before,
        what=f"the reply to {text!r}",
    )


def test_session_shows_file_id_counts_tokens_and_cost(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("Hello there.", usage=(1200, 30))))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "hi")
            await send(pilot, "/session")
            await wait_until(pilot, lambda: _info(app, "Session") is not None)
            text = _info(app, "Session").plain  # type: ignore[union-attr]
            session = app.session
            assert session is not None and session.session_file_path is not None
            assert str(session.session_file_path) in text
            assert f"ID        {session.session_id}" in text
            assert "2 in all · in context: 1 user, 1 assistant, 0 tool results" in text
            assert "in 1,200 · out 30" in text
            assert "$0.004" in text  # 1,200 × $3/Mtok + 30 × $15/Mtok
            assert app.editor.text == ""

    run(scenario())


def test_context_shows_what_fills_the_window_part_by_part(tui: TuiHarness) -> None:
    (tui.cwd / "AGENTS.md").write_text("Use pytest.\n", encoding="utf-8")
    app = tui.app(tui.faux(text_turn("Hello there.", usage=(1200, 30))))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "hi")
            await send(pilot, "/context")
            await wait_until(pilot, lambda: _info(app, "Context") is not None)
            text = _info(app, "Context").plain  # type: ignore[union-attr]
            window = app.session.context_window
            assert f"a window of {window:,} tokens" in text
            assert re.search(rf"In use +~{app.session.context_tokens:,} ", text)
            for part in ("picode's instructions", "AGENTS.md ", "tool definitions"):
                assert part in text
            assert "your messages" in text and "replies" in text and "free" in text
            assert "compacts above" in text

    run(scenario())


def test_name_sets_the_session_name_and_without_one_explains_and_keeps_the_text(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/name ")
            await wait_until(pilot, lambda: has_notice(app, "Usage: /name <name>"))
            assert app.editor.text == ""  # not left there for the next command
            await pilot.press("up")  # the history has it, to fix
            assert app.editor.text.strip() == "/name".strip()
            await pilot.press("ctrl+c")
            await send(pilot, "/name Fix the parser")
            await wait_until(pilot, lambda: app.session.session_name == "Fix the parser")
            await wait_until(pilot, lambda: "Fix the parser" in app.info_footer.render().plain)

    run(scenario())


def test_copy_puts_the_last_reply_on_the_clipboard_and_says_how(
    tui: TuiHarness, tmp_path: Path
) -> None:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    copied = tmp_path / "clipboard.txt"
    xclip = fake_bin / "xclip"
    xclip.write_text(f"#!/bin/sh\ncat > '{copied}'\n", encoding="utf-8")
    xclip.chmod(xclip.stat().st_mode | stat.S_IEXEC)
    app = tui.app(tui.faux(text_turn("The answer is **42**.")))
    app.clipboard_env = {"PATH": f"{fake_bin}{os.pathsep}/usr/bin{os.pathsep}/bin"}

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/copy")
            await wait_until(pilot, lambda: has_notice(app, "Nothing to copy yet"))
            await pilot.press("ctrl+c")
            await _turn(pilot, "question")
            await send(pilot, "/copy")
            await wait_until(pilot, lambda: has_notice(app, "Copied to the clipboard via xclip"))
            assert copied.read_text(encoding="utf-8") == "The answer is **42**."
            assert app.clipboard == "The answer is **42**."  # OSC 52 went out too

    run(scenario())


def test_export_writes_html_and_markdown_and_a_bad_folder_is_reported(tui: TuiHarness) -> None:
    app = tui.app(tui.faux(text_turn("Exported reply.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "export me")
            await send(pilot, "/export out/chat")
            await wait_until(pilot, lambda: has_notice(app, "folder does not exist"))
            assert app.editor.text == ""  # not left there for the next command
            await pilot.press("up")  # the history has it, to fix
            assert app.editor.text.strip() == "/export out/chat".strip()
            await pilot.press("ctrl+c")
            (tui.cwd / "out").mkdir()
            await send(pilot, "/export out/chat")
            await wait_until(pilot, lambda: _info(app, "Exported") is not None)
            html, markdown = tui.cwd / "out" / "chat.html", tui.cwd / "out" / "chat.md"
            assert "Exported reply." in html.read_text(encoding="utf-8")
            assert "export me" in markdown.read_text(encoding="utf-8")
            shown = _info(app, "Exported").plain  # type: ignore[union-attr]
            assert str(html) in shown and str(markdown) in shown

    run(scenario())


def test_export_without_a_folder_writes_to_picodes_own_folder_not_the_project(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(text_turn("Kept private.")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "export me")
            await send(pilot, "/export")
            await wait_until(pilot, lambda: _info(app, "Exported") is not None)

    run(scenario())
    folder = tui.paths.exports_dir
    assert sorted(p.suffix for p in folder.iterdir()) == [".html", ".md"]
    assert oct(folder.stat().st_mode & 0o777) == oct(0o700)
    assert not list(tui.cwd.glob("picode-session-*"))  # nothing dropped in the project


def test_hotkeys_lists_every_binding_with_the_keymap_applied(tui: TuiHarness) -> None:
    keymap = tui.paths.config_dir / "keymap.toml"
    keymap.parent.mkdir(parents=True, exist_ok=True)
    keymap.write_text('model_picker = "f2"\nnot_a_binding = "f3"\n', encoding="utf-8")
    app = tui.app(tui.faux(), keymap_file=keymap)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            warnings = [n.message for n in app._notifications]
            assert any("not_a_binding" in str(w) for w in warnings)
            await send(pilot, "/hotkeys")
            await wait_until(pilot, lambda: _info(app, "Keys") is not None)
            text = _info(app, "Keys").plain  # type: ignore[union-attr]
            for binding_id in ("interrupt", "clear_or_quit", "cycle_model", "external_editor"):
                assert binding_id in text
            model_line = next(line for line in text.splitlines() if "model_picker" in line)
            assert "f2" in model_line and "ctrl+l" not in model_line
            await pilot.press("f2")
            await wait_until(pilot, lambda: type(app.screen).__name__ == "ModelPicker")

    run(scenario())


def test_unknown_command_names_close_ones_and_keeps_the_text(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/modle gpt-5")
            await wait_until(pilot, lambda: has_notice(app, "Unknown command /modle"))
            assert has_notice(app, "Did you mean /model?")
            assert app.editor.text == ""  # not left there for the next command
            await pilot.press("up")  # the history has it, to fix
            assert app.editor.text.strip() == "/modle gpt-5".strip()
            assert app.session.messages == []  # nothing was sent to the model

    run(scenario())


def test_extension_commands_complete_with_their_description_and_run(tui: TuiHarness) -> None:
    folder = tui.paths.config_dir / "extensions"
    folder.mkdir(parents=True)
    (folder / "greeter.py").write_text(
        "def register(api):\n"
        "    def greet(argument):\n"
        "        api.notify(f'hello {argument or \"nobody\"}')\n"
        "    api.register_command('greet', 'Say hello to someone', greet)\n"
        "    api.register_command('model', 'Shadows a built-in', greet)\n",
        encoding="utf-8",
    )
    app = tui.app(tui.faux(), options={"load_extensions": True})

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await pilot.press("/", "g", "r")
            popup = app.completion_popup
            await wait_until(pilot, lambda: popup.is_open)
            assert [(i.label, i.detail) for i in popup.items] == [
                ("/greet", "Say hello to someone")
            ]
            await pilot.press("tab")
            assert app.editor.text == "/greet "
            await pilot.press(*"Ada", "enter")
            await wait_until(pilot, lambda: has_notice(app, "hello Ada"))
            clash = [n for n in notices(app) if "the command /model already exists" in n]
            assert len(clash) == 1  # said once, however often the list is shown

    run(scenario())


def test_compact_summarises_by_hand_with_instructions(tui: TuiHarness) -> None:
    settings = Settings(compaction=CompactionSettings(keep_recent_tokens=1))
    faux = tui.faux(
        text_turn("first answer " * 20),
        text_turn("second answer " * 20),
        text_turn("## Goal\nSummary of the work."),
    )
    app = tui.app(faux, settings=settings)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "one")
            await _turn(pilot, "two")
            await send(pilot, "/compact keep the file names")
            await wait_until(pilot, lambda: has_notice(app, "Context compacted"), timeout=10)
            assert "keep the file names" in faux.last_request.messages[0].text  # type: ignore[union-attr]
            assert "Summary of the work." in app.session.messages[0].text  # type: ignore[union-attr]

    run(scenario())


def test_compact_with_nothing_to_compact_says_why_and_offers_a_smaller_tail(
    tui: TuiHarness,
) -> None:
    import re

    faux = tui.faux(
        text_turn("first answer " * 600),  # ~2,000 tokens a turn: all within the 20k tail
        text_turn("second answer " * 600),
        text_turn("## Goal\nSummary of the first turn."),
    )
    app = tui.app(faux)  # the default keep_recent_tokens

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "one")
            await _turn(pilot, "two")
            await send(pilot, "/compact")
            await wait_until(pilot, lambda: has_notice(app, "Nothing to compact"))
            (why,) = [n for n in notices(app) if "Nothing to compact" in n]
            assert "the last ~20,000 tokens are kept verbatim" in why
            total = re.search(r"the conversation is ~([\d,]+) tokens", why)
            assert total is not None and 3_000 < int(total.group(1).replace(",", "")) < 20_000
            offer = re.search(r"(/compact --keep \d+)", why)
            assert offer is not None
            await send(pilot, "/compact --keep nonsense")
            await wait_until(pilot, lambda: has_notice(app, "--keep takes a number of tokens"))
            assert app.editor.text == ""  # not left there for the next command
            await pilot.press("up")  # the history has it, to fix
            assert app.editor.text.strip() == "/compact --keep nonsense".strip()
            app.editor.reset()
            await send(pilot, offer.group(1))
            await wait_until(pilot, lambda: has_notice(app, "Context compacted"), timeout=10)
            # The context's size before and after, not a count called "summarised".
            (done,) = [n for n in notices(app) if "Context compacted" in n]
            sizes = re.fullmatch(r"Context compacted from ~([\d,]+) tokens to ~([\d,]+)", done)
            assert sizes is not None, done
            before, after = (int(size.replace(",", "")) for size in sizes.groups())
            assert before > after == app.session.context_tokens
            assert "Summary of the first turn." in app.session.messages[0].text  # type: ignore[union-attr]
            assert app.session.messages[-1].text.startswith("second answer")

    run(scenario())


def test_new_clears_the_transcript_shows_the_welcome_and_starts_another_session(
    tui: TuiHarness,
) -> None:
    app = tui.app(tui.faux(text_turn("old reply")))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await _turn(pilot, "in the first session")
            first_id = app.session.session_id
            await send(pilot, "/new")
            await wait_until(pilot, lambda: app.session.session_id != first_id)
            await wait_until(pilot, lambda: len(app.transcript.entries) == 1)
            assert isinstance(app.transcript.entries[0], WelcomeView)
            assert app.session.messages == []

    run(scenario())


def test_quit_closes_the_app(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await opened(pilot)
            await send(pilot, "/quit")
            await wait_until(pilot, lambda: not app.is_running, what="app exit")
        assert app.return_code == 0

    run(scenario())


def test_commands_typed_before_the_session_opens_run_once_it_is_open(tui: TuiHarness) -> None:
    app = tui.app(tui.faux())
    gate = hold_open(app)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await send(pilot, "/session")
            assert app.editor.text == ""
            await wait_until(pilot, lambda: "command will run" in (app.status.notice or ("",))[0])
            await send(pilot, "/hotkeys")  # needs no session: runs at once
            await wait_until(pilot, lambda: _info(app, "Keys") is not None)
            assert _info(app, "Session") is None
            gate.set()
            await opened(pilot)
            await wait_until(pilot, lambda: _info(app, "Session") is not None)

    run(scenario())
    assert not [n for n in notices(app) if "failed" in n]
