"""Helpers of the ZooKeeper access-control tests (imported by them: a ``conftest.py`` here would
clash with other folders' by module name)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["PASSWORD", "write_credential"]

PASSWORD = "pw-0f3c9a-never-shown"
"""The digest password of the tests' user ``heron``: no message, log or node may show it."""


def write_credential(path: Path, text: str, mode: int = 0o600) -> str:
    """Write ``text`` to a new file ``path`` of ``mode``; returns the path as config wants it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with open(fd, "w") as file:
        file.write(text)
    os.chmod(path, mode)  # whatever the umask
    return str(path)
