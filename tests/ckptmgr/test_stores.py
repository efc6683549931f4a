"""State stores: the conformance suite for ``localfs``, its specifics, the plug-in loader, and
the checkpoint manager thread in front of a store."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from heron_core.ckptmgr import (
    CheckpointManager,
    Saved,
    StateStore,
    check_store,
    create_state_store,
)
from heron_core.ckptmgr.localfs import ROOT_KEY, LocalFileSystemStore
from heron_core.errors import ConfigurationError
from heron_core.statemgr import Seal
from heron_core.testing.store_conformance import (
    CHECKS,
    check_failed_save_is_invisible,
    checkpoint_id,
)

C1, C2, C3 = checkpoint_id(1), checkpoint_id(2), checkpoint_id(3)
SEAL = Seal(b"k" * 32, "wc")


def _config(root: Path) -> dict[str, Any]:
    return {
        "heron.statefulstorage.classname": "localfs",
        "heron.statefulstorage.localfs.root.path": str(root),
    }


# --- conformance --------------------------------------------------------------------------------
@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_localfs_conformance(check: Any, tmp_path: Path) -> None:
    check(_config(tmp_path), "wc")


@pytest.mark.parametrize("stage", ["fsync", "replace"])
def test_localfs_failed_save_is_invisible(
    stage: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails after the data went out (fsync) or at the rename leaves no visible
    checkpoint and no temporary file behind."""

    def broken(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    @contextlib.contextmanager
    def failing() -> Iterator[None]:
        with monkeypatch.context() as patch:
            patch.setattr(os, stage, broken)
            yield

    check_failed_save_is_invisible(_config(tmp_path), "wc", failing)
    assert sorted(os.listdir(tmp_path / "wc" / "7")) == [C1, C2]


# --- localfs specifics ----------------------------------------------------------------------------
def test_localfs_layout_and_default_root_under_heron_home(tmp_path: Path) -> None:
    store = create_state_store({"heron.directory.home": str(tmp_path / "home")}, "wc")
    assert isinstance(store, LocalFileSystemStore)
    store.save(C1, 3, b"s")
    assert (tmp_path / "home" / "checkpoints" / "wc" / "3" / C1).read_bytes() == b"s"


def test_localfs_default_root_without_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    store = create_state_store({}, "wc")
    assert isinstance(store, LocalFileSystemStore)
    assert store.root == tmp_path / ".herondata" / "checkpoints" / "wc"


def test_localfs_files_and_directories_are_owner_only(tmp_path: Path) -> None:
    """State is user data: the topology's and each task's directory are 0700, files 0600
    (whatever the umask), so other users of a shared machine or mount cannot read it."""
    old_umask = os.umask(0o022)
    try:
        store = LocalFileSystemStore(_config(tmp_path / "root"), "wc")
        store.save(C1, 3, b"secret")
    finally:
        os.umask(old_umask)
    for path in (tmp_path / "root" / "wc", tmp_path / "root" / "wc" / "3"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    assert stat.S_IMODE((tmp_path / "root" / "wc" / "3" / C1).stat().st_mode) == 0o600


def test_localfs_dispose_removes_leftover_temporaries(tmp_path: Path) -> None:
    """A stream manager killed mid-write leaves a temporary file: never loaded, and deleted by
    the next dispose."""
    store = LocalFileSystemStore(_config(tmp_path), "wc")
    store.save(C2, 3, b"s")
    (tmp_path / "wc" / "3" / ".partial-abc").write_bytes(b"half")
    with pytest.raises(ValueError, match="cannot name a file"):
        store.load(".partial-abc", 3)
    store.dispose([3], C2)
    assert os.listdir(tmp_path / "wc" / "3") == [C2]


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "/abs"])
def test_localfs_bad_topology_name_is_a_configuration_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigurationError, match=f"topology name {name!r} cannot name a directory"):
        LocalFileSystemStore(_config(tmp_path), name)


