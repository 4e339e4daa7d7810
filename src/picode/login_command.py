"""``picode login [PROVIDER]`` and ``picode logout [PROVIDER]``: a provider's API key in
picode's auth file (docs/configuration.md "The auth file"), as ``/login`` does in the TUI.

The key is read without echo from the terminal, or from stdin when it is piped
(``pass show anthropic | picode login anthropic``), so it never lands in the shell's
history or in the process list.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from picode.ai.models import ModelRegistry
    from picode.session.models.auth import AuthStore

USAGE = """\
usage: picode login [PROVIDER]    save an API key (typed without echo, or piped on stdin)
       picode logout [PROVIDER]   remove it
PROVIDER: the default model's provider unless named (picode --list-models lists them).
(a prompt that starts with the word "login" is sent with: picode -- login ...)
"""


def run_login_command(
    argv: Sequence[str],
    out: TextIO | None = None,
    err: TextIO | None = None,
    read_key: Callable[[str], str] | None = None,
) -> int:
    """``argv`` starts with "login" or "logout". Exit 0 when done, 1 when nothing could be
    saved or removed, 2 for bad usage. ``read_key(prompt)`` reads the key (the terminal or
    stdin unless given)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    command, rest = argv[0], list(argv[1:])
    if rest[:1] in (["-h"], ["--help"]):
        out.write(USAGE)
        return 0
    if len(rest) > 1 or (rest and rest[0].startswith("-")):
        err.write(USAGE)
        return 2
    from picode.ai.untrusted import one_line
    from picode.session.models.keys import (
        ApiKeyError,
        check_provider,
        forget_api_key,
        save_api_key,
    )

    registry, auth, env, default_provider = _setting_up(err)
    provider = rest[0] if rest else default_provider
    try:
        if command == "logout":
            forgotten = forget_api_key(registry, auth, env, provider)
            _tell(out, err, command, forgotten.said(), forgotten.warning())
            return 0
        check_provider(registry, provider)  # before the key is asked for
        key = (read_key or _read_key)(f"API key for {provider} (not shown): ")
        saved = save_api_key(registry, auth, env, provider, key)
    except ApiKeyError as exc:
        err.write(f"picode {command}: {one_line(str(exc), 400)}\n")
        return 1
    except (KeyboardInterrupt, EOFError):
        err.write(f"\npicode {command}: nothing was saved.\n")
        return 1
    _tell(out, err, command, saved.said(), saved.warning())
    return 0


def _tell(out: TextIO, err: TextIO, command: str, said: str, warning: str | None) -> None:
    out.write(said + "\n")
    if warning is not None:
        err.write(f"picode {command}: {warning}\n")


def _setting_up(err: TextIO) -> tuple[ModelRegistry, AuthStore, dict[str, str], str]:
    """The registry with the configured providers, the auth file, the environment and the
    provider of the model picode would start with."""
    import os

    from picode.ai.models import builtin_registry
    from picode.cli import build_parser
    from picode.launch import assess_trust, quick_view
    from picode.session.config.providers import apply_providers
    from picode.session.config.settings import load_config
    from picode.session.models.auth import AuthStore
    from picode.session.paths import resolve_paths

    paths = resolve_paths()
    flags = build_parser().parse_args([])  # what a bare `picode` would start with
    loaded = load_config(paths, Path.cwd(), project_trusted=assess_trust(flags).trusted)
    for problem in loaded.problems:
        err.write(f"picode: config {problem.severity}: {problem}\n")
    registry = builtin_registry()
    apply_providers(registry, loaded.settings)
    return registry, AuthStore(paths.auth_file), dict(os.environ), quick_view(flags).model.provider


def _read_key(prompt: str) -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(prompt)
    return sys.stdin.read()
