"""SDK packages loaded lazily (``picode.ai.lazy_sdk``): a name is imported when first used,
and anything the index does not know runs the package's own ``__init__``."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from picode.ai.lazy_sdk import LazySdkFinder, reexports
from tests.ai.fake_packages import fake_packages

ROOT = "fakesdk"

FILES = {
    "__init__.py": """\
        # Generated: the root may do more than re-export.
        from __future__ import annotations
        from . import types
        from ._client import Client as Client
        from ._record import record

        record("root")
        VERSION = "1.2"
        """,
    "_record.py": """\
        import builtins
        EXECUTED = builtins.__dict__.setdefault("_fakesdk_executed", [])

        def record(what):
            EXECUTED.append(what)
        """,
    "_client.py": """\
        from ._record import record
        record("client")

        class Client:
            pass
        """,
    "types/__init__.py": '''\
        """Re-exports only."""
        from __future__ import annotations

        import typing as _t

        from .alpha import Alpha as Alpha
        from .beta import (
            Beta as Beta,  # the main one
            BetaParam,
        )
        from . import nested as nested

        __all__ = [
            "Alpha",
            "Beta",
        ]
        ''',
    "types/alpha.py": """\
        from .._record import record
        record("alpha")

        class Alpha:
            pass
        """,
    "types/beta.py": """\
        from .._record import record
        record("beta")

        class Beta:
            pass

        BetaParam = dict
        """,
    "types/gamma.py": """\
        from .._record import record
        record("gamma")
        """,
    "types/nested/__init__.py": """\
        from ..._record import record
        from .deep import Deep

        record("nested")
        """,
    "types/nested/deep.py": """\
        class Deep:
            pass
        """,
    "_errors.py": """\
        from ._record import record
        from .types.gamma import *  # noqa
        from .types.alpha import Alpha

        record("errors")
        """,
    "_picker.py": """\
        from ._record import record as _record
        from .types.alpha import Alpha

        CLASSES = {"alpha": Alpha}

        def pick(kind):
            _record("pick")
            return CLASSES.get(kind)

        def picks_itself():
            return pick("alpha")

        ONE = picks_itself()
        """,
}


@pytest.fixture
def sdk(tmp_path: Path) -> Iterator[list[str]]:
    """A generated-looking SDK on sys.path, loaded through the lazy finder; yields the log of
    the modules that ran."""
    with fake_packages(
        tmp_path,
        ROOT,
        FILES,
        LazySdkFinder([ROOT], [f"{ROOT}._picker", f"{ROOT}._errors"]),
        "_fakesdk_executed",
    ) as log:
        yield log


def fresh(name: str) -> ModuleType:
    return importlib.import_module(name)


def test_a_name_imports_only_the_module_that_defines_it(sdk: list[str]) -> None:
    from fakesdk import Client  # type: ignore[import-not-found]

    assert Client.__name__ == "Client"
    assert sdk == ["client"]  # neither the root's other statements nor any type ran

    from fakesdk.types import Alpha  # type: ignore[import-not-found]

    assert Alpha.__module__ == "fakesdk.types.alpha"
    assert sdk == ["client", "alpha"]
    assert "fakesdk.types.beta" not in sys.modules


def test_multi_line_and_unaliased_re_exports_resolve(sdk: list[str]) -> None:
    types = fresh("fakesdk.types")
    assert types.BetaParam is dict
    assert types.Beta.__module__ == "fakesdk.types.beta"
    assert types.nested.Deep.__name__ == "Deep"
    assert sdk == ["beta", "nested"]  # the impure subpackage ran as shipped, at its import


def test_what_the_root_defines_otherwise_runs_its_init_once(sdk: list[str]) -> None:
    root = fresh(ROOT)
    assert root.VERSION == "1.2"
    assert sdk.count("root") == 1
    assert root.VERSION == "1.2"
    assert root.Client is fresh("fakesdk._client").Client
    assert sdk.count("root") == 1
    assert "__getattr__" not in vars(root)


def test_all_and_star_imports_see_the_whole_package(sdk: list[str]) -> None:
    types = fresh("fakesdk.types")
    namespace: dict[str, object] = {}
    exec("from fakesdk.types import *", namespace)
    assert {"Alpha", "Beta"} <= namespace.keys()
    assert types.__all__ == ["Alpha", "Beta"]
    assert {"alpha", "beta"} <= set(sdk)


def test_an_unknown_name_is_an_attribute_error_and_a_submodule_still_imports(
    sdk: list[str],
) -> None:
    types = fresh("fakesdk.types")
    assert not hasattr(types, "gamma")  # a submodule not imported yet: no full run for it
    assert "__getattr__" in vars(types)
    from fakesdk.types import gamma  # type: ignore[import-not-found]

    assert gamma.__name__ == "fakesdk.types.gamma"
    with pytest.raises(AttributeError):
        _ = types.NoSuchThing
    with pytest.raises(ImportError):
        exec("from fakesdk.types import NoSuchThing", {})


def test_threads_resolving_at_once_get_the_same_objects(sdk: list[str]) -> None:
    seen: list[tuple[object, object, object]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def resolve() -> None:
        try:
            start.wait(timeout=10)
            types = fresh("fakesdk.types")
            root = fresh(ROOT)
            seen.append((types.Alpha, types.Beta, root.VERSION))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=resolve) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert len(seen) == 8 and len(set(seen)) == 1
    assert sdk.count("alpha") == 1 and sdk.count("root") == 1


@pytest.mark.parametrize(
    "source",
    [
        "x = 1\n",
        "import os\n",
        "from ..parent import thing\n",
        "from .a import b\nif True:\n    pass\n",
        "from .a import b as\n",
    ],
)
def test_anything_but_re_exports_is_not_indexed(source: str) -> None:
    assert reexports(source) is None


def test_other_statements_are_passed_over_when_not_strict() -> None:
    source = (
        "from .a import B as B\nif not X:\n    from .c import d\nsetup(\n    1,\n)\n"
        "from .e import F\n"
    )
    assert reexports(source, strict=False) == {"B": ("a", "B"), "F": ("e", "F")}


PROBE = """
import json, sys
{setup}
names = sorted(n for n in sys.modules if n == "{root}" or n.startswith("{root}."))
print(json.dumps(len(names)))
"""

PUBLIC_NAMES = """
import importlib, json, sys, types
{setup}
found = {{}}
for name in ("{root}", "{root}.types"):
    package = importlib.import_module(name)
    getattr(package, "__all__", None)  # lazily loaded, this runs the package's own __init__
    # Submodules are left out: which of them are attributes depends on what imported them.
    found[name] = sorted(
        n for n, v in list(vars(package).items())
        if not n.startswith("_") and not isinstance(v, types.ModuleType)
    )
