"""From parsed arguments to a running front end: configuration, model, session options."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from picode.ai.models import THINKING_LEVELS, ModelRegistry, ThinkingLevel, UnknownModelError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Providers tried in this order when neither --model nor default_model says otherwise.
DEFAULT_PROVIDER_ORDER = ("anthropic", "openai", "google")


class LaunchError(Exception):
    """A problem the user must fix before picode can start; printed without a traceback."""


@dataclass(slots=True)
class Prepared:
    options: Any  # SessionOptions; typed loosely so this module imports no session code early
    warnings: list[str]


def launch(args: argparse.Namespace) -> int:
    mode = args.mode or ("text" if args.print_mode else "tui")
    try:
        if mode == "tui":
            prepared = prepare(args, interactive=True)
            from picode.tui import run_tui

            return run_tui(prepared.options, theme=args.theme, warnings=prepared.warnings)
        prepared = prepare(args, interactive=False)
        for warning in prepared.warnings:
            print(f"picode: warning: {warning}", file=sys.stderr)
        if mode == "rpc":
            from picode.modes.rpc import run_rpc

            return run_rpc(prepared.options)
        prompt = build_prompt(args.prompt, read_stdin=not sys.stdin.isatty())
        if not prompt.strip():
            print("picode: -p needs a prompt (arguments or piped stdin)", file=sys.stderr)
            return EXIT_USAGE
        from picode.modes.headless import run_headless

        return run_headless(prepared.options, prompt, json_events=(mode == "json"))
    except LaunchError as exc:
        print(f"picode: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def prepare(args: argparse.Namespace, *, interactive: bool) -> Prepared:
    from picode.ai.models import builtin_registry
    from picode.session.agent_session import SessionOptions
    from picode.session.config import apply_providers, load_config
    from picode.session.credentials import Credentials
    from picode.session.paths import resolve_paths

    cwd = Path.cwd()
    paths = resolve_paths()
    loaded = load_config(paths, cwd)
    warnings = [str(problem) for problem in loaded.problems]
    settings = loaded.settings
    registry = builtin_registry()
    apply_providers(registry, settings)
    credentials = Credentials(registry, paths)
    model_ref = args.model or settings.default_model
    thinking: ThinkingLevel | None = args.thinking
    if model_ref:
        try:
            resolved = registry.resolve(model_ref)
        except UnknownModelError as exc:
            raise LaunchError(str(exc)) from None
        model = resolved.model
        if resolved.warning:
            warnings.append(resolved.warning)
        thinking = thinking or resolved.thinking
    else:
        model = pick_default_model(registry, credentials)
    if thinking is None:
        thinking = settings.thinking if settings.thinking in THINKING_LEVELS else "off"
    if not model.reasoning:
        thinking = "off"
    session: Any
    if args.no_session:
        session = None
    elif args.continue_session:
        session = "continue"
    elif args.session:
        session = Path(args.session) if os.path.exists(args.session) else args.session
    elif args.resume is not None:
        if not args.resume:
            if not interactive:
                raise LaunchError("-r without an id needs the TUI; pass an id or prefix")
            session = "pick"
        else:
            session = args.resume
    else:
        session = "new"
    tools = None
    if args.tools is not None:
        tools = [name.strip() for name in args.tools.split(",") if name.strip()]
    options = SessionOptions(
        cwd=cwd,
        paths=paths,
        settings=settings,
        registry=registry,
        model=model,
        thinking=thinking,
        tools=tools,
        session=session,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        approval="all" if args.approve else None,
    )
    return Prepared(options, warnings)


def pick_default_model(registry: ModelRegistry, credentials: Any) -> Any:
    for provider in DEFAULT_PROVIDER_ORDER:
        if provider in registry.providers:
            model = registry.default_model(provider)
            if credentials.has_key(model):
                return model
    return registry.default_model(DEFAULT_PROVIDER_ORDER[0])


def build_prompt(words: list[str], *, read_stdin: bool) -> str:
    """Join prompt words; ``@path`` words attach that file's text; piped stdin is appended."""
    parts: list[str] = []
    attachments: list[str] = []
    for word in words:
        if word.startswith("@") and len(word) > 1:
            path = Path(word[1:]).expanduser()
            if path.is_file():
                attachments.append(_attach(path))
                parts.append(word[1:])
                continue
        parts.append(word)
    text = " ".join(parts)
    if read_stdin:
        piped = sys.stdin.read()
        if piped.strip():
            text = f"{text}\n\n{piped}" if text else piped
    if attachments:
        text = text + "\n\n" + "\n\n".join(attachments)
    return text


def _attach(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LaunchError(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in data[:8192]:
        raise LaunchError(f"{path} looks binary; only text files can be attached with @")
    text = data.decode("utf-8", errors="replace")
    return f'<file path="{path}">\n{text}\n</file>'
