"""From parsed arguments to a running front end: configuration, model, session options."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from picode.ai.models import THINKING_LEVELS, ModelRegistry, ThinkingLevel, UnknownModelError
from picode.ai.thinking import runs_at
from picode.session.startup import Prepared, QuickView

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Providers tried in this order when neither --model nor default_model says otherwise.
DEFAULT_PROVIDER_ORDER = ("anthropic", "openai", "google")


class LaunchError(Exception):
    """A problem the user must fix before picode can start; printed without a traceback."""


def launch(args: argparse.Namespace, *, exit_when_done: bool = False) -> int:
    """Run the chosen front end; its exit code.

    ``exit_when_done`` ends a headless run with ``os._exit`` once its output is flushed:
    the session file is closed by then, and tearing down the interpreter (the SDK's and
    pydantic's many objects) would add about half a second to every ``picode -p``.
    """
    code = _launch(args)
    mode = args.mode or ("text" if args.print_mode else "tui")
    if exit_when_done and mode != "tui":
        exit_now(code)
    return code


def preload_provider(api: str) -> None:
    """The SDK serving ``api``, imported in a thread from now on (``picode.ai.preload``)."""
    from picode.ai.preload import preload_provider as start

    start(api)


def exit_now(code: int) -> None:
    from picode import compile_cache

    compile_cache.save()  # os._exit skips atexit
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def redact_log_records() -> None:
    """Log records (stderr, or wherever an extension sends them) carry no key or token:
    an SDK's error may quote a URL with a key in it. Redaction is imported with the first
    record, off the path to the first frame."""
    make_record = logging.getLogRecordFactory()

    def redacted_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        from picode.ai.redaction import redact_text

        record = make_record(*args, **kwargs)
        try:
            record.msg, record.args = redact_text(record.getMessage()), None
        except Exception:  # a bad format string: logging reports it when it emits
            return record
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(redacted_record)


def _launch(args: argparse.Namespace) -> int:
    mode = args.mode or ("text" if args.print_mode else "tui")
    redact_log_records()
    if mode in ("rpc", "acp") and args.prompt:
        print(f"picode: {mode} mode takes its prompts as commands on stdin", file=sys.stderr)
        return EXIT_USAGE
    try:
        if mode == "tui":
            # The first frame waits for nothing it does not show: full configuration
            # (pydantic), tools and the session load right after it, in the app.
            from picode import compile_cache
            from picode.tui.gc_pause import pause_collector, when_settled

            pause_collector()  # start-up builds long-lived objects, almost no garbage
            # Not at exit alone (a closed terminal ends picode without it), and what is kept
            # in memory goes once start-up is over.
            when_settled(compile_cache.finish)
            view = quick_view(args)
            if args.prompt:
                # The message needs the SDK most of all: its import goes first, Textual's
                # and the first frame's work take turns with it.
                preload_provider(view.model.api)
            from picode.tui import run_tui

            # Typed as given: the app attaches ``@path`` files when it sends it, as it does
            # for what is typed in the editor.
            initial = " ".join(args.prompt) if args.prompt else None

            def prepare_interactive(trust: Any = None) -> Prepared:
                return prepare(args, interactive=True, trust=trust)

            return run_tui(
                view,
                prepare_interactive,
                assess_trust=lambda: assess_trust(args),
                initial_prompt=initial,
            )
        if mode in ("text", "json"):
            preload_provider(quick_view(args).model.api)  # under way while options load
        prepared = prepare(args, interactive=False)
        for error in prepared.errors:
            print(f"picode: config error: {error}", file=sys.stderr)
        for warning in prepared.warnings:
            print(f"picode: warning: {warning}", file=sys.stderr)
        if mode in ("acp", "rpc"):
            from picode import compile_cache

            if mode == "acp":
                from picode.modes.acp.server import run_acp

                return run_acp(prepared.options, start_up_over=compile_cache.finish)
            from picode.modes.rpc.server import run_rpc

            return run_rpc(prepared.options, start_up_over=compile_cache.finish)
        prompt, attachments = build_prompt(args.prompt, read_stdin=not _stdin_is_terminal())
        if not prompt.strip():
            print(
                "picode: print mode needs a prompt: give it as arguments or pipe it on stdin",
                file=sys.stderr,
            )
            return EXIT_USAGE
        require_key(prepared.options, explicit=bool(args.model))
        from picode.modes.headless import run_headless

        return run_headless(
            prepared.options, prompt, json_events=(mode == "json"), attachments=attachments
        )
    except LaunchError as exc:
        print(f"picode: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("picode: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def assess_trust(args: argparse.Namespace) -> Any:
    """What this folder's ``.picode/`` holds that needs trust (a ``ProjectTrust``)."""
    from picode.session.paths import resolve_paths
    from picode.session.safety.trust import assess_project

    return assess_project(resolve_paths(), Path.cwd(), override=args.trust_project)


def prepare(args: argparse.Namespace, *, interactive: bool, trust: Any = None) -> Prepared:
    """``trust``: the folder's trust as the TUI settled it; assessed here when None."""
    from picode.ai.models import builtin_registry
    from picode.session.config.providers import apply_providers
    from picode.session.config.settings import load_config
    from picode.session.models.choice import choose_model
    from picode.session.models.credentials import Credentials
    from picode.session.options import SessionOptions
    from picode.session.paths import resolve_paths
    from picode.session.safety.private_files import ensure_private_dirs
    from picode.session.safety.secrets import model_command_environment
    from picode.tools import coding_tools

    cwd = Path.cwd()
    paths = resolve_paths()
    ensure_private_dirs(paths.config_dir, paths.data_dir, paths.sessions_dir, paths.cache_dir)
    if trust is None:
        trust = assess_trust(args)
    loaded = load_config(paths, cwd, project_trusted=trust.trusted)
    errors = [str(problem) for problem in loaded.problems if problem.severity == "error"]
    warnings = [str(p) for p in loaded.problems if p.severity != "error"] + trust.problems
    ignored = trust.ignored_summary(interactive=interactive)
    if ignored:
        warnings.append(ignored)
    settings = loaded.settings
    # The flags set this run's limits, over the config's (0: none).
    if args.max_turns is not None:
        settings.limits.max_turns = args.max_turns
    if args.max_cost is not None:
        settings.limits.max_cost_usd = args.max_cost
    registry = builtin_registry()
    apply_providers(registry, settings)
    credentials = Credentials(registry, paths)
    model_ref = args.model or settings.default_model
    thinking: ThinkingLevel | None = args.thinking
    #: ":high" at the end of --model (an id may hold colons too: "qwen3:8b").
    thinking_in_ref = False
    if model_ref:
        try:
            # Keys are checked later, with a message fit for each mode (require_key).
            choice = choose_model(registry, None, model_ref, thinking=args.thinking)
        except UnknownModelError as exc:
            source = "--model" if args.model else "default_model in config.toml"
            raise LaunchError(f"{exc} (from {source})") from None
        model = choice.model
        warnings.extend(choice.warnings)
        thinking_in_ref = bool(args.model) and args.thinking is None and choice.thinking is not None
        thinking = choice.thinking
    else:
        model = pick_default_model(registry, credentials)
    if thinking is None:
        thinking = settings.thinking if settings.thinking in THINKING_LEVELS else "off"
    thinking, note = runs_at(model, thinking)
    if note and args.thinking:
        warnings.append(note)
    sandbox = sandbox_config(settings, paths)
    warnings.extend(sandbox_warnings(sandbox))
    options = SessionOptions(
        cwd=cwd,
        paths=paths,
        settings=settings,
        registry=registry,
        model=model,
        thinking=thinking,
        tools=coding_tools(
            cwd,
            names=parse_tools(args.tools),
            bash_timeout_s=settings.bash.default_timeout_s,
            sandbox=sandbox,
            bash_env=model_command_environment(registry, settings.bash.env_allow),
        ),
        session=session_spec(args, interactive=interactive),
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        approval="all" if args.approve else None,
        plan=args.plan,
        project_trusted=trust.trusted,
        model_explicit=bool(args.model),
        thinking_explicit=args.thinking is not None or thinking_in_ref,
    )
    return Prepared(options, warnings, errors)


def quick_view(args: argparse.Namespace) -> QuickView:
    """Model, thinking level and theme from the flags and a plain read of the config files.

    Anything wrong here is reported properly by ``prepare`` moments later, in the app."""
    from picode.ai.models import Model, builtin_registry
    from picode.session.paths import project_dir, resolve_paths

    cwd = Path.cwd()
    paths = resolve_paths()
    registry = builtin_registry()
    raw = _plain_toml(paths.user_config_file, with_providers=True)
    own_providers = raw.pop("providers", None)
    project = _plain_toml(project_dir(cwd) / "config.toml")
    ref = project.get("default_model")
    if isinstance(ref, str) and ref.partition("/")[0] not in registry.providers:
        # Only a trusted project may pick a provider of its own; ``prepare`` decides that.
        del project["default_model"]
    raw.update(project)
    ref = args.model or raw.get("default_model")
    model: Any = None
    thinking = args.thinking or raw.get("thinking")
    if isinstance(ref, str) and ref:
        provider, slash, model_id = ref.partition("/")
        if slash and provider not in registry.providers:
            # A provider of the user's config.toml (``prepare`` reads it properly): its API
            # is enough to import the right SDK early, and no "did you mean" is worked out
            # over every packaged model for an error nobody sees.
            api = _configured_api(own_providers, provider)
            model = Model(id=model_id or ref, name=ref, api=api, provider=provider)
        else:
            try:
                resolved = registry.resolve(ref)
                model = resolved.model
                thinking = thinking or resolved.thinking
            except UnknownModelError:
                model = Model(id=model_id or ref, name=ref, api="", provider=provider)
    if model is None:
        model = _first_keyed_model(registry)
    if thinking not in THINKING_LEVELS or not model.reasoning:
        thinking = "off"
    theme = args.theme or raw.get("theme")
    return QuickView(
        cwd=cwd,
        model=model,
        thinking=thinking,
        theme=theme if isinstance(theme, str) else None,
        config_dir=paths.config_dir,
        keymap_file=paths.keymap_file,
        sessions_dir=paths.sessions_dir,
        exports_dir=paths.exports_dir,
        pasted_dir=paths.pasted_dir,
        pick_session=args.resume == "",
    )


def _plain_toml(path: Path, *, with_providers: bool = False) -> dict[str, Any]:
    if not path.is_file():
        return {}
    import tomllib  # a few milliseconds, worth saving before the first frame

    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, ValueError):
        return {}
    keys = ("default_model", "thinking", "theme", *(("providers",) if with_providers else ()))
    return {k: v for k, v in data.items() if k in keys}


