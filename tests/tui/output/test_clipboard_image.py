"""ctrl+v with an image on the system clipboard: read with the platform's tool (fakes on
PATH here), kept privately, attached as an ``@`` mention (``tui/clipboard_image.py``)."""

from __future__ import annotations

import stat
from pathlib import Path

from picode.ai.providers.faux import text_turn
from picode.ai.types import ImageContent
from picode.tui.clipboard_image import ClipboardImage, keep_pasted_image, read_clipboard_image
from tests.tui.conftest import SIZE, TuiHarness, opened, run, wait_until
from tests.tui.output.test_clipboard import fake_tool, only

PNG_HEAD = "\\211PNG\\r\\n\\032\\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
#: Lists image/png among the types on offer and prints a PNG when asked for it; fails for
#: any other type (as xclip and wl-paste do).
XCLIP = (
    "case \"$*\" in *TARGETS*|*--list-types*) printf 'TARGETS\\nimage/png\\n';;"
    f" *image/png*) printf '{PNG_HEAD}\\0\\0\\0\\0\\0\\0\\0\\0';; *) exit 1;; esac\n"
)


def test_xclip_wl_paste_and_osascript_are_read(tmp_path: Path) -> None:
    x11 = tmp_path / "x11"
    fake_tool(x11, "xclip", XCLIP)
    assert read_clipboard_image("linux", only(x11)) == ClipboardImage(PNG, "image/png")

    wayland = tmp_path / "wayland"
    fake_tool(wayland, "wl-paste", XCLIP)
    env = {**only(wayland), "WAYLAND_DISPLAY": "wayland-0"}
    assert read_clipboard_image("linux", env) == ClipboardImage(PNG, "image/png")

    mac = tmp_path / "mac"
    fake_tool(mac, "osascript", f"printf '\\302\\253data PNGf{PNG.hex().upper()}\\302\\273\\n'\n")
    assert read_clipboard_image("darwin", only(mac)) == ClipboardImage(PNG, "image/png")


def test_no_image_on_the_clipboard_or_no_tool_is_none(tmp_path: Path) -> None:
    text_only = tmp_path / "text"
    fake_tool(text_only, "xclip", "printf 'just some text'\n")
    assert read_clipboard_image("linux", only(text_only)) is None
    failing = tmp_path / "failing"
    fake_tool(failing, "xclip", "echo 'Error: target image/png not available' >&2; exit 1\n")
    assert read_clipboard_image("linux", only(failing)) is None
    assert read_clipboard_image("linux", only(tmp_path / "empty")) is None


def test_a_kept_image_is_private_and_never_overwritten(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "pasted"
    first = keep_pasted_image(ClipboardImage(PNG, "image/png"), folder)
    second = keep_pasted_image(ClipboardImage(PNG, "image/png"), folder)
    assert first != second and first.suffix == ".png"
    assert first.read_bytes() == PNG
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_ctrl_v_attaches_the_clipboards_image_else_pastes_text(
    tui: TuiHarness, tmp_path: Path
) -> None:
    tools = tmp_path / "tools"
    fake_tool(tools, "xclip", XCLIP)
    faux = tui.faux(text_turn("A screenshot."))
    app = tui.app(faux)
    app.clipboard_env = only(tools)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            session = (await opened(pilot)).session
            assert session is not None
            app.editor.insert("what is this ")
            await pilot.press("ctrl+v")
            await wait_until(pilot, lambda: "@" in app.editor.text, what="the mention")
            [kept] = sorted(tui.paths.pasted_dir.iterdir())
            assert app.editor.text == f"what is this @{kept} "
            await pilot.press("enter")
            await wait_until(pilot, lambda: len(session.messages) == 2, what="the reply")
            sent = session.messages[0].content
            assert isinstance(sent, list)
            assert any(isinstance(block, ImageContent) for block in sent)
            # No image now: ctrl+v is the editor's own paste again.
            (tools / "xclip").unlink()
            app.copy_to_clipboard("copied here")
            await pilot.press("ctrl+v")
            await wait_until(pilot, lambda: app.editor.text == "copied here", what="the text")

    run(scenario())
