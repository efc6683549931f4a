"""Sealed bytes: an HMAC-SHA256 over a value and what it is, keyed from the topology's secret.

Whatever a daemon or the CLI unpickles from a topology's state nodes (config values, component
specs, custom groupings) or from its checkpoints must come from a holder of the topology's key
pair (``W/keys``). Each such value is written *sealed*:

``MAGIC`` (8 bytes, starting with a zero byte) + MAC (32 bytes) + payload

where the MAC is HMAC-SHA256, keyed with a key derived from the topology's secret for one use
(`TopologyKeys.derive`: ``b"heron state v1"`` for state nodes, ``b"heron checkpoint v1"`` for
checkpoints), over the *context* (what the bytes are: ``topologies/wc``, or a checkpoint's
topology, task and id, length-prefixed) and the payload. So a sealed value does not verify
under another topology's key, for another node, kind, task or checkpoint. The MAC sits in
the same bytes as the payload: one write stores both, atomically.

A serialized protobuf message never starts with a zero byte (field number 0 is invalid), so
a sealed node never parses as an unsealed one and an unsealed node (one written by a heron
before sealing, or by someone without the key) is told apart from a sealed one.

>>> seal = Seal(b"k" * 32, "wc")
>>> sealed = seal.seal(b"topologies/wc", b"payload")
>>> seal.open(b"topologies/wc", sealed), unverified_payload(sealed)
(b'payload', b'payload')
>>> seal.open(b"pplans/wc", sealed)
Traceback (most recent call last):
...
heron_core.statemgr._seal.SealBroken: its MAC does not match (tampered with, or sealed for \
another node or topology)
>>> seal.open(b"topologies/wc", b"payload")
Traceback (most recent call last):
...
heron_core.statemgr._seal.SealBroken: it carries no MAC (written without the topology's key)
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from heron_core.errors import ConfigurationError

if TYPE_CHECKING:
    from heron_core.network import TopologyKeys

__all__ = [
    "MAC_BYTES",
    "MAGIC",
    "STATE_LABEL",
    "ZOOKEEPER_LABEL",
    "Seal",
    "SealBroken",
    "StateKey",
    "unverified_payload",
]

MAGIC = b"\x00heronS1"
"""The first bytes of every sealed value (the zero byte: no protobuf message starts so)."""

MAC_BYTES = 32
"""HMAC-SHA256's length."""


class SealBroken(ValueError):
    """Bytes that are not sealed (:attr:`unsealed`), or whose MAC does not match; the message
    says which."""

    def __init__(self, message: str, *, unsealed: bool) -> None:
        super().__init__(message)
        self.unsealed = unsealed


@dataclass(frozen=True)
class Seal:
    """Seals and opens values of one use (one derived key) of one topology's secret.

    Attributes:
        key: the derived key (left out of ``repr``).
        topology: the topology whose secret it comes from, for messages.
    """

    key: bytes = field(repr=False)
    topology: str

    def seal(self, context: bytes, payload: bytes) -> bytes:
        """``payload`` sealed for ``context`` (what it is: a node path, a checkpoint)."""
        return MAGIC + self._mac(context, payload) + payload

    def open(self, context: bytes, data: bytes) -> bytes:
        """The payload of ``data``, sealed for ``context`` with this key.

        Raises:
            SealBroken: ``data`` carries no seal, or its MAC does not match (any byte of the
                payload or the MAC changed, another context, another key).
        """
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + MAC_BYTES:
            raise SealBroken(
                "it carries no MAC (written without the topology's key)", unsealed=True
            )
        mac = data[len(MAGIC) : len(MAGIC) + MAC_BYTES]
        payload = data[len(MAGIC) + MAC_BYTES :]
        if not hmac.compare_digest(mac, self._mac(context, payload)):
            raise SealBroken(
                "its MAC does not match (tampered with, or sealed for another node or topology)",
                unsealed=False,
            )
        return payload

    def _mac(self, context: bytes, payload: bytes) -> bytes:
        signed = hmac.new(self.key, MAGIC, hashlib.sha256)
        signed.update(struct.pack(">I", len(context)))
        signed.update(context)
        signed.update(payload)
        return signed.digest()


def unverified_payload(data: bytes) -> bytes:
    """The payload of ``data`` without checking its MAC (``data`` itself when unsealed): for
    describing a value, never for anything that unpickles it.

    >>> unverified_payload(b"plain"), unverified_payload(MAGIC + bytes(MAC_BYTES) + b"x")
    (b'plain', b'x')
    """
    if data.startswith(MAGIC) and len(data) >= len(MAGIC) + MAC_BYTES:
        return data[len(MAGIC) + MAC_BYTES :]
    return data


STATE_LABEL = b"heron state v1"
"""The `TopologyKeys.derive` label of the key that seals a topology's state nodes."""

ZOOKEEPER_LABEL = b"heron zookeeper acl v1"
"""The `TopologyKeys.derive` label of the password of a topology's ZooKeeper digest identity."""


@dataclass(frozen=True)
class StateKey:
    """What a holder of a topology's key pair uses on that topology's state nodes: the seal of
    their bytes, and the ZooKeeper digest identity (user ``heron-topology-<name>``, password
    derived from the secret) that the ACL of each node it creates admits.

    Attributes:
        topology: the topology's name.
        seal: seals and opens its nodes (a key derived with `STATE_LABEL`).
        digest_password: its ZooKeeper digest password (left out of ``repr``).
    """

    topology: str
    seal: Seal
    digest_password: str = field(repr=False)

    @property
    def digest_user(self) -> str:
        """The ZooKeeper digest user of the topology: ``heron-topology-<name>``."""
        return f"heron-topology-{self.topology}"

    @classmethod
    def of(cls, topology: str, keys: TopologyKeys) -> StateKey:
        """The state key of ``topology``, whose key pair is ``keys``.

        >>> from heron_core.network import TopologyKeys
        >>> key = StateKey.of("wc", TopologyKeys(b"p" * 40, b"s" * 40))
        >>> key.digest_user, len(key.digest_password), key.seal == StateKey.of(
        ...     "wc", TopologyKeys(b"p" * 40, b"s" * 40)).seal
        ('heron-topology-wc', 64, True)
        """
        return cls(
            topology,
            Seal(keys.derive(STATE_LABEL), topology),
            keys.derive(ZOOKEEPER_LABEL).hex(),
        )

    @classmethod
    def load(cls, topology: str, working_dir: Path) -> StateKey:
        """The state key of ``topology`` from its key pair in ``working_dir/keys`` (W).

        Raises:
            ConfigurationError: naming the topology and the directory: the key pair is
                missing (this host or heron home did not submit it), unreadable, or readable
                by others.
        """
        from heron_core.network import KEYS_DIR, TopologyKeys  # zmq.auth: loaded on first use

        try:
            keys = TopologyKeys.load(Path(working_dir) / KEYS_DIR)
        except ConfigurationError as exc:
            raise ConfigurationError(
                f"topology {topology!r}: its state cannot be authenticated without its key "
                f"pair: {exc}"
            ) from exc
        return cls.of(topology, keys)