def _configured_api(providers: Any, name: str) -> str:
    """The wire API ``[providers.<name>]`` declares, or "" (nothing to import early)."""
    table = providers.get(name) if isinstance(providers, dict) else None
    api = table.get("api") if isinstance(table, dict) else None
    return api if isinstance(api, str) else ""


def _first_keyed_model(registry: ModelRegistry) -> Any:
    """The default model of the first provider with a key in the environment (display only;
    ``pick_default_model`` decides for real, with the auth file too)."""
    for provider in DEFAULT_PROVIDER_ORDER:
        info = registry.providers.get(provider)
        if info is not None and any(os.environ.get(name) for name in info.api_key_env):
            return registry.default_model(provider)
    return registry.default_model(DEFAULT_PROVIDER_ORDER[0])


def session_spec(args: argparse.Namespace, *, interactive: bool) -> Any:
    """What SessionOptions.session should be for -c, -r, --session and --no-session."""
    if args.no_session:
        return None
    if args.continue_session:
        return "continue"
    if args.session:
        if os.path.exists(args.session):
            return Path(args.session)
        if "/" in args.session or args.session.endswith(".jsonl"):
            from picode.session.store import NewSessionFile

            return NewSessionFile(Path(args.session).expanduser())  # a new session, saved there
        return args.session
    if args.resume is not None:
        if args.resume:
            return args.resume
        if not interactive:
            raise LaunchError("-r without an id opens a picker, which needs the TUI; pass an id")
        return "pick"
    return "new"


