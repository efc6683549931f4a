"""Checks every state store (``heron_core.ckptmgr.StateStore``) must pass: for the built-ins and
third-party plug-ins.

Each ``check_*`` function takes a resolved config and a topology name, builds its stores with
:func:`heron_core.ckptmgr.create_state_store` (so ``heron.statefulstorage.classname`` names the
plug-in), expects an empty store (a fresh root per check), and raises ``AssertionError``
naming the checkpoint and task at fault. :data:`CHECKS` lists them all but
:func:`check_failed_save_is_invisible`, which needs a way to make the store's writes fail
part-way that only the plug-in's own tests know (its ``failing`` argument). A plug-in's test
suite can read:

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as root:
...     check_round_trip({"heron.statefulstorage.localfs.root.path": root}, "wc")
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from heron_core.ckptmgr import StateStore, create_state_store

__all__ = [
    "CHECKS",
    "check_dispose_everything",
    "check_dispose_keeps_oldest_kept_and_newer",
    "check_failed_save_is_invisible",
    "check_missing_is_none",
    "check_overwrite",
    "check_round_trip",
    "check_sizes",
    "check_tasks_independent",
    "check_topologies_independent",
    "checkpoint_id",
]

Check = Callable[[Mapping[str, Any], str], None]


def checkpoint_id(sequence: int, start_ms: int = 1_700_000_000_000) -> str:
    """A checkpoint id as the topology manager makes them (they sort in creation order).

    >>> checkpoint_id(2)
    '1700000000000-000002'
    >>> checkpoint_id(9) < checkpoint_id(10) < checkpoint_id(1, start_ms=1_700_000_000_001)
    True
    """
    return f"{start_ms:013d}-{sequence:06d}"


@contextlib.contextmanager
def _store(config: Mapping[str, Any], topology_name: str) -> Iterator[StateStore]:
    store = create_state_store(config, topology_name)
    try:
        yield store
    finally:
        store.close()


def _expect(store: StateStore, ckpt: str, task: int, expected: bytes | None, why: str) -> None:
    got = store.load(ckpt, task)
    if got != expected:
        shown = got if got is None or len(got) <= 40 else f"{len(got)} bytes"
        wanted = expected if expected is None or len(expected) <= 40 else f"{len(expected)} bytes"
        raise AssertionError(
            f"{type(store).__name__}: checkpoint {ckpt} of task {task}: {why}: "
            f"expected {wanted!r}, got {shown!r}"
        )


def check_round_trip(config: Mapping[str, Any], topology_name: str) -> None:
    """What is saved loads back unchanged, also from a second store over the same config (a
    stream manager restarted, or the one of another container)."""
    with _store(config, topology_name) as store:
        store.save(checkpoint_id(1), 3, b"state of task 3")
        _expect(store, checkpoint_id(1), 3, b"state of task 3", "saved then loaded")
    with _store(config, topology_name) as again:
        _expect(again, checkpoint_id(1), 3, b"state of task 3", "loaded by a new store")


def check_missing_is_none(config: Mapping[str, Any], topology_name: str) -> None:
    """A checkpoint never saved, or a task without state in a saved checkpoint, loads as None
    (never as empty bytes, never an error)."""
    with _store(config, topology_name) as store:
        _expect(store, checkpoint_id(1), 3, None, "nothing saved yet")
        store.save(checkpoint_id(1), 3, b"s")
        _expect(store, checkpoint_id(2), 3, None, "another checkpoint of the task")
        _expect(store, checkpoint_id(1), 4, None, "another task of the checkpoint")


def check_overwrite(config: Mapping[str, Any], topology_name: str) -> None:
    """Saving a checkpoint's state of a task again replaces it (a checkpoint retried after a
    rollback reuses no id, but a store must not keep the first one if it does)."""
    with _store(config, topology_name) as store:
        store.save(checkpoint_id(1), 3, b"first, and longer than the second")
        store.save(checkpoint_id(1), 3, b"second")
        _expect(store, checkpoint_id(1), 3, b"second", "saved twice")


def check_sizes(config: Mapping[str, Any], topology_name: str) -> None:
    """Bytes of any size and value round trip: empty state is ``b""`` (not None), every byte
    value, and a state past 1 MiB."""
    samples = {
        1: b"",
        2: b"\x00",
        3: bytes(range(256)) * 3,
        4: bytes((i * 7919) % 251 for i in range((1 << 20) + 3)),
    }
    with _store(config, topology_name) as store:
        for task, data in samples.items():
            store.save(checkpoint_id(1), task, data)
        for task, data in samples.items():
            _expect(store, checkpoint_id(1), task, data, f"a state of {len(data)} bytes")


def check_tasks_independent(config: Mapping[str, Any], topology_name: str) -> None:
    """Each task's state of a checkpoint is its own: saving or disposing one task's leaves the
    others' as they were."""
    with _store(config, topology_name) as store:
        for task in (1, 2, 10):
            store.save(checkpoint_id(1), task, f"task {task}".encode())
        store.save(checkpoint_id(1), 2, b"task 2 again")
        store.dispose([10], "")
        _expect(store, checkpoint_id(1), 1, b"task 1", "another task was saved")
        _expect(store, checkpoint_id(1), 2, b"task 2 again", "saved again")
        _expect(store, checkpoint_id(1), 10, None, "disposed")


