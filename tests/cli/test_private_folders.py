"""picode's own folders (config, data, sessions, cache) are 0700: created so, and
tightened when found looser."""

from __future__ import annotations

import os
import stat

import pytest

from tests.cli.apis import ChatDriver
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


def test_data_folders_are_private(wire: WireServer, picode: PicodeEnv) -> None:
    api = ChatDriver()
    picode.add_config(api.config(wire))
    wire.enqueue(api.text("one"), api.text("two"))
    folders = [picode.home / name for name in ("config", "data", "data/sessions", "cache")]

    first = picode.run("-p", "hi", "--model", api.model)
    assert first.returncode == 0, first.stderr
    assert {str(f): stat.S_IMODE(f.stat().st_mode) for f in folders} == {
        str(f): 0o700 for f in folders
    }

    for folder in folders:
        folder.chmod(0o755)
    second = picode.run("-p", "hi", "--model", api.model)
    assert second.returncode == 0, second.stderr
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o700 for f in folders)