print(json.dumps(found))
"""


def _run(code: str) -> object:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("root", "provider"),
    [("anthropic", "anthropic_messages"), ("openai", "openai_responses")],
)
def test_a_provider_loads_a_fraction_of_its_sdk_and_the_sdk_stays_whole(
    root: str, provider: str
) -> None:
    whole = _run(PROBE.format(setup=f"import {root}", root=root))
    lazy = _run(PROBE.format(setup=f"import picode.ai.providers.{provider}", root=root))
    assert isinstance(whole, int) and isinstance(lazy, int)
    assert lazy < whole / 2, (lazy, whole)

    eager = _run(PUBLIC_NAMES.format(setup=f"import {root}", root=root))
    completed = _run(PUBLIC_NAMES.format(setup=f"import picode.ai.providers.{provider}", root=root))
    assert isinstance(eager, dict) and len(eager[f"{root}.types"]) > 100
    assert completed == eager


def test_a_deferred_module_runs_when_its_function_is_first_called(sdk: list[str]) -> None:
    pick = importlib.import_module(f"{ROOT}._picker").pick
    assert "alpha" not in sdk
    assert pick("alpha").__name__ == "Alpha"  # its own top level called it while it ran too
    assert sdk.count("pick") == 2
    picker = sys.modules[f"{ROOT}._picker"]
    assert picker.pick is not pick and picker.pick("beta") is None
    assert "__getattr__" not in vars(picker)


def test_a_deferred_module_runs_when_another_name_is_read(sdk: list[str]) -> None:
    picker = importlib.import_module(f"{ROOT}._picker")
    assert "alpha" not in sdk
    assert picker.ONE.__name__ == "Alpha"
    assert "alpha" in sdk


def test_a_module_that_does_more_than_define_runs_at_import(sdk: list[str]) -> None:
    importlib.import_module(f"{ROOT}._errors")
    assert "errors" in sdk


ERROR_PROBE = """
import json, sys
import picode.ai.providers.anthropic_messages
import anthropic._base_client
loaded = "anthropic.types.beta_storage_in_use_error" in sys.modules
print(json.dumps({"loaded_at_import": loaded}))
"""


def test_the_anthropic_client_imports_no_error_class_until_an_error() -> None:
    assert _run(ERROR_PROBE) == {"loaded_at_import": False}


GENAI = """
import json, sys
{setup}
from google.genai import _api_client, errors
loaded = "google.genai.client" in sys.modules
from google import genai
found = {{"client before": loaded, "agents": genai.agents.__name__}}
found["version"] = genai.__version__
found["all"] = sorted(genai.__all__)
found["Client"] = genai.Client.__module__
print(json.dumps(found))
"""


def test_google_genai_runs_its_init_only_for_what_it_defines() -> None:
    lazy = _run(GENAI.format(setup="import picode.ai.providers"))
    whole = _run(GENAI.format(setup=""))
    assert isinstance(lazy, dict) and isinstance(whole, dict)
    assert lazy.pop("client before") is False and whole.pop("client before") is True
    assert lazy == whole
