"""config.toml loading, custom providers, keys, base URLs and the auth file."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from picode.ai.models import builtin_registry
from picode.session.config.providers import api_key_for, apply_providers, base_url_for
from picode.session.config.settings import ConfigProblem, Settings, load_config
from picode.session.models.auth import AuthFileError, AuthStore
from picode.session.paths import Paths


def write_user(paths: Paths, text: str) -> Path:
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text(text, encoding="utf-8")
    return paths.user_config_file


def write_project(cwd: Path, text: str) -> Path:
    file = cwd / ".picode" / "config.toml"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


LOCAL_PROVIDER = """
[providers.local]
api = "openai-completions"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "OLLAMA_API_KEY"
[[providers.local.models]]
id = "qwen3-coder"
context_window = 32768
max_tokens = 8192
reasoning = false
[[providers.local.models]]
id = "tiny"
name = "Tiny"
cost = { input = 0.5, output = 1.5 }
"""


def test_no_files_gives_defaults(paths: Paths, cwd: Path) -> None:
    loaded = load_config(paths, cwd)
    assert loaded.settings == Settings()
    assert loaded.problems == []
    assert loaded.files == []
    assert loaded.settings.retry.max_retries == 3
    assert loaded.settings.compaction.reserve_tokens == 16384


def test_user_and_project_deep_merge_project_wins(paths: Paths, cwd: Path) -> None:
    user = write_user(
        paths,
        'theme = "light"\nthinking = "high"\n[retry]\nmax_retries = 5\nbase_delay_ms = 1000\n',
    )
    project = write_project(cwd, 'theme = "solar"\n[retry]\nbase_delay_ms = 1500\n')
    loaded = load_config(paths, cwd)
    assert loaded.problems == []
    assert loaded.files == [user, project]
    settings = loaded.settings
    assert settings.theme == "solar"
    assert settings.thinking == "high"
    assert settings.retry.max_retries == 5
    assert settings.retry.base_delay_ms == 1500
    assert settings.retry.max_delay_ms == 60000


def test_custom_provider_models_resolve_in_registry(paths: Paths, cwd: Path) -> None:
    write_user(paths, LOCAL_PROVIDER)
    loaded = load_config(paths, cwd)
    assert loaded.problems == []
    registry = builtin_registry()
    apply_providers(registry, loaded.settings)
    resolved = registry.resolve("local/qwen3-coder")
    model = resolved.model
    assert resolved.warning is None
    assert model.known
    assert (model.api, model.provider, model.base_url) == (
        "openai-completions",
        "local",
        "http://127.0.0.1:11434/v1",
    )
    assert (model.context_window, model.max_tokens, model.reasoning) == (32768, 8192, False)
    tiny = registry.resolve("local/tiny").model
    assert tiny.name == "Tiny"
    assert tiny.cost.input == 0.5
    assert tiny.cost.output == 1.5
    assert tiny.context_window == 128000
    assert api_key_for(registry, "local", {"OLLAMA_API_KEY": "ollama-key"}) == "ollama-key"
    assert api_key_for(registry, "local", {}) is None
    assert base_url_for(registry, "local", {}) == "http://127.0.0.1:11434/v1"


def test_custom_provider_inline_api_key(paths: Paths, cwd: Path) -> None:
    write_user(
        paths,
        '[providers.corp]\napi = "anthropic-messages"\napi_key = "corp-key"\n'
        'headers = { "x-team" = "blue" }\n[[providers.corp.models]]\nid = "m1"\n',
    )
    registry = builtin_registry()
    apply_providers(registry, load_config(paths, cwd).settings)
    assert api_key_for(registry, "corp", {}) == "corp-key"
    assert dict(registry.resolve("corp/m1").model.headers) == {"x-team": "blue"}


def test_provider_named_like_builtin_amends_it(paths: Paths, cwd: Path) -> None:
    write_user(
        paths,
        '[providers.anthropic]\nbase_url = "http://proxy.local"\n'
        '[[providers.anthropic.models]]\nid = "claude-house"\ncontext_window = 1000\n',
    )
    loaded = load_config(paths, cwd)
    assert loaded.problems == []
    registry = builtin_registry()
    builtin_count = len(registry.models("anthropic"))
    apply_providers(registry, loaded.settings)
    assert len(registry.models("anthropic")) == builtin_count + 1
    assert registry.resolve("anthropic/claude-house").model.context_window == 1000
    assert registry.resolve("anthropic/claude-house").model.api == "anthropic-messages"
    assert {m.base_url for m in registry.models("anthropic")} == {"http://proxy.local"}
    assert base_url_for(registry, "anthropic", {}) == "http://proxy.local"


def test_builtin_keys_come_from_their_env_vars() -> None:
    registry = builtin_registry()
    assert api_key_for(registry, "anthropic", {"ANTHROPIC_API_KEY": "a"}) == "a"
    assert api_key_for(registry, "openai", {"OPENAI_API_KEY": "o"}) == "o"
    assert api_key_for(registry, "google", {"GOOGLE_API_KEY": "g2"}) == "g2"
    both = {"GEMINI_API_KEY": "g1", "GOOGLE_API_KEY": "g2"}
    assert api_key_for(registry, "google", both) == "g1"
    assert api_key_for(registry, "anthropic", {"OPENAI_API_KEY": "o"}) is None
    assert api_key_for(registry, "nobody", {"ANTHROPIC_API_KEY": "a"}) is None


def test_env_key_wins_over_auth_file_which_is_the_fallback(paths: Paths) -> None:
    registry = builtin_registry()
    auth = AuthStore(paths.auth_file)
    auth.set("anthropic", "from-auth")
    assert api_key_for(registry, "anthropic", {}, auth) == "from-auth"
    assert api_key_for(registry, "anthropic", {"ANTHROPIC_API_KEY": "env"}, auth) == "env"
    assert api_key_for(registry, "openai", {}, auth) is None


def test_base_url_env_overrides_builtin() -> None:
    registry = builtin_registry()
    assert base_url_for(registry, "anthropic", {}) == registry.providers["anthropic"].base_url
    env = {
        "ANTHROPIC_BASE_URL": "http://a.test",
        "OPENAI_BASE_URL": "http://o.test/v1",
        "GOOGLE_GEMINI_BASE_URL": "http://g.test",
    }
    assert base_url_for(registry, "anthropic", env) == "http://a.test"
    assert base_url_for(registry, "openai", env) == "http://o.test/v1"
    assert base_url_for(registry, "google", env) == "http://g.test"
    assert base_url_for(registry, "nobody", env) is None


def test_toml_syntax_error_names_file_and_line_and_other_file_still_applies(
    paths: Paths, cwd: Path
) -> None:
    user = write_user(paths, 'theme = "light"\n[retry]\nmax_retries = 5\n')
    project = write_project(cwd, '# project\ntheme = "solar"\napproval = \n')
    loaded = load_config(paths, cwd)
    assert loaded.files == [user]
    (problem,) = loaded.problems
    assert problem.file == project
    assert problem.line == 3
    assert "syntax" in problem.message.lower()
    assert str(problem).startswith(f"{project}:3: ")
    assert loaded.settings.theme == "light"
    assert loaded.settings.retry.max_retries == 5


def test_bad_value_names_file_line_and_key_and_keeps_the_rest(paths: Paths, cwd: Path) -> None:
    user = write_user(
        paths,
        'theme = "light"\n\n[retry]\nenabled = false\nmax_retries = "lots"\nmax_delay_ms = 5000\n',
    )
    loaded = load_config(paths, cwd)
    (problem,) = loaded.problems
    assert (problem.file, problem.line, problem.key) == (user, 5, "retry.max_retries")
    assert problem.severity == "error"
    # picode's part of the line; the reason after it is pydantic's and may be worded anyhow.
    prefix = f"{user}:5: [retry] max_retries: "
    assert str(problem).startswith(prefix) and len(str(problem)) > len(prefix)
    settings = loaded.settings
    assert settings.retry.max_retries == 3
    assert settings.retry.enabled is False
    assert settings.retry.max_delay_ms == 5000
    assert settings.theme == "light"


def test_bad_project_value_falls_back_to_user_value(paths: Paths, cwd: Path) -> None:
    write_user(paths, 'approval = "edits"\nthinking = "medium"\n')
    project = write_project(cwd, 'thinking = "low"\napproval = "sometimes"\n')
    loaded = load_config(paths, cwd)
    (problem,) = loaded.problems
    assert (problem.file, problem.line, problem.key) == (project, 2, "approval")
    assert loaded.settings.approval == "edits"
    assert loaded.settings.thinking == "low"


def test_bad_values_inside_provider_models(paths: Paths, cwd: Path) -> None:
    user = write_user(
        paths,
        '[providers.local]\napi = "openai-completions"\n'
        '[[providers.local.models]]\nid = "good"\ncontext_window = "big"\n'
        "[[providers.local.models]]\ncontext_window = 5\n"
        '[[providers.local.models]]\nid = "third"\n',
    )
    loaded = load_config(paths, cwd)
    keys = {(p.key, p.line) for p in loaded.problems}
    assert ("providers.local.models[0].context_window", 5) in keys
    assert ("providers.local.models[1]", 6) in keys
    assert all(p.file == user for p in loaded.problems)
    models = loaded.settings.providers["local"].models
    assert [m.id for m in models] == ["good", "third"]
    assert models[0].context_window == 128000


def test_unknown_keys_are_warnings(paths: Paths, cwd: Path) -> None:
    write_user(paths, 'colour = "red"\n[retry]\nmax_retries = 1\nmystery = 2\n')
    loaded = load_config(paths, cwd)
    assert {(p.key, p.line, p.severity) for p in loaded.problems} == {
        ("colour", 1, "warning"),
        ("retry.mystery", 4, "warning"),
    }
    assert loaded.settings.retry.max_retries == 1


def test_custom_provider_without_api_is_reported_and_dropped(paths: Paths, cwd: Path) -> None:
    user = write_user(paths, '[providers.mine]\nbase_url = "http://x"\n')
    loaded = load_config(paths, cwd)
    (problem,) = loaded.problems
    assert (problem.file, problem.line, problem.key) == (user, 1, "providers.mine.api")
    assert "mine" not in loaded.settings.providers


def test_wrong_api_name_is_reported(paths: Paths, cwd: Path) -> None:
    write_user(paths, '[providers.mine]\napi = "openai"\nbase_url = "http://x"\n')
    loaded = load_config(paths, cwd)
    first = loaded.problems[0]
    assert (first.key, first.line) == ("providers.mine.api", 2)
    assert "openai-completions" in first.message
    assert "mine" not in loaded.settings.providers


def test_config_problem_str_without_line_or_key(tmp_path: Path) -> None:
    problem = ConfigProblem(tmp_path / "config.toml", None, None, "cannot be read")
    assert str(problem) == f"{tmp_path / 'config.toml'}: cannot be read"
    top = ConfigProblem(Path("config.toml"), 2, "theme", "bad")
    assert str(top) == "config.toml:2: theme: bad"


# --- the auth file ---------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_auth_file_is_written_0600(paths: Paths) -> None:
    auth = AuthStore(paths.auth_file)
    auth.set("openai", "sk-test")
    assert stat.S_IMODE(paths.auth_file.stat().st_mode) == 0o600
    assert auth.get("openai") == "sk-test"
    assert json.loads(paths.auth_file.read_text()) == {"openai": {"api_key": "sk-test"}}
    assert auth.remove("openai") is True
    assert auth.remove("openai") is False
    assert AuthStore(paths.auth_file).get("openai") is None
    assert [p.name for p in paths.config_dir.iterdir()] == ["auth.json"]


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_loose_auth_file_mode_is_tightened(paths: Paths) -> None:
    AuthStore(paths.auth_file).set("google", "g-key")
    os.chmod(paths.auth_file, 0o644)
    assert AuthStore(paths.auth_file).get("google") == "g-key"
    assert stat.S_IMODE(paths.auth_file.stat().st_mode) == 0o600


def test_corrupt_auth_file_is_reported_not_lost(paths: Paths) -> None:
    paths.config_dir.mkdir(parents=True)
    paths.auth_file.write_text('{"openai": {"api_key": "x"', encoding="utf-8")
    auth = AuthStore(paths.auth_file)
    assert auth.get("openai") is None
    assert auth.problem is not None
    assert str(paths.auth_file) in auth.problem
    assert "line 1" in auth.problem
    with pytest.raises(AuthFileError, match="not valid JSON"):
        auth.set("openai", "new")
    assert paths.auth_file.read_text(encoding="utf-8") == '{"openai": {"api_key": "x"'
    registry = builtin_registry()
    assert api_key_for(registry, "openai", {}, auth) is None