@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "a/b", ".partial-1"])
def test_localfs_bad_checkpoint_id_is_a_clear_error(tmp_path: Path, bad: str) -> None:
    """An id that cannot be a file name says so, naming topology, task and id, and creates
    nothing."""
    store = LocalFileSystemStore(_config(tmp_path), "wc")
    expected = f"topology 'wc', task 3: checkpoint id {bad!r} cannot name a file"
    with pytest.raises(ValueError) as saving:
        store.save(bad, 3, b"s")
    with pytest.raises(ValueError) as loading:
        store.load(bad, 3)
    assert str(saving.value) == str(loading.value) == expected
    assert not (tmp_path / "wc").exists()


# --- the plug-in loader ---------------------------------------------------------------------------
def test_create_state_store_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match=r"unknown state store 'hdfs'; known: localfs"):
        create_state_store({"heron.statefulstorage.classname": "hdfs"}, "wc")


def test_create_state_store_refuses_a_class_that_is_not_a_store() -> None:
    spec = "heron_core.ckptmgr:CheckpointManager"
    with pytest.raises(ConfigurationError, match=r"is not a subclass of StateStore"):
        create_state_store({"heron.statefulstorage.classname": spec}, "wc")


def test_create_state_store_path_that_does_not_import() -> None:
    with pytest.raises(ConfigurationError, match="no_such_module"):
        create_state_store({"heron.statefulstorage.classname": "no_such_module:Store"}, "wc")


def test_create_state_store_by_path_and_instance(tmp_path: Path) -> None:
    config = _config(tmp_path)
    config["heron.statefulstorage.classname"] = "heron_core.ckptmgr.localfs:LocalFileSystemStore"
    store = create_state_store(config, "wc")
    assert isinstance(store, LocalFileSystemStore) and store.topology_name == "wc"
    instance = MemoryStore({}, "wc")
    assert create_state_store({"heron.statefulstorage.classname": instance}, "wc") is instance


# --- the checkpoint manager -----------------------------------------------------------------------
class MemoryStore(StateStore):
    """Records every call with the thread it came from; ``fail_tasks`` saves raise OSError;
    ``gate``, when set, is waited on by every save."""

    def __init__(self, config: Any, topology_name: str) -> None:
        super().__init__(config, topology_name)
        self.data: dict[tuple[str, int], bytes] = {}
        self.calls: list[tuple[str, str, Any]] = []
        self.fail_tasks: set[int] = set()
        self.gate: threading.Event | None = None
        self.closed = False

    def save(self, checkpoint_id: str, task_id: int, data: bytes) -> None:
        if self.gate is not None:
            assert self.gate.wait(30), "the test never opened the gate"
        self.calls.append(("save", threading.current_thread().name, (checkpoint_id, task_id)))
        if task_id in self.fail_tasks:
            raise OSError(5, "Input/output error")
        self.data[checkpoint_id, task_id] = data

    def load(self, checkpoint_id: str, task_id: int) -> bytes | None:
        self.calls.append(("load", threading.current_thread().name, (checkpoint_id, task_id)))
        return self.data.get((checkpoint_id, task_id))

    def dispose(self, task_ids: Iterable[int], oldest_kept: str) -> None:
        tasks = set(task_ids)
        self.calls.append(
            ("dispose", threading.current_thread().name, (sorted(tasks), oldest_kept))
        )
        if -1 in tasks:
            raise OSError(13, "Permission denied")
        for key in [
            k for k in self.data if k[1] in tasks and (not oldest_kept or k[0] < oldest_kept)
        ]:
            del self.data[key]

    def close(self) -> None:
        self.calls.append(("close", threading.current_thread().name, None))
        self.closed = True


def test_manager_saves_in_order_on_its_thread_and_wakes_its_owner() -> None:
    store = MemoryStore({}, "wc")
    woken: list[int] = []
    manager = CheckpointManager(store, SEAL, wake=lambda: woken.append(len(manager.done)))
    for ckpt, task in [(C1, 1), (C1, 2), (C2, 1)]:
        manager.save(ckpt, task, f"{ckpt}/{task}".encode())
    manager.close()
    assert store.calls == [
        ("save", "ckptmgr", (C1, 1)),
        ("save", "ckptmgr", (C1, 2)),
        ("save", "ckptmgr", (C2, 1)),
        ("close", "MainThread", None),
    ]
    assert list(manager.done) == [Saved(C1, 1), Saved(C1, 2), Saved(C2, 1)]
    assert woken == [1, 2, 3]  # each wake comes after its outcome is in done
    assert manager.load(C2, 1) == f"{C2}/1".encode()


