"""The container package: the files of the topology's working directory W that every container
needs, packed once at schedule time and unpacked by each container on its own host.

`SHIPPED` is the one list of what goes in. A scheduler whose containers do not share W's
filesystem (the Spark scheduler) ships `build_package`'s archive (bytes, never written to a
file) through its cluster manager, and each container `unpack_package`s it into a fresh
working directory. The packing plan, the topology and everything else a container reads at
start come from the state manager.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     w = Path(tmp, "w")
...     _ = (w / "code").mkdir(parents=True), (w / "code" / "words.txt").write_text("a b")
...     unpack_package(build_package(w), Path(tmp, "container-1"))
...     sorted(p.name for p in Path(tmp, "container-1").iterdir())
['code', 'logs']
"""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

from heron_core.network import KEYS_DIR

__all__ = ["SHIPPED", "build_package", "remove_unpacked", "unpack_package"]

SHIPPED: tuple[str, ...] = ("code", KEYS_DIR)
"""The entries of W (files or directories) every container gets, wherever it runs: the
topology's code directory (``code/``, the instances' working directory) and its CURVE key pair
(``keys/``, owner-only; the archive keeps the modes). Add here whatever else every container
must hold; entries that do not exist in W are skipped."""


def build_package(working_dir: Path) -> bytes:
    """The `SHIPPED` entries of ``working_dir`` as a gzipped tar, in memory (paths relative
    to W; symbolic links kept as links; modes kept, so the key pair stays owner-only where it
    is unpacked). It holds the key pair: whatever carries it must be as protected.

    Raises:
        OSError: an entry cannot be read.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for entry in SHIPPED:
            path = working_dir / entry
            if path.exists() or path.is_symlink():
                tar.add(path, arcname=entry)
    return buffer.getvalue()


def unpack_package(package: bytes, working_dir: Path) -> None:
    """Make ``working_dir`` a fresh container working directory: remove whatever it held,
    extract the archive ``package`` (from `build_package`) into it (tar's ``data`` filter: no
    absolute paths, no paths leaving the directory, no devices) and create ``logs/`` and
    ``code/``.

    Raises:
        OSError, tarfile.TarError: the archive cannot be read or extracted.
    """
    shutil.rmtree(working_dir, ignore_errors=True)
    working_dir.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(package), mode="r:*") as tar:
        tar.extractall(working_dir, filter="data")
    keys = working_dir / KEYS_DIR
    if keys.is_dir():  # the data filter gives directories default modes
        keys.chmod(0o700)
    (working_dir / "logs").mkdir(exist_ok=True)
    (working_dir / "code").mkdir(exist_ok=True)


def remove_unpacked(working_dir: Path) -> None:
    """Remove what `unpack_package` put in ``working_dir`` (the `SHIPPED` entries: the code
    and the key pair), keeping its ``logs/``; nothing when it does not exist."""
    for entry in SHIPPED:
        path = working_dir / entry
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
