"""ZooKeeper digest authentication for the ZooKeeper state manager: the credential file and the
ACL every node gets.

With ``heron.statemgr.zookeeper.auth.file`` set, the state manager logs in to ZooKeeper as the
digest user the file names, and every node it creates carries one ACL entry: all permissions
for that user and none for anyone else. A ZooKeeper client without that user's password can
then neither read, change nor delete a topology's nodes, nor create nodes beside them (ZooKeeper
checks a delete and a create against the parent's ACL, which is the same). Only the file's
path is config; the password stays in the file, which must be owner-only, so it is never part
of the topology config (which the state manager stores) nor of a command line or a log.

>>> import os, tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = os.path.join(tmp, "zk-auth")
...     with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
...         _ = f.write("heron:s3cret\\n")
...     credential = load_credential({AUTH_FILE_KEY: path})
>>> credential.user, credential.acl.perms, "s3cret" in repr(credential)
('heron', 31, False)
>>> load_credential({}) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kazoo.security import ACL, Permissions, make_digest_acl

from heron_core._secret_file import read_secret_file
from heron_core.errors import ConfigurationError

__all__ = ["AUTH_FILE_KEY", "DigestCredential", "load_credential", "wider_grants"]

AUTH_FILE_KEY = "heron.statemgr.zookeeper.auth.file"

_MAX_FILE_BYTES = 4096


@dataclass(frozen=True)
class DigestCredential:
    """A ZooKeeper digest user and its password, read from :attr:`path`.

    The password is left out of ``repr`` (and of every message this package writes).
    """

    user: str
    password: str = field(repr=False)
    path: str

    @property
    def auth_data(self) -> list[tuple[str, str]]:
        """kazoo's ``auth_data``: the login sent on every (re)connection."""
        return [("digest", f"{self.user}:{self.password}")]

    @property
    def acl(self) -> ACL:
        """The ACL entry of every node: all permissions for this user."""
        return make_digest_acl(self.user, self.password, all=True)

    def describe(self) -> str:
        """``digest user 'heron' of heron.statemgr.zookeeper.auth.file (/path)``, for
        messages."""
        return f"digest user {self.user!r} of {AUTH_FILE_KEY} ({self.path})"


def load_credential(config: Mapping[str, Any]) -> DigestCredential | None:
    """The credential ``config``'s :data:`AUTH_FILE_KEY` names, or None when the key is unset
    or empty (no authentication: nodes get ZooKeeper's open ACL, as before the key existed).

    The file holds one line ``user:password`` (ASCII; the user without ``:``; the password may
    hold ``:``); a final newline is ignored. It must be a regular file the owner alone can
    read (mode 0600 or 0400), as ssh requires of a private key.

    Raises:
        ConfigurationError: naming the key and the path (never the file's content): the value
            is not a string, the path is relative (daemons run in other directories), the
            file is missing, unreadable, not a regular file, readable by group or others, or
            not one ``user:password`` line.
    """
    found = read_secret_file(
        AUTH_FILE_KEY,
        config.get(AUTH_FILE_KEY),
        holding="'user:password'",
        secret="a ZooKeeper password",
        limit=_MAX_FILE_BYTES,
    )
    if found is None:
        return None
    path, raw = found
    return _parse(raw, str(path))


def _parse(raw: bytes, path: str) -> DigestCredential:
    """The credential in a file's bytes ``raw``.

    >>> _parse(b"heron:a:b\\n", "/f").password == "a:b"
    True
    >>> _parse(b"heron\\n", "/f")
    Traceback (most recent call last):
    ...
    heron_core.errors.ConfigurationError: heron.statemgr.zookeeper.auth.file: /f must hold one \
line 'user:password' (a ZooKeeper digest user and its password, ASCII), found no ':'
    """

    def bad(why: str) -> ConfigurationError:
        return ConfigurationError(
            f"{AUTH_FILE_KEY}: {path} must hold one line 'user:password' (a ZooKeeper digest "
            f"user and its password, ASCII), {why}"
        )

    if len(raw) > _MAX_FILE_BYTES:
        raise bad(f"found more than {_MAX_FILE_BYTES} bytes")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise bad("found bytes that are not ASCII") from None
    if text.endswith("\n"):
        text = text[:-1].removesuffix("\r")
    if "\n" in text or "\r" in text:
        raise bad("found more than one line")
    user, colon, password = text.partition(":")
    if not colon:
        raise bad("found no ':'")
    if not user.strip() or user != user.strip():
        raise bad("found an empty user or one with spaces around it")
    if not password:
        raise bad("found an empty password")
    if any(not character.isprintable() for character in text):
        raise bad("found control characters")
    return DigestCredential(user, password, path)


def wider_grants(acls: Iterable[ACL], credential: DigestCredential) -> list[str]:
    """The entries of ``acls`` that let someone other than ``credential``'s user do more than
    read (``world:anyone:cdrwa``, say), as ``scheme:id:perms`` text; [] when the node is
    protected.

    >>> from kazoo.security import OPEN_ACL_UNSAFE, READ_ACL_UNSAFE
    >>> me = DigestCredential("heron", "pw", "/f")
    >>> wider_grants([me.acl, *READ_ACL_UNSAFE], me)
    []
    >>> wider_grants([me.acl, *OPEN_ACL_UNSAFE], me)
    ['world:anyone:cdrwa']
    """
    mine = credential.acl.id
    return [
        f"{acl.id.scheme}:{acl.id.id}:{_perms_text(acl.perms)}"
        for acl in acls
        if acl.id != mine and acl.perms & ~Permissions.READ
    ]


def _perms_text(perms: int) -> str:
    """ZooKeeper's ``cdrwa`` spelling of a permission mask.

    >>> _perms_text(Permissions.ALL), _perms_text(Permissions.READ | Permissions.WRITE)
    ('cdrwa', 'rw')
    """
    letters = (
        ("c", Permissions.CREATE),
        ("d", Permissions.DELETE),
        ("r", Permissions.READ),
        ("w", Permissions.WRITE),
        ("a", Permissions.ADMIN),
    )
    return "".join(letter for letter, bit in letters if perms & bit)
