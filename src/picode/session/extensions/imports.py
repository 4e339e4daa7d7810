"""Importing a project's extensions from their Python source only.

Python's own loader prefers a cached ``__pycache__/*.pyc`` when its header matches the
source (an "unchecked-hash" one matches always) and imports ``.pyc`` and native modules
lying next to the source. A project ships whatever files it likes, so the code that runs
could differ from the source the person read and the trust fingerprint hashed. Project
extensions and their submodules are compiled from their ``.py`` files instead, and no
bytecode is written back (it would change the folder the fingerprint covers).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import CodeType, ModuleType

#: The first part of every project extension's module name (``<prefix>_<n>_<stem>``).
PROJECT_PREFIX = "picode_project_extension"


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class _SourceOnlyFinder(importlib.abc.MetaPathFinder):
    """Finds the submodules of project extensions (``from . import helper``) as source."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        top, dot, name = fullname.rpartition(".")
        if not dot or not top.split(".")[0].startswith(PROJECT_PREFIX) or path is None:
            return None
        for folder in path:
            package = Path(folder) / name
            if (package / "__init__.py").is_file():
                return source_spec(fullname, package / "__init__.py", package=package)
            if (Path(folder) / f"{name}.py").is_file():
                return source_spec(fullname, Path(folder) / f"{name}.py")
            if package.is_dir():
                spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                spec.submodule_search_locations = [str(package)]
                return spec
        # Not found as source: no other finder may offer a .pyc or native module instead.
        raise ModuleNotFoundError(
            f"No module named {fullname!r} (a project extension imports Python source only)",
            name=fullname,
        )


_FINDER = _SourceOnlyFinder()


def source_spec(
    module_name: str, file: Path, *, package: Path | None = None
) -> importlib.machinery.ModuleSpec:
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    loader = SourceOnlyLoader(module_name, str(file))
    locations = [str(package)] if package is not None else None
    spec = importlib.util.spec_from_file_location(
        module_name, file, loader=loader, submodule_search_locations=locations
    )
    if spec is None:
        raise ImportError(f"cannot import {file}")
    return spec