def sandbox_config(settings: Any, paths: Any) -> Any:
    """``[sandbox]`` plus picode's own folders, as ``tools.sandbox`` takes them."""
    from picode.tools.sandbox import SandboxConfig

    table = settings.sandbox
    return SandboxConfig(
        enabled=table.enabled,
        network=table.network,
        writable=tuple(Path(path).expanduser() for path in table.writable),
        protected=(paths.config_dir, paths.data_dir, paths.cache_dir),
        secret_files=(paths.auth_file,),
        user_commands=table.user_commands,
        allow_hosts=tuple(table.allow_hosts),
    )


def sandbox_warnings(config: Any) -> list[str]:
    """Said once at start-up: the sandbox cannot work here, or cannot honour a setting."""
    from picode.tools.sandbox import unavailable_warning

    missing = unavailable_warning(config)
    return [missing] if missing else []


def parse_tools(value: str | None) -> list[str] | None:
    if value is None:
        return None
    from picode.tools import ALL_TOOL_NAMES

    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in ALL_TOOL_NAMES]
    if unknown:
        raise LaunchError(
            f"unknown tool(s) in --tools: {', '.join(unknown)}; known: {', '.join(ALL_TOOL_NAMES)}"
        )
    return names


def pick_default_model(registry: ModelRegistry, credentials: Any) -> Any:
    for provider in DEFAULT_PROVIDER_ORDER:
        if provider in registry.providers:
            model = registry.default_model(provider)
            if credentials.has_key(model):
                return model
    return registry.default_model(DEFAULT_PROVIDER_ORDER[0])


