"""Type-only imports of an SDK module deferred (``picode.ai.type_imports``)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from picode.ai.type_imports import DeferringFinder, deferrable
from tests.ai.fake_packages import fake_packages

HEADER = "from __future__ import annotations\nfrom typing import Callable, cast\n"
PACKAGE = "sdk.lib.tracing"
TYPES = ("sdk.types",)


def found(body: str, header: str = HEADER) -> dict[str, tuple[str, str, bool]]:
    source = header + textwrap.dedent(body)
    return deferrable(ast.parse(source), PACKAGE, TYPES)


def test_casts_annotations_aliases_and_checks_are_deferred() -> None:
    result = found(
        """
        from ...types import Message, Params, Event, Other
        from ...types.beta import BetaMessage as Beta
        from ..helpers import Helper

        AnyMessage = Message | Beta
        Reader = Callable[[], AnyMessage | None]
        limit: Params

        def record(body: object, reader: Reader) -> Event:
            snapshot: AnyMessage | None = None
            params = cast(Params, body)
            if isinstance(body, (Message, Other)) or issubclass(type(body), Beta):
                return cast(Event, params)
            return cast(Event, Helper(snapshot))
        """
    )
    assert found_names(result) == {"Message", "Params", "Event", "Other", "Beta"}
    assert result["Beta"] == ("sdk.types.beta", "BetaMessage", True)
    assert result["Params"] == ("sdk.types", "Params", False)
    assert result["Message"][2] and result["Other"][2]


def found_names(result: dict[str, tuple[str, str, bool]]) -> set[str]:
    return set(result)


@pytest.mark.parametrize(
    "use",
    [
        "Thing()",  # constructed
        "Thing.model_fields",  # an attribute read
        "call(Thing)",  # handed to other code
        "isinstance(Thing, type)",  # the object checked, not the class
        "class Model:\n    field: Thing",  # a class body reads its annotations
        "class Model(Thing):\n    pass",  # subclassed
        "@decorate\ndef f(x: Thing) -> None: ...",  # a decorator may read the signature
        "Thing = 1",  # rebound
        "Alias = Thing | None\nAlias()",  # an alias used otherwise
    ],
)
def test_any_other_use_keeps_the_import(use: str) -> None:
    assert found("from ...types import Thing\n" + use + "\n") == {}


def test_a_module_without_the_future_import_keeps_its_imports() -> None:
    assert found("from ...types import Thing\nx = cast(Thing, 1)\n", header="") == {}


def test_imports_from_elsewhere_are_left_alone() -> None:
    assert found("from ..helpers import Thing\nx = cast(Thing, 1)\n") == {}
    assert found("from ...typesetting import Thing\nx = cast(Thing, 1)\n") == {}


def test_an_exported_name_keeps_its_import() -> None:
    body = "from ...types import Thing, Other\n__all__ = ['Thing']\nx = cast(Thing | Other, 1)\n"
    assert set(found(body)) == {"Other"}


# --- through the finder, on a fake SDK ---------------------------------------------------

ROOT = "fakesdk_types"

FILES = {
    "__init__.py": "",
    "types/__init__.py": """
        from .thing import Thing as Thing
        from .params import Params as Params
    """,
    "types/thing.py": """
        import builtins
        builtins._fakesdk_types_ran.append(__name__)

        class Thing:
            pass
    """,
    "types/params.py": """
        import builtins
        builtins._fakesdk_types_ran.append(__name__)

        class Params(dict):
            pass
    """,
    "lib/__init__.py": "",
    "lib/uses.py": """
        from __future__ import annotations

        from typing import cast

        from ..types import Params, Thing

        Either = Thing | Params

        def is_thing(value: object) -> bool:
            return isinstance(value, Thing)

        def is_thing_class(value: type) -> bool:
            return issubclass(value, (Thing,))

        def as_params(value: object) -> Params:
            return cast(Params, value)
    """,
    "lib/builds.py": """
        from __future__ import annotations

        from ..types import Thing

        def make() -> Thing:
            return Thing()
    """,
}


@pytest.fixture
def fake_sdk(tmp_path: Path) -> Iterator[list[str]]:
    with fake_packages(
        tmp_path,
        ROOT,
        FILES,
        DeferringFinder([f"{ROOT}.lib."], [f"{ROOT}.types"]),
        "_fakesdk_types_ran",
    ) as log:
        yield log


def test_a_type_only_import_runs_no_type_module(fake_sdk: list[str]) -> None:
    uses = importlib.import_module(f"{ROOT}.lib.uses")
    assert fake_sdk == []
    assert uses.as_params({"a": 1}) == {"a": 1}
    assert not uses.is_thing(object())
    assert fake_sdk == []


def test_checks_answer_for_the_real_class_once_it_exists(fake_sdk: list[str]) -> None:
    uses = importlib.import_module(f"{ROOT}.lib.uses")
    thing = importlib.import_module(f"{ROOT}.types.thing")

    class Sub(thing.Thing):
        pass

    assert uses.is_thing(thing.Thing())
    assert uses.is_thing(Sub())
    assert not uses.is_thing(object())
    assert uses.is_thing_class(Sub)
    assert not uses.is_thing_class(int)
    assert isinstance(thing.Thing(), uses.Either)


def test_a_module_that_uses_the_class_imports_it(fake_sdk: list[str]) -> None:
    builds = importlib.import_module(f"{ROOT}.lib.builds")
    assert f"{ROOT}.types.thing" in fake_sdk
    assert type(builds.make()).__module__ == f"{ROOT}.types.thing"


# --- the real SDK -------------------------------------------------------------------------

PROBE = """
import json, sys
import picode.ai.providers.anthropic_messages
import anthropic
from anthropic.lib._tracing import _api_call, _streaming
heavy = [m for m in ("anthropic.types.beta.message_create_params",
                     "anthropic.types.beta.beta_message") if m in sys.modules]
before = issubclass(anthropic.types.Message, _api_call.BetaMessage)
from anthropic.types.beta import BetaMessage
print(json.dumps({
    "heavy": heavy,
    "deferred": type(_api_call.BetaMessage).__name__ != type(BetaMessage).__name__,
    "before": before,
    "beta": issubclass(BetaMessage, _api_call.BetaMessage),
    "message": issubclass(anthropic.types.Message, (_api_call.Message, _api_call.BetaMessage)),
    "not_beta": issubclass(anthropic.types.Message, _api_call.BetaMessage),
    "instance": isinstance(BetaMessage.construct(), _streaming.BetaMessage),
}))
"""


def test_the_sdk_client_loads_without_the_beta_types_and_checks_still_answer() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "heavy": [],
        "deferred": True,
        "before": False,
        "beta": True,
        "message": True,
        "not_beta": False,
        "instance": True,
    }
