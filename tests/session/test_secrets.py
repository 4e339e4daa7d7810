"""Secrets kept from the model and from files: the commands' environment, what tools return
to the model, and what a session file keeps of a reply."""

from __future__ import annotations

import json
from pathlib import Path

from picode.ai.models import builtin_registry
from picode.ai.providers.faux import text_turn
from picode.session.config import load_config
from picode.session.paths import Paths
from picode.session.secrets import (
    command_environment,
    looks_secret,
    model_command_environment,
    unset_script,
)

from .conftest import SessionHarness, run

GHP = "ghp_" + "Q7w8E9r0" * 4 + "tYuI"
LOCAL_KEY = "local-gateway-key-8c3e71"


def _file_text(path: Path | None) -> str:
    assert path is not None
    return path.read_text(encoding="utf-8")


def test_a_github_token_in_a_reply_is_not_stored_in_the_clear(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn(f"Use {GHP} to push."))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("which token?")
        saved = _file_text(session.session_file_path)
        assert GHP not in saved
        assert "Use [redacted] to push." in saved
        for line in saved.splitlines():
            json.loads(line)
        await session.close()

    run(scenario())


# --- the environment of the model's commands --------------------------------------------


def test_secret_looking_names_are_recognised() -> None:
    secret = [
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "github_token",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASSWORD",
        "MYSQL_PWD",
        "OPENAI_APIKEY",
        "GH_PAT",
        "NPM_CONFIG__AUTH",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SLACK_BOT_TOKEN",
        "SESSION_COOKIE",
        "GPG_PASSPHRASE",
    ]
    ordinary = [
        "PATH",
        "HOME",
        "PWD",
        "OLDPWD",
        "LANG",
        "TERM",
        "SSH_AUTH_SOCK",
        "AWS_REGION",
        "AWS_PROFILE",
        "TOKENIZERS_PARALLELISM",
        "GIT_AUTHOR_NAME",
        "KEYMAP",
        "XDG_SESSION_TYPE",
    ]
    assert [name for name in secret if not looks_secret(name)] == []
    assert [name for name in ordinary if looks_secret(name)] == []


def test_the_environment_loses_keys_secret_names_and_secret_values() -> None:
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "MY_LLM": "plain-value-1234",  # a configured provider's key variable
        "GITHUB_TOKEN": "anything",
        "DATABASE_URL": "postgres://app:hunter2@db/app",
        "PLAIN_NAME": GHP,
        "NPM_TOKEN": "npm-allowed",
        "CI_JOB_TOKEN": "ci-allowed",
        "EDITOR": "vim",
    }
    kept = command_environment(environ, key_names=["MY_LLM"], allow=["NPM_TOKEN", "CI_*"])
    assert kept == {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "NPM_TOKEN": "npm-allowed",
        "CI_JOB_TOKEN": "ci-allowed",
        "EDITOR": "vim",
    }


def test_every_providers_key_variable_goes_whatever_its_name() -> None:
    registry = builtin_registry()
    names = {name for info in registry.providers.values() for name in info.api_key_env}
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} <= names
    environ = dict.fromkeys(names, "x") | {"PATH": "/bin"}
    assert model_command_environment(registry, [], environ) == {"PATH": "/bin"}


def test_an_unset_line_for_a_shell_another_program_starts() -> None:
    environ = {"PATH": "/bin", "GITHUB_TOKEN": "x", "A_KEY": "y", "odd-name": "z"}
    kept = command_environment(environ)
    assert unset_script(environ, kept) == "unset A_KEY GITHUB_TOKEN\n"
    assert unset_script({"PATH": "/bin"}, {"PATH": "/bin"}) == ""


def test_a_project_cannot_widen_what_the_model_sees(paths: Paths, cwd: Path) -> None:
    paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text('[bash]\nenv_allow = ["NPM_TOKEN"]\n', encoding="utf-8")
    project = cwd / ".picode"
    project.mkdir()
    (project / "config.toml").write_text(
        '[bash]\nenv_allow = ["GITHUB_TOKEN"]\n\n[redaction]\ntool_results = false\n',
        encoding="utf-8",
    )
    for trusted in (False, True):
        loaded = load_config(paths, cwd, project_trusted=trusted)
        assert loaded.settings.bash.env_allow == ["NPM_TOKEN"]
        assert loaded.settings.redaction.tool_results is True
        warnings = [str(p) for p in loaded.problems if p.severity == "warning"]
        assert any("[bash] env_allow" in w and "only your own" in w for w in warnings)
        assert any("redaction" in w and "only your own" in w for w in warnings)
