"""ZooKeeper access control against the real server. With ``heron.statemgr.zookeeper.auth.file``:
every node a manager with the key creates carries one ACL entry for its digest user, so that
clients without that user's password can neither change nor delete them; the conformance
suite with the key set; the errors of a bad credential file, a wrong password, a missing key
and a root others may write under. Without it: a topology's nodes written by a holder of the
topology's key pair admit its derived digest identity to write and anyone to read."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zmq
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NotEmptyError
from kazoo.security import OPEN_ACL_UNSAFE, READ_ACL_UNSAFE, make_digest_acl
from statemgr_auth_support import PASSWORD, write_credential  # type: ignore[import-not-found]

from heron_core.errors import ConfigurationError, StateManagerError
from heron_core.network import TopologyKeys
from heron_core.proto import scheduler_pb2
from heron_core.statemgr import Kind, StateKey, create_state_manager
from heron_core.statemgr._zk_auth import AUTH_FILE_KEY, load_credential
from heron_core.testing.statemgr_conformance import CHECKS, DEADLINE_S, sample_message
from heron_core.testing.zookeeper import ZooKeeperServer


@pytest.fixture
def auth_config(zk_config: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """``zk_config`` with the digest user ``heron`` (its password in an owner-only file)."""
    return {
        **zk_config,
        AUTH_FILE_KEY: write_credential(tmp_path / "zk-auth", f"heron:{PASSWORD}\n"),
    }


def _client(server: ZooKeeperServer, auth: str | None) -> KazooClient:
    client = KazooClient(server.connection_string, auth_data=[("digest", auth)] if auth else None)
    client.start(timeout=DEADLINE_S)
    return client


@pytest.fixture
def strangers(zookeeper_server: ZooKeeperServer) -> Iterator[dict[str, KazooClient]]:
    """Raw clients of the same server: one logged in as nobody, one as another digest user,
    one as the same user with a wrong password."""
    clients = {
        "anonymous": _client(zookeeper_server, None),
        "another user": _client(zookeeper_server, f"intruder:{PASSWORD}"),
        "a wrong password": _client(zookeeper_server, "heron:guessed"),
    }
    yield clients
    for client in clients.values():
        client.stop()
        client.close()


def _tree(client: KazooClient, top: str) -> list[str]:
    """Every node under ``top`` (itself included), parents first."""
    nodes = [top]
    for child in sorted(client.get_children(top)):
        nodes += _tree(client, f"{top}/{child}")
    return nodes


@pytest.mark.zookeeper
@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_zookeeper_conformance_with_auth(check: Any, auth_config: dict[str, Any]) -> None:
    check(auth_config, "test")


@pytest.mark.zookeeper
def test_nodes_of_every_kind_admit_only_the_configured_user(
    auth_config: dict[str, Any],
    zookeeper_server: ZooKeeperServer,
    strangers: dict[str, KazooClient],
) -> None:
    root = auth_config["heron.statemgr.root.path"]
    credential = load_credential(auth_config)
    assert credential is not None
    owner = _client(zookeeper_server, f"heron:{PASSWORD}")
    try:
        with create_state_manager(auth_config, "test") as sm:
            for kind in Kind:  # topologies, plans, execution state and both ephemeral locations
                getattr(sm, _SETTERS[kind])("wc", sample_message(kind, "wc", 1))
            nodes = _tree(owner, root)
            assert nodes[1:] == sorted(
                [f"{root}/{kind.value}" for kind in Kind]
                + [f"{root}/{kind.value}/wc" for kind in Kind],
            )
            for node in nodes:
                assert owner.get_acls(node)[0] == [credential.acl], node
                assert PASSWORD.encode() not in owner.get(node)[0], node
            for who, client in strangers.items():
                for node in nodes:
                    _refused(who, "read", node, client.get, node)
                    _refused(who, "change", node, client.set, node, b"forged")
                    if node != root:  # ZooKeeper checks a delete against the parent's ACL
                        _refused(who, "delete", node, client.delete, node)
                # The root's parent is not ours: the root stands because it is not empty.
                with pytest.raises(NotEmptyError):
                    client.delete(root)
                # nor forge a topology beside the real one
                _refused(who, "create", "beside", client.create, f"{root}/topologies/forged")
            # Another manager with the same credential (a daemon, the CLI's kill) may change
            # and delete them, the ephemeral ones included.
            with create_state_manager(auth_config, "test") as other:
                other.set_topology("wc", sample_message(Kind.TOPOLOGY, "wc", 2))
                other.delete_scheduler_location("wc")
                other.delete_tmanager_location("wc")
                for kind in Kind:
                    if not kind.ephemeral:
                        getattr(other, _SETTERS[kind].replace("set_", "delete_"))("wc")
            assert sm.get_topology("wc") is None
            assert owner.get_children(f"{root}/topologies") == []
    finally:
        owner.stop()
        owner.close()


def _refused(who: str, action: str, node: str, call: Any, *args: Any, **kwargs: Any) -> None:
    try:
        call(*args, **kwargs)
    except NoAuthError:
        return
    pytest.fail(f"{who} could {action} {node}")


_SETTERS = {
    Kind.TOPOLOGY: "set_topology",
    Kind.PACKING_PLAN: "set_packing_plan",
    Kind.PHYSICAL_PLAN: "set_physical_plan",
    Kind.EXECUTION_STATE: "set_execution_state",
    Kind.TMANAGER_LOCATION: "set_tmanager_location",
    Kind.SCHEDULER_LOCATION: "set_scheduler_location",
    Kind.STATEFUL_CHECKPOINTS: "set_stateful_checkpoints",
}


@pytest.mark.zookeeper
def test_without_the_key_nodes_stay_open_as_before(
    zk_config: dict[str, Any], zookeeper_server: ZooKeeperServer
) -> None:
    anonymous = _client(zookeeper_server, None)
    try:
        with create_state_manager(zk_config, "test") as sm:
            sm.set_topology("wc", sample_message(Kind.TOPOLOGY, "wc", 1))
            node = f"{zk_config['heron.statemgr.root.path']}/topologies/wc"
            assert anonymous.get_acls(node)[0] == OPEN_ACL_UNSAFE
            anonymous.delete(node)
            assert sm.get_topology("wc") is None
    finally:
        anonymous.stop()
        anonymous.close()


@pytest.mark.zookeeper
def test_a_missing_key_or_a_wrong_password_names_the_key_not_a_kazoo_error(
    auth_config: dict[str, Any], tmp_path: Path
) -> None:
    with create_state_manager(auth_config, "test") as sm:
        sm.set_topology("wc", sample_message(Kind.TOPOLOGY, "wc", 1))
        sm.set_scheduler_location("wc", scheduler_pb2.SchedulerLocation(topology_name="wc"))
    root = auth_config["heron.statemgr.root.path"]

    without = {k: v for k, v in auth_config.items() if k != AUTH_FILE_KEY}
    with create_state_manager(without, "test") as sm, pytest.raises(StateManagerError) as refused:
        sm.get_topology("wc")
    assert str(refused.value).startswith(f"zookeeper://{auth_config[_HOSTS]}{root}/topologies/wc")
    assert "logs in as neither its topology" in str(refused.value)
    assert AUTH_FILE_KEY in str(refused.value)

    wrong = write_credential(tmp_path / "wrong", "heron:guessed")
    sm = create_state_manager({**auth_config, AUTH_FILE_KEY: wrong}, "test")
    with pytest.raises(StateManagerError) as refused:
        sm.start()  # its check of the root already fails: the root is not readable
    sm.close()
    message = str(refused.value)
    assert f"digest user 'heron' of {AUTH_FILE_KEY} ({wrong})" in message
    assert "is the password right" in message
    assert "guessed" not in message


_HOSTS = "heron.statemgr.connection.string"


@pytest.mark.zookeeper
def test_a_root_others_may_write_under_is_refused_naming_the_keys(
    auth_config: dict[str, Any], zookeeper_server: ZooKeeperServer
) -> None:
    root = auth_config["heron.statemgr.root.path"]
    anonymous = _client(zookeeper_server, None)
    try:
        anonymous.create(f"{root}/topologies", b"", makepath=True)  # open, as without the key
        with pytest.raises(StateManagerError) as refused:
            create_state_manager(auth_config, "test").start()
    finally:
        anonymous.stop()
        anonymous.close()
    message = str(refused.value)
    assert message.startswith(f"zookeeper://{auth_config[_HOSTS]}{root} already exists with an")
    assert "(world:anyone:cdrwa)" in message
    assert "heron.statemgr.root.path" in message
    assert AUTH_FILE_KEY in message
    assert PASSWORD not in message


@pytest.mark.parametrize(
    ("content", "mode", "says"),
    [
        ("heron:pw\n", 0o644, "group or others may access it (mode 0644); make it owner-only"),
        ("heron:pw\n", 0o640, "(mode 0640)"),
        ("heron\n", 0o600, "found no ':'"),
        ("heron:\n", 0o600, "found an empty password"),
        (":pw\n", 0o600, "found an empty user"),
        ("heron:pw\nsecond:line\n", 0o600, "found more than one line"),
        ("heron:pässword\n", 0o600, "found bytes that are not ASCII"),
        ("heron:p\tw\n", 0o600, "found control characters"),
    ],
)
def test_a_bad_credential_file_names_the_key_and_the_file_not_its_content(
    tmp_path: Path, content: str, mode: int, says: str
) -> None:
    path = write_credential(tmp_path / "zk-auth", content, mode)
    config = {"heron.class.state.manager": "zookeeper", AUTH_FILE_KEY: path}
    with pytest.raises(ConfigurationError) as bad:
        create_state_manager(config, "test")
    message = str(bad.value)
    assert message.startswith(f"{AUTH_FILE_KEY}: {path} ")
    assert says in message
    assert "pw" not in message.replace(path, "").replace("password", "")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("relative/zk-auth", "must be an absolute path (or start with ~)"),
        ("/nonexistent/zk-auth", "cannot read /nonexistent/zk-auth: No such file or directory"),
        (42, "must be the path of a file holding 'user:password', got int 42"),
    ],
)
def test_a_credential_path_that_cannot_work_names_the_key(value: object, says: str) -> None:
    with pytest.raises(ConfigurationError, match=AUTH_FILE_KEY) as bad:
        create_state_manager({"heron.class.state.manager": "zookeeper", AUTH_FILE_KEY: value}, "t")
    assert says in str(bad.value)


def test_a_directory_is_not_a_credential_file(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir(mode=0o700)
    with pytest.raises(ConfigurationError, match="is not a regular file"):
        load_credential({AUTH_FILE_KEY: str(tmp_path / "dir")})


def test_the_password_stays_out_of_repr_and_may_hold_colons(tmp_path: Path) -> None:
    credential = load_credential(
        {AUTH_FILE_KEY: write_credential(tmp_path / "zk-auth", "heron:a:b c\r\n")}
    )
    assert credential is not None
    assert (credential.user, credential.password) == ("heron", "a:b c")
    assert "a:b c" not in repr(credential)
    assert "a:b c" not in credential.describe()


def test_a_connection_string_that_does_not_parse_names_the_key() -> None:
    config = {"heron.class.state.manager": "zookeeper", _HOSTS: "127.0.0.1:notaport"}
    with pytest.raises(ConfigurationError, match=f"{_HOSTS} must be 'host:port,...'.*notaport"):
        create_state_manager(config, "test")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo", 0o600)
    with pytest.raises(ConfigurationError, match="is not a regular file"):
        load_credential({AUTH_FILE_KEY: str(tmp_path / "fifo")})


@pytest.mark.zookeeper
def test_kazoo_never_logs_the_password_even_at_its_lowest_level(
    auth_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    # kazoo logs every request it sends at DEBUG, the login with its password included
    with caplog.at_level(1), create_state_manager(auth_config, "test") as sm:
        sm.set_topology("wc", sample_message(Kind.TOPOLOGY, "wc", 1))
    assert "auth='heron:***'" in caplog.text
    assert PASSWORD not in caplog.text


def _state_key(name: str) -> StateKey:
    return StateKey.of(name, TopologyKeys(*zmq.curve_keypair()))


@pytest.mark.zookeeper
def test_without_the_auth_file_a_topologys_nodes_admit_only_holders_of_its_key(
    zk_config: dict[str, Any], zookeeper_server: ZooKeeperServer
) -> None:
    """Every kind of node a holder of topology "wc"'s key writes carries its digest identity
    (all permissions) and world READ: an anonymous client reads it (the tracker) but cannot
    change it; a client logged in as the derived identity can (the control). Deleting stays
    possible (ZooKeeper checks it against the kind directory, which stays open so that other
    topologies can be created and killed): that denies service, and a node re-created so
    carries no valid MAC. A key added after start logs in too."""
    key = _state_key("wc")
    root = zk_config["heron.statemgr.root.path"]
    anonymous = _client(zookeeper_server, None)
    holder = _client(zookeeper_server, f"{key.digest_user}:{key.digest_password}")
    try:
        with create_state_manager(zk_config, "test") as sm:
            sm.add_key(key)
            for kind in Kind:
                node = f"{root}/{kind.value}/wc"
                put = getattr(sm, f"set_{_SETTER[kind]}")
                put("wc", sample_message(kind, "wc", 1))
                owner = make_digest_acl(key.digest_user, key.digest_password, all=True)
                assert holder.get_acls(node)[0] == [owner, *READ_ACL_UNSAFE], node
                assert anonymous.get(node)[0], f"{node}: not readable by anyone"
                with pytest.raises(NoAuthError):
                    anonymous.set(node, b"tampered")
                holder.set(node, anonymous.get(node)[0])  # the key's holder may
                assert sm.read(kind, "wc") == sample_message(kind, "wc", 1), node
                assert anonymous.get_acls(f"{root}/{kind.value}")[0] == OPEN_ACL_UNSAFE
                anonymous.delete(node)
                assert sm.read(kind, "wc") is None, f"{node}: still there after a delete"
            with create_state_manager(zk_config, "test", key=_state_key("other")) as another:
                another.set_topology("other", sample_message(Kind.TOPOLOGY, "other", 1))
                assert another.get_topology("other") == sample_message(Kind.TOPOLOGY, "other", 1)
    finally:
        for client in (anonymous, holder):
            client.stop()
            client.close()


_SETTER = {
    Kind.TOPOLOGY: "topology",
    Kind.PACKING_PLAN: "packing_plan",
    Kind.PHYSICAL_PLAN: "physical_plan",
    Kind.EXECUTION_STATE: "execution_state",
    Kind.TMANAGER_LOCATION: "tmanager_location",
    Kind.SCHEDULER_LOCATION: "scheduler_location",
    Kind.STATEFUL_CHECKPOINTS: "stateful_checkpoints",
}


@pytest.mark.zookeeper
def test_with_the_auth_file_a_topologys_nodes_keep_only_the_configured_user(
    auth_config: dict[str, Any], strangers: dict[str, KazooClient]
) -> None:
    """A holder of the topology's key under the auth file gives its nodes the file user's
    ACL alone (no world READ, no topology identity): the stronger protection stays."""
    credential = load_credential(auth_config)
    assert credential is not None
    with create_state_manager(auth_config, "test", key=_state_key("wc")) as sm:
        sm.set_topology("wc", sample_message(Kind.TOPOLOGY, "wc", 1))
    node = f"{auth_config['heron.statemgr.root.path']}/topologies/wc"
    with pytest.raises(NoAuthError):
        strangers["anonymous"].get(node)


@pytest.mark.zookeeper
def test_kazoo_never_logs_a_topologys_digest_password(
    zk_config: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    key = _state_key("wc")
    with caplog.at_level(1), create_state_manager(zk_config, "test", key=key) as sm:
        sm.set_topology("wc", sample_message(Kind.TOPOLOGY, "wc", 1))
        sm.add_key(_state_key("wc"))  # a login after start, logged by kazoo at DEBUG too
    assert f"auth='{key.digest_user}:***'" in caplog.text
    assert key.digest_password not in caplog.text
