"""Reading a secret from a file a config key names: the one place that checks such a file.

A secret (a ZooKeeper password, a Spark cluster's shared secret) never travels in the config:
the config names a file, which must be a regular file only its owner may access, as ssh
requires of a private key. `read_secret_file` makes those checks and returns the bytes; each
caller parses them. Every error names the key and the path, never the file's content.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = os.path.join(tmp, "secret")
...     with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
...         _ = f.write("s3cret\\n")
...     found = read_secret_file("some.key", path, holding="a secret", secret="a secret")
>>> found[1]
b's3cret\\n'
>>> read_secret_file("some.key", "", holding="a secret", secret="a secret") is None
True
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from heron_core.errors import ConfigurationError

__all__ = ["read_secret_file"]


def read_secret_file(
    key: str, value: object, *, holding: str, secret: str, limit: int = 4096
) -> tuple[Path, bytes] | None:
    """The path config key ``key`` names (its value ``value``) and up to ``limit + 1`` bytes
    of that file, or None when the value is unset or empty.

    Args:
        key: the config key, for messages.
        value: its value: an absolute path (or one starting with ``~``).
        holding: what the file holds, for the message about a value of the wrong type
            (``"'user:password'"``).
        secret: what the file's content is, for the message about its mode (``"a ZooKeeper
            password"``).
        limit: the most bytes a valid file holds; one more is read, so that the caller can
            tell a longer file.

    Raises:
        ConfigurationError: naming the key and the path (never the file's content): the value
            is not a string, the path is relative (daemons run in other directories), the
            file is missing, unreadable, not a regular file (a FIFO is refused without
            blocking), or group or others may access it.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ConfigurationError(
            f"{key} must be the path of a file holding {holding}, got "
            f"{type(value).__name__} {value!r}"
        )
    path = Path(value).expanduser()
    if not path.is_absolute():
        raise ConfigurationError(
            f"{key} must be an absolute path (or start with ~): every daemon reads it from its "
            f"own working directory; got {value!r}"
        )
    try:
        # O_NONBLOCK: a FIFO named here must not hang the daemon; it is refused below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise ConfigurationError(f"{key}: {path} is not a regular file")
            if mode & 0o077:
                raise ConfigurationError(
                    f"{key}: {path} holds {secret} but group or others may access it (mode "
                    f"{stat.S_IMODE(mode):04o}); make it owner-only: chmod 600 {path}"
                )
            raw = os.read(fd, limit + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise ConfigurationError(f"{key}: cannot read {path}: {exc.strerror or exc}") from None
    return path, raw