def check_topologies_independent(config: Mapping[str, Any], topology_name: str) -> None:
    """Two topologies on the same config do not see or delete each other's state."""
    other = f"{topology_name}-other"
    with _store(config, topology_name) as store, _store(config, other) as second:
        store.save(checkpoint_id(1), 1, b"mine")
        second.save(checkpoint_id(1), 1, b"theirs")
        _expect(store, checkpoint_id(1), 1, b"mine", f"topology {other!r} saved the same")
        second.dispose([1], "")
        _expect(store, checkpoint_id(1), 1, b"mine", f"topology {other!r} disposed its own")
        _expect(second, checkpoint_id(1), 1, None, "disposed")


def check_dispose_keeps_oldest_kept_and_newer(
    config: Mapping[str, Any], topology_name: str
) -> None:
    """``dispose(tasks, oldest_kept)`` deletes those tasks' checkpoints older than
    ``oldest_kept``, keeps it and every newer one (also when ``oldest_kept`` itself was never
    stored there), leaves other tasks alone, and is a no-op for a task without state."""
    ids = [checkpoint_id(n) for n in (1, 2, 3, 4)]
    with _store(config, topology_name) as store:
        for ckpt in ids:
            store.save(ckpt, 1, ckpt.encode())
            if ckpt != ids[2]:
                store.save(ckpt, 2, ckpt.encode())  # task 2 has no state of ids[2]
        store.dispose([1, 99], ids[2])
        for ckpt in ids:
            kept = ckpt >= ids[2]
            why = f"{'not ' if kept else ''}older than {ids[2]}, {'kept' if kept else 'disposed'}"
            _expect(store, ckpt, 1, ckpt.encode() if kept else None, why)
        for ckpt in ids:
            _expect(store, ckpt, 2, None if ckpt == ids[2] else ckpt.encode(), "another task's")
        store.dispose([2], ids[2])
        for ckpt in (ids[0], ids[1], ids[3]):
            expected = ckpt.encode() if ckpt > ids[2] else None
            _expect(store, ckpt, 2, expected, f"disposed older than {ids[2]}, never stored")
        store.dispose([1], ids[2])  # again: nothing more to delete
        _expect(store, ids[2], 1, ids[2].encode(), "disposed twice")


def check_dispose_everything(config: Mapping[str, Any], topology_name: str) -> None:
    """``dispose(tasks, "")`` deletes every checkpoint of those tasks; they can save again."""
    with _store(config, topology_name) as store:
        for n in (1, 2):
            store.save(checkpoint_id(n), 5, b"x")
        store.dispose([5], "")
        for n in (1, 2):
            _expect(store, checkpoint_id(n), 5, None, "disposed with ''")
        store.save(checkpoint_id(3), 5, b"after")
        _expect(store, checkpoint_id(3), 5, b"after", "saved after a dispose")


def check_failed_save_is_invisible(
    config: Mapping[str, Any],
    topology_name: str,
    failing: Callable[[], contextlib.AbstractContextManager[object]],
) -> None:
    """A save that fails part-way raises ``OSError`` and leaves nothing a load can see: a new
    checkpoint stays absent, an overwritten one keeps its former state whole; saves work again
    afterwards.

    Args:
        failing: a context manager under which the store's writes fail after they started
            (e.g. a patched ``os.fsync`` for a file store).
    """
    old = b"the state before" * 1000
    with _store(config, topology_name) as store:
        store.save(checkpoint_id(1), 7, old)
        with failing():
            for ckpt in (checkpoint_id(1), checkpoint_id(2)):
                try:
                    store.save(ckpt, 7, b"half written" * 10000)
                except OSError:
                    pass
                else:
                    raise AssertionError(
                        f"{type(store).__name__}: checkpoint {ckpt} of task 7: a failing write "
                        "did not raise OSError"
                    )
        _expect(store, checkpoint_id(1), 7, old, "an overwrite failed")
        _expect(store, checkpoint_id(2), 7, None, "its save failed")
        store.save(checkpoint_id(2), 7, b"now")
        _expect(store, checkpoint_id(2), 7, b"now", "saved after a failed save")


CHECKS: list[Check] = [
    check_round_trip,
    check_missing_is_none,
    check_overwrite,
    check_sizes,
    check_tasks_independent,
    check_topologies_independent,
    check_dispose_keeps_oldest_kept_and_newer,
    check_dispose_everything,
]
"""Every check that needs nothing but a config and a topology name."""
