"""What the trust fingerprint reads: every file the loaders can reach under ``.picode/``.

Links are followed as the loaders follow them (an extension package may be a symlink to a
folder anywhere), so the fingerprint covers the bytes they point to, and a link that leaves
``.picode/`` is reported for the trust question to name. The scan is bounded (files and
bytes); past a bound it cannot vouch for what it did not read, so it fails closed: the
caller treats the folder as changed, every time.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

#: Files read for a fingerprint, over all gated folders.
MAX_FILES = 2000
#: Bytes read for a fingerprint, over all gated files.
MAX_BYTES = 32 * 1024 * 1024
_CHUNK = 1024 * 1024


@dataclass(slots=True)
class Scan:
    """One fingerprint in the making (``update`` with each gated value or folder)."""

    project: Path
    folder: Path
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    files: int = 0
    bytes_read: int = 0
    #: (link, where it points) for each symlink whose target is outside ``.picode/``.
    links_out: list[tuple[Path, Path]] = field(default_factory=list)
    #: Why the scan stopped short; the fingerprint then means nothing.
    over_cap: str | None = None
    _inside: Path = field(init=False)

    def __post_init__(self) -> None:
        self._inside = self.project.resolve()

    def update(self, *parts: object) -> None:
        self.digest.update(json.dumps(parts, default=str).encode())

    def add_file(self, file: Path) -> None:
        """The file's name and bytes (through any link), within the bounds."""
        if self.over_cap is not None:
            return
        self.files += 1
        if self.files > MAX_FILES:
            self.over_cap = f"more than {MAX_FILES} files"
            return
        self._note_link(file)
        self.update("file", self.relative(file))
        self.digest.update(self._content_digest(file))

    def files_below(self, folder: Path, *, suffix: str | None = None) -> list[Path]:
        """Every file below ``folder``, through linked folders too, in a stable order;
        a folder reached twice (a link loop) is read once."""
        self._note_link(folder)
        found: list[Path] = []
        seen: set[str] = set()
        try:
            walker = os.walk(folder, followlinks=True)
            for root, dirs, names in walker:
                real = os.path.realpath(root)
                if real in seen:
                    dirs[:] = []
                    continue
                seen.add(real)
                dirs.sort()
                for name in dirs:
                    self._note_link(Path(root) / name)
                for name in sorted(names):
                    if suffix is None or name.endswith(suffix):
                        found.append(Path(root) / name)
                if len(found) > MAX_FILES:
                    break
        except OSError:
            pass
        return found

    def relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.folder))
        except ValueError:
            return str(path)

    def _note_link(self, path: Path) -> None:
        if not path.is_symlink():
            return
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(self._inside):
            self.links_out.append((path, target))

    def _content_digest(self, file: Path) -> bytes:
        digest = hashlib.sha256()
        try:
            info = file.stat()
            if not stat.S_ISREG(info.st_mode):
                # A FIFO would block the read; nothing imports one anyway.
                digest.update(f"not a regular file: {stat.S_IFMT(info.st_mode)}".encode())
                return digest.digest()
            if self.bytes_read + info.st_size > MAX_BYTES:
                self.over_cap = f"more than {MAX_BYTES // (1024 * 1024)} MB"
                return digest.digest()
            with file.open("rb") as handle:
                while chunk := handle.read(_CHUNK):
                    self.bytes_read += len(chunk)
                    if self.bytes_read > MAX_BYTES:
                        # Grew while read: what it holds past the bound is unknown.
                        self.over_cap = f"more than {MAX_BYTES // (1024 * 1024)} MB"
                        break
                    digest.update(chunk)
        except OSError as exc:
            digest.update(f"unreadable: {exc.errno}".encode())
        return digest.digest()
