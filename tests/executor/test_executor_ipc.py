"""A container's ipc directory: made fresh and private (mode 0700, an unpredictable name),
recorded in the working directory, removed at exit, and removed by the next executor of the
container after a kill -9; whatever a record or a predictable path names that is not a
directory this user made (a symlink, a directory of another mode or owner, one outside the
ipc base) is never followed nor removed.

Attacker: another user of the host, who can create entries in ``/tmp``. The old scheme
(``/tmp/heron-<hash of W>-<container>``, removed then re-created) let them guess the name,
plant a symlink or a directory of theirs there first."""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from executor_support import (  # noqa: F401 - fake_container_fixture is a fixture
    FAST,
    FakeContainer,
    alive,
    fake_container_fixture,
    wait_until,
    write_topology,
)

from heron_core.executor import create_ipc_dir, ipc_dir, ipc_dirs, remove_ipc_dir

NOBODY = 65534


@pytest.fixture(name="victim")
def victim_fixture() -> Iterator[Path]:
    """A directory with a file that must survive: what a planted symlink points at. It sits
    in the ipc base, where the attacker's entries would be."""
    path = Path(tempfile.mkdtemp(prefix="victim-", dir=_base()))
    (path / "precious").write_text("keep me")
    yield path
    for entry in path.iterdir():
        entry.unlink()
    path.rmdir()


def _base() -> Path:
    """The ipc base directory as the executor picks it: where a fresh directory is made."""
    with tempfile.TemporaryDirectory() as w:
        made = create_ipc_dir(Path(w), 9)
        remove_ipc_dir(Path(w), 9)
        return made.parent


def old_predictable_path(working_dir: Path, container: int) -> Path:
    """Where the old scheme put the directory: what an attacker could compute from W."""
    digest = hashlib.sha256(str(working_dir.resolve()).encode()).hexdigest()[:12]
    return _base() / f"heron-{digest}-{container}"


def test_a_fresh_directory_is_private_unpredictable_and_recorded(tmp_path: Path) -> None:
    first = create_ipc_dir(tmp_path, 1)
    try:
        st = first.lstat()
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == os.getuid()
        assert len(f"ipc://{first}/task-12345") < 100  # zmq's limit on ipc paths
        assert (tmp_path / "ipc-1.path").read_text() == str(first)
        assert ipc_dir(tmp_path, 1) == first and ipc_dirs(tmp_path) == [first]
        other = create_ipc_dir(tmp_path, 2)
        assert other != first and old_predictable_path(tmp_path, 1) != first
        assert ipc_dirs(tmp_path) == [first, other]
    finally:
        remove_ipc_dir(tmp_path, 1)
        remove_ipc_dir(tmp_path, 2)
    assert not first.exists() and not other.exists()
    assert ipc_dirs(tmp_path) == [] and list(tmp_path.iterdir()) == []


def test_a_symlink_planted_at_the_old_path_is_neither_used_nor_followed(
    tmp_path: Path, victim: Path
) -> None:
    planted = old_predictable_path(tmp_path, 1)
    planted.symlink_to(victim)
    try:
        made = create_ipc_dir(tmp_path, 1)
        assert made != planted and made.resolve() != victim
        remove_ipc_dir(tmp_path, 1)
        assert planted.is_symlink() and (victim / "precious").read_text() == "keep me"
    finally:
        planted.unlink()


def test_a_record_naming_a_symlink_removes_neither_it_nor_its_target(
    tmp_path: Path, victim: Path
) -> None:
    link = _base() / f"heron-link-{os.getpid()}"
    link.symlink_to(victim)
    try:
        (tmp_path / "ipc-1.path").write_text(str(link))
        assert ipc_dir(tmp_path, 1) is None and ipc_dirs(tmp_path) == []
        fresh = create_ipc_dir(tmp_path, 1)  # removes the recorded one first, if it is ours
        assert link.is_symlink() and (victim / "precious").read_text() == "keep me"
        assert fresh != link
        remove_ipc_dir(tmp_path, 1)
        assert not fresh.exists()
    finally:
        link.unlink()


@pytest.mark.parametrize("foreign", ["mode", "owner", "outside the base", "name"])
def test_a_record_naming_a_directory_not_made_by_the_executor_leaves_it(
    tmp_path: Path, foreign: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path if foreign == "outside the base" else _base()
    prefix = "other-" if foreign == "name" else "heron-"
    planted = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    (planted / "socket-of-someone").write_text("")
    if foreign == "mode":
        planted.chmod(0o755)
    if foreign == "owner" and os.getuid() == 0:
        os.chown(planted, NOBODY, NOBODY)
    elif foreign == "owner":  # without root: the executor runs as another user than the owner
        monkeypatch.setattr(os, "getuid", lambda: NOBODY)
    try:
        (tmp_path / "ipc-3.path").write_text(str(planted))
        assert ipc_dirs(tmp_path) == []
        remove_ipc_dir(tmp_path, 3)
        assert (planted / "socket-of-someone").exists()
        assert not (tmp_path / "ipc-3.path").exists()
    finally:
        monkeypatch.undo()
        (planted / "socket-of-someone").unlink()
        planted.rmdir()


def test_a_control_the_same_directory_of_ours_is_removed(tmp_path: Path) -> None:
    planted = Path(tempfile.mkdtemp(prefix="heron-", dir=_base()))
    (planted / "task-1").write_text("")
    (tmp_path / "ipc-3.path").write_text(str(planted))
    assert ipc_dirs(tmp_path) == [planted]
    remove_ipc_dir(tmp_path, 3)
    assert not planted.exists()


@pytest.mark.processes
def test_after_a_kill_9_the_next_start_removes_the_stale_directory(
    fake_container: FakeContainer,
) -> None:
    write_topology(fake_container, **FAST)
    root = fake_container.root
    first = fake_container.executor(2)
    wait_until(lambda: fake_container.starts("container_2_word_2"), "container 2's processes")
    stale = ipc_dir(root, 2)
    assert stale is not None and stale.is_dir()
    first.send_signal(signal.SIGKILL)
    first.wait()
    wait_until(lambda: not any(alive(p) for p in fake_container.fake_pids()), "orphans to die")
    assert stale.is_dir() and ipc_dirs(root) == [stale]  # nobody could clean up

    second = fake_container.executor(2)
    wait_until(lambda: len(fake_container.starts("container_2_word_2")) == 2, "the successor")
    fresh = ipc_dir(root, 2)
    assert fresh is not None and fresh != stale
    assert not stale.exists()
    argv = psutil.Process(fake_container.starts("stmgr-2")[-1]).cmdline()
    assert f"ipc://{fresh}/" in argv
    second.send_signal(signal.SIGTERM)
    assert second.wait(timeout=60) == 0
    assert not fresh.exists() and ipc_dirs(root) == []
    assert not (root / "ipc-2.path").exists()
    assert not list(_base().glob(f"{fresh.name}*"))
