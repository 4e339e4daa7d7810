"""bash and secrets: the environment its composer gives it, and a full-output log on disk
that holds no key."""

from __future__ import annotations

import os
from pathlib import Path

from picode.session.safety.secrets import remember_secret
from picode.tools import coding_tools
from picode.tools.bash import BashTool
from tests.tools.helpers import run

GHP = "ghp_" + "Z1x2C3v4" * 4 + "bNmK"
KEY = "plain-local-key-5c1d77"


def test_commands_get_the_environment_they_are_given(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "ONLY_THIS": "1"}
    [tool] = coding_tools(tmp_path, names=["bash"], bash_env=env)
    result = run(tool, command="env")
    names = {line.partition("=")[0] for line in result.text_content.splitlines()}
    assert "ONLY_THIS" in names
    assert names <= {"PATH", "ONLY_THIS", "PWD", "SHLVL", "_", "OLDPWD"}  # the shell's own


def test_the_full_output_log_holds_no_key_or_token(tmp_path: Path) -> None:
    remember_secret(KEY)
    tool = BashTool(tmp_path, max_lines=5, max_bytes=300)
    command = (
        "for i in $(seq 1 40); do echo filler line $i; done; "
        f"echo 'key {KEY}'; echo 'token {GHP}'; "
        "printf -- '-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA\\n"
        "-----END RSA PRIVATE KEY-----\\n'; "
        "for i in $(seq 1 40); do echo more line $i; done; printf 'last %s' " + GHP
    )
    result = run(tool, command=command)
    assert result.details["truncated"] is True
    log = Path(result.details["full_output_path"])
    try:
        data = log.read_text(encoding="utf-8")
    finally:
        log.unlink()
    assert data.startswith("filler line 1\n")
    assert KEY not in data and GHP not in data and "MIIEow" not in data
    assert "key [redacted]\ntoken [redacted]\n[redacted]\nmore line 1\n" in data
    assert data.endswith("more line 40\nlast [redacted]")
