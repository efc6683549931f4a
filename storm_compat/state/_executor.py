"""``StatefulBoltAdapter``: runs a Storm ``IStatefulBolt`` as a kernel bolt that is a
`heron_core.api.StatefulComponent` (Storm's ``StatefulBoltExecutor`` on Heron's checkpoints).

The kernel's checkpointed object is the `heron_core.api.State` the instance hands to
``init_state``: before each checkpoint the adapter writes the bolt's committed key/values
into it (one entry each), and a rollback reads them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from heron_core.api import State as KernelState
from heron_core.api import StatefulComponent, Stream
from heron_core.api import TopologyContext as NativeContext
from heron_core.api import Tuple as NativeTuple
from heron_core.config import setting
from heron_core.errors import ConfigurationError
from storm_compat.state._state import InMemoryKeyValueState
from storm_compat.task import TopologyContext
from storm_compat.task._context import shut_shared_executor
from storm_compat.topology._adapters import TICK_FIELDS, _setup, _StormBolt, _where
from storm_compat.topology.base._stateful import IStatefulBolt
from storm_compat.tuple import Tuple

__all__ = ["StatefulBoltAdapter", "checkpoint_txid"]

MODE = "topology.reliability.mode"


def checkpoint_txid(checkpoint_id: str) -> int:
    """Storm's ``txid`` of the kernel's checkpoint ``checkpoint_id``: its digits as one
    number (ids are ``<13-digit start ms>-<6-digit sequence>``, so txids grow as ids sort).

    >>> checkpoint_txid("1700000000000-000042")
    1700000000000000042

    Raises:
        ValueError: ``checkpoint_id`` is not digits and dashes.
    """
    digits = checkpoint_id.replace("-", "") if isinstance(checkpoint_id, str) else ""
    if not digits.isdigit() or not digits.isascii():
        raise ValueError(
            f"a checkpoint id is <start ms>-<sequence> (digits), got {checkpoint_id!r}"
        )
    return int(digits)


def _entries(state: KernelState) -> list[tuple[Any, Any]]:
    """The key/values a checkpoint's state holds."""
    return [(key, state.get(key)) for _, key in state.enumerate()]


class StatefulBoltAdapter(_StormBolt, StatefulComponent):
    """Runs a Storm stateful bolt under the instance's contract for stateful components:
    ``init_state`` (the checkpoint's state) -> ``initialize`` (``prepare``, then
    ``initState`` with the bolt's `InMemoryKeyValueState`) -> ``process`` (``execute``) ->
    ``pre_save`` (``prePrepare``, prepare, ``preCommit``, commit) -> ``restart_from_state``
    (``preRollback``, the state's contents replaced in place) -> ``close`` (``cleanup``)."""

    def __init__(self, bolt: IStatefulBolt[Any], outputs: Sequence[Stream]) -> None:
        super().__init__(outputs)
        self.bolt = bolt

    def init_state(self, state: KernelState) -> None:
        """Keep the checkpoint's state; the bolt's key/value state starts from its entries."""
        self._checkpoint = state
        self._state: InMemoryKeyValueState[Any, Any] = InMemoryKeyValueState()
        self._state._restore(_entries(state))

    def initialize(self, config: dict[str, Any], context: NativeContext) -> None:
        """``prepare``, then ``initState`` with the key/value state.

        Raises:
            ConfigurationError: ``init_state`` was not called first (the topology does not
                run ``EFFECTIVELY_ONCE``).
            UserCodeError: ``prepare`` or ``initState`` raised.
        """
        where = self._attach(config, context)
        if not hasattr(self, "_state"):
            raise ConfigurationError(
                f"{where}: {type(self.bolt).__qualname__} is a stateful bolt, whose state is "
                f"kept by checkpoints, which run only in {MODE!r} EFFECTIVELY_ONCE; this "
                f"topology runs {setting(config, MODE)!r}"
            )
        self._where = where
        _setup(where, self.bolt, "prepare", config, TopologyContext(context), self._out)
        _setup(where, self.bolt, "initState", self._state)
        self._processor(self.bolt.execute, None)

    def process_tick(self, tup: NativeTuple) -> None:
        self.bolt.execute(Tuple(tup, TICK_FIELDS))

    def pre_save(self, checkpoint_id: str) -> None:
        """Storm's prepare and commit of transaction ``checkpoint_txid(checkpoint_id)``, then
        the committed key/values written into the checkpoint's state (replacing its entries).

        Raises:
            UserCodeError: ``prePrepare`` or ``preCommit`` raised.
        """
        txid = checkpoint_txid(checkpoint_id)
        _setup(self._where, self.bolt, "prePrepare", txid)
        self._state.prepareCommit(txid)
        _setup(self._where, self.bolt, "preCommit", txid)
        self._state.commit(txid)
        checkpoint = self._checkpoint
        checkpoint.clear()
        for key, value in self._state._committed_items().items():
            checkpoint.put(key, value)

    def restart_from_state(self, state: KernelState, config: Any, context: Any) -> None:
        """After a rollback: ``preRollback``, then the key/value state the bolt holds gets
        the checkpoint's entries (the same object; no ``prepare``/``initState`` again).
        ``state`` is the object saved at the next checkpoint.

        Raises:
            UserCodeError: ``preRollback`` raised.
        """
        _setup(_where(context), self.bolt, "preRollback")
        self._checkpoint = state
        self._state._restore(_entries(state))

    def close(self) -> None:
        try:
            self.bolt.cleanup()
        finally:
            shut_shared_executor()