def require_key(options: Any, *, explicit: bool) -> None:
    """Fail before any work when the model's provider has no key; name what to set."""
    from picode.session.models.credentials import Credentials, MissingApiKeyError

    credentials = Credentials(options.registry, options.paths)
    try:
        credentials.require(options.model)
    except MissingApiKeyError as exc:
        if explicit or options.settings.default_model:
            raise LaunchError(str(exc)) from None
        variables = [
            " or ".join(info.api_key_env)
            for name, info in options.registry.providers.items()
            if name in DEFAULT_PROVIDER_ORDER and info.api_key_env
        ]
        raise LaunchError(
            f"No API key found. Set one of {', '.join(variables)}, or pass --model "
            "provider/id for another provider (picode --list-models lists them with their "
            "key state)."
        ) from None


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is None or sys.stdin.isatty()
    except (AttributeError, ValueError):  # closed or replaced stdin
        return True


def build_prompt(words: list[str], *, read_stdin: bool) -> tuple[str, list[Any]]:
    """The prompt words, then piped stdin; and the files the words mention with ``@path``
    (``picode.tools.attachments``: the TUI attaches by the same rule)."""
    typed = " ".join(words)
    attachments: list[Any] = []
    if "@" in typed:
        from picode.tools.attachments import AttachmentError, attach_mentions

        try:
            found = attach_mentions(typed, Path.cwd())
        except AttachmentError as exc:
            raise LaunchError(str(exc)) from None
        for warning in found.warnings:
            print(f"picode: warning: {warning}", file=sys.stderr)
        attachments = found.blocks
    text = typed
    # With a prompt given, an open pipe that sends nothing (a harness that never closes it)
    # must not hold the run forever; without one, stdin is the prompt and is waited for.
    if read_stdin and (not typed or _stdin_speaks_within(STDIN_GRACE_S)):
        piped = _read_stdin()
        if piped.strip():
            text = f"{text}\n\n{piped}" if text else piped
    elif read_stdin:
        print(
            f"picode: warning: nothing came on stdin within {STDIN_GRACE_S:g} s; "
            "answering the prompt without it",
            file=sys.stderr,
        )
    return text, attachments


#: How long piped stdin may stay silent, when a prompt was given as words, before it is left.
STDIN_GRACE_S = 2.0


def _stdin_speaks_within(seconds: float) -> bool:
    """True when stdin has data or its end within ``seconds`` (or cannot be polled)."""
    import select

    try:
        ready, _, _ = select.select([sys.stdin], [], [], seconds)
    except (OSError, ValueError, TypeError):  # no pollable descriptor (Windows pipes, tests)
        return True
    return bool(ready)


def _read_stdin() -> str:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.read()
    # Bytes, not text: a stray invalid byte in piped input must not abort the run.
    data: bytes = stream.read()
    return data.decode("utf-8", errors="replace")