def test_manager_a_failing_store_gives_a_saved_error_and_the_thread_goes_on() -> None:
    store = MemoryStore({}, "wc")
    store.fail_tasks = {2}
    manager = CheckpointManager(store, SEAL)
    manager.save(C1, 2, b"x")
    manager.dispose([-1], C1)  # a failing dispose is logged, and the thread goes on too
    manager.save(C1, 3, b"y")
    manager.close()
    assert list(manager.done) == [
        Saved(C1, 2, "OSError: [Errno 5] Input/output error"),
        Saved(C1, 3),
    ]
    assert list(store.data) == [(C1, 3)]
    assert manager.load(C1, 3) == b"y"


def test_manager_dispose_runs_after_the_saves_queued_before_it() -> None:
    store = MemoryStore({}, "wc")
    store.gate = threading.Event()
    manager = CheckpointManager(store, SEAL)
    manager.save(C1, 1, b"1")
    manager.save(C2, 1, b"2")
    manager.dispose([1], C2)
    manager.save(C3, 1, b"3")
    store.gate.set()
    manager.close()
    assert [(call[0], call[2]) for call in store.calls] == [
        ("save", (C1, 1)),
        ("save", (C2, 1)),
        ("dispose", ([1], C2)),
        ("save", (C3, 1)),
        ("close", None),
    ]
    assert sorted(store.data) == [(C2, 1), (C3, 1)]


def test_manager_close_waits_for_queued_work_then_closes_the_store() -> None:
    store = MemoryStore({}, "wc")
    store.gate = threading.Event()
    manager = CheckpointManager(store, SEAL)
    for task in (1, 2, 3):
        manager.save(C1, task, b"s")
    closer = threading.Thread(target=manager.close)
    closer.start()
    closer.join(0.05)
    assert closer.is_alive() and not store.closed and not manager.done
    store.gate.set()
    closer.join(30)
    assert not closer.is_alive()
    assert store.closed and store.calls[-1][0] == "close"
    assert [saved.task_id for saved in manager.done] == [1, 2, 3]


def test_manager_close_gives_up_on_a_store_that_hangs(caplog: pytest.LogCaptureFixture) -> None:
    """A store call that never returns (a hung mount) cannot hold the stream manager's exit:
    close returns after its timeout, saying so, without closing the store under the call."""
    store = MemoryStore({}, "wc")
    store.gate = threading.Event()
    manager = CheckpointManager(store, SEAL)
    manager.save(C1, 1, b"s")
    closer = threading.Thread(target=manager.close, kwargs={"timeout_s": 0.05})
    closer.start()
    closer.join(30)
    try:
        assert not closer.is_alive(), "close hung behind the store call"
        assert not store.closed
        assert "did not finish its queued work" in caplog.text
    finally:
        store.gate.set()


def test_submit_checks_the_store_of_an_effectively_once_topology() -> None:
    """`check_store` (run by the client's config): the store must load, and past one machine
    localfs needs a directory every host mounts; other modes are not checked."""
    eo = {"topology.reliability.mode": "EFFECTIVELY_ONCE", "topology.name": "wc"}
    check_store({**eo, "heron.class.scheduler": "local"})
    check_store({**eo, "heron.class.scheduler": "spark", ROOT_KEY: "/mnt/shared/ckpt"})
    check_store({"heron.class.scheduler": "spark", "heron.statefulstorage.classname": "nope"})
    with pytest.raises(ConfigurationError, match="unknown state store 'nope'"):
        check_store({**eo, "heron.statefulstorage.classname": "nope"})
    with pytest.raises(
        ConfigurationError, match=f"topology 'wc' runs EFFECTIVELY_ONCE.*{ROOT_KEY}"
    ):
        check_store({**eo, "heron.class.scheduler": "spark"})
