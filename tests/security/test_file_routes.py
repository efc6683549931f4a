"""The topology's secret key through the file routes: the tracker's ``containerfiledata``,
``containerfiledownload`` and ``containerfilestats`` (which ask the container's shell) and the
UI's log routes, against a running topology, in every spelling of a path an attacker would try
(``./``, ``..``, absolute, links placed in ``logs/``, a linked ``logs/``, URL-encoded and
double-encoded, backslashes, NUL, case, trailing ``/`` and ``.``, empty). Every one is refused
with a 4xx and no answer holds the secret's bytes.

Controls: the secret is non-empty and readable on disk; a plain copy of it placed in ``logs/``
IS served by the same route (so the detector sees it when a route serves it); the container's
logs are served byte for byte; the listings show ``logs`` and its files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from security_support import tracked_topology
from tracker_components import MARKER
from tracker_support import TrackerProcess
from ui_support import UIProcess

from heron_core.network import KEYS_DIR, TopologyKeys
from heron_core.testing.cluster import TopologyRun

pytestmark = pytest.mark.processes

NAME = "fileroutes"
SECRET_FILE = f"{KEYS_DIR}/topology.key_secret"
ROUTES = ("containerfiledata", "containerfiledownload", "containerfilestats")


@dataclass
class Target:
    """The running topology, its tracker and UI, and the secret they must never give."""

    run: TopologyRun
    tracker: TrackerProcess
    ui: UIProcess
    secret: bytes
    """The topology's CURVE secret key (Z85 text)."""
    secret_file: bytes
    """The whole key file."""
    instance: str
    container: int

    @property
    def working_dir(self) -> Path:
        return self.run.working_dir

    def query(self, route: str, raw_path: str, **extra: Any) -> httpx.Response:
        """GET a tracker file route with ``path=raw_path`` sent as is (already URL-encoded
        as the attacker chose)."""
        params = {"cluster": "local", "environ": "default", "topology": NAME}
        params |= {"container": str(self.container), **extra}
        query = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in params.items())
        url = f"{self.tracker.url}/topologies/{route}?{query}&path={raw_path}"
        return self.tracker.http.get(httpx.URL(url))

    def leaks(self, response: httpx.Response) -> bool:
        """Whether ``response`` holds the secret (raw, or as JSON text)."""
        body = response.content
        return self.secret in body or self.secret_file.strip() in body


@pytest.fixture(scope="module")
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    """A topology on ``local`` (one container), ``heron tracker`` and ``heron ui`` over it."""
    failures = request.session.testsfailed

    def failed() -> bool:
        return request.session.testsfailed > failures

    with tracked_topology(tmp_path_factory.mktemp("file-routes"), NAME, failed) as tracked:
        instance, container = tracked.bolt_log()
        keys = tracked.run.working_dir / KEYS_DIR
        yield Target(
            run=tracked.run,
            tracker=tracked.tracker,
            ui=tracked.ui,
            secret=TopologyKeys.load(keys).secret,
            secret_file=(keys / "topology.key_secret").read_bytes(),
            instance=instance,
            container=container,
        )


def test_control_the_secret_is_on_disk_and_a_copy_in_logs_is_served(target: Target) -> None:
    """What the attacks look for exists, and a route that served it would show it: the same
    bytes in a plain file of ``logs/`` come back, and the detector finds them."""
    assert len(target.secret) == 40 and target.secret in target.secret_file
    copy = target.working_dir / "logs" / "copy-of-the-key.log"
    copy.write_bytes(target.secret_file)
    try:
        for route in ("containerfiledata", "containerfiledownload"):
            served = target.query(route, "logs/copy-of-the-key.log")
            assert served.status_code == 200, served.text
            assert target.leaks(served), f"{route} served the copy but the detector missed it"
    finally:
        copy.unlink()


def test_control_the_logs_are_served_byte_for_byte(target: Target) -> None:
    fixed = target.working_dir / "logs" / "fixed.log"
    content = bytes(range(256)) * 5000  # more than one 1 MiB chunk, not UTF-8
    fixed.write_bytes(content)
    try:
        download = target.query("containerfiledownload", "logs/fixed.log")
        assert download.status_code == 200 and download.content == content
        chunk = target.query("containerfiledata", "logs%2Ffixed.log", offset=10, length=5)
        assert chunk.json()["offset"] == 10 and chunk.json()["size"] == len(content)
    finally:
        fixed.unlink()
    log = f"logs/{target.instance}.log"
    served = target.query("containerfiledownload", log)
    assert served.status_code == 200 and MARKER.encode() in served.content
    assert (target.working_dir / log).read_bytes().startswith(served.content)
    listing = target.query("containerfilestats", "logs").json()
    assert f"{target.instance}.log" in listing and "executor-1.status.json" in listing
    for root in (".", "", "%2e"):
        assert list(target.query("containerfilestats", root).json()) == ["logs"]


SECRET = quote(SECRET_FILE, safe="")
SPELLINGS = [
    "keys/topology.key_secret",
    SECRET,
    "./keys/topology.key_secret",
    ".%2Fkeys%2Ftopology.key_secret",
    "logs/../keys/topology.key_secret",
    "logs%2F..%2Fkeys%2Ftopology.key_secret",
    "logs/%2e%2e/keys/topology.key_secret",
    "logs%2F%2E%2E%2Fkeys%2Ftopology.key_secret",
    "logs/%252e%252e/keys/topology.key_secret",
    "logs%252F..%252Fkeys%252Ftopology.key_secret",
    "%252e%252e%252fkeys%252ftopology.key_secret",
    "logs/..%252fkeys%252ftopology.key_secret",
    "logs/..%2fkeys%2ftopology.key_secret",
    "./logs/../keys/topology.key_secret",
    "logs//../keys/topology.key_secret",
    "logs/./../keys/topology.key_secret",
    "logs%5C..%5Ckeys%5Ctopology.key_secret",
    "logs/..%5Ckeys%5Ctopology.key_secret",
    "logs\\..\\keys\\topology.key_secret",
    "logs/x%00/../../keys/topology.key_secret",
    "keys/topology.key_secret%00.log",
    "logs/..%00/keys/topology.key_secret",
    "Keys/topology.key_secret",
    "KEYS/TOPOLOGY.KEY_SECRET",
    "LOGS/../keys/topology.key_secret",
    "Logs/../Keys/topology.key_secret",
    "keys/",
    "keys/.",
    "keys",
    "./keys",
    "keys/topology.key_secret/",
    "keys/topology.key_secret/.",
    "..",
    "../",
    "%2e%2e",
    "%2e%2e%2f",
    "../keys/topology.key_secret",
    "../../../../etc/passwd",
    "/etc/passwd",
    "%2Fetc%2Fpasswd",
    ".",
    "",
    "logs",
    "logs/",
    "logs/.",
    "logs/..",
    "logs/%2e%2e",
    "logs/link-relative.log",
    "logs/link-absolute.log",
    "logs/link-to-keys/topology.key_secret",
    "logs/hard-link.log",
    "code/tracker_components.py",
    "logs/copy-of-the-key.log&path=keys/topology.key_secret",
]


@pytest.fixture(scope="module")
def planted(target: Target) -> Iterator[Target]:
    """Links an attacker with a foothold in ``logs/`` would plant: relative and absolute
    symbolic links to the key file, a link to the keys directory, a hard link."""
    logs, keys = target.working_dir / "logs", target.working_dir / KEYS_DIR
    made = [logs / n for n in ("link-relative.log", "link-absolute.log", "link-to-keys")]
    (logs / "link-relative.log").symlink_to(f"../{KEYS_DIR}/topology.key_secret")
    (logs / "link-absolute.log").symlink_to(keys / "topology.key_secret")
    (logs / "link-to-keys").symlink_to(keys)
    os.link(keys / "topology.key_secret", logs / "hard-link.log")
    made.append(logs / "hard-link.log")
    try:
        yield target
    finally:
        for path in made:
            path.unlink()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_tracker_never_serves_the_key(planted: Target, spelling: str) -> None:
    absolute = quote(str(planted.working_dir / SECRET_FILE), safe="/")
    for raw in {spelling, spelling.replace("keys/topology.key_secret", absolute)}:
        for route in ROUTES:
            answer = planted.query(route, raw)
            if route == "containerfilestats" and raw in (".", "", "logs", "%2e"):
                assert answer.status_code == 200  # the listings of what is served
                assert set(answer.json()) <= {"logs", *_served_logs(planted)}
            else:
                assert 400 <= answer.status_code < 500, (route, raw, answer.text)
                assert answer.json()["detail"], (route, raw)
            assert not planted.leaks(answer), (route, raw, answer.text)


def _served_logs(target: Target) -> set[str]:
    return {p.name for p in (target.working_dir / "logs").iterdir() if p.is_file()}


def test_a_refusal_names_the_path_and_the_rule(planted: Target) -> None:
    rule = "only the container's logs are served: a file 'logs/<name>', or the listing of"
    answer = planted.query("containerfiledata", "logs%2F..%2Fkeys%2Ftopology.key_secret")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith(
        f"path 'logs/../keys/topology.key_secret' is not served: {rule}"
    )
    linked = planted.query("containerfiledata", "logs/link-absolute.log")
    assert linked.status_code == 404
    assert linked.json()["detail"] == (
        "refused 'logs/link-absolute.log' in container 1: it is a symbolic link; "
        f"{rule} 'logs' or of '.'"
    )
    hard = planted.query("containerfiledownload", "logs/hard-link.log")
    assert hard.status_code == 404 and "it has another hard link" in hard.json()["detail"]


def test_the_listings_never_show_keys_or_links(planted: Target) -> None:
    listing = planted.query("containerfilestats", "logs").json()
    assert not {"link-relative.log", "link-absolute.log", "link-to-keys", "hard-link.log"} & set(
        listing
    )
    assert all(entry["path"].startswith("logs/") for entry in listing.values())
    for root in (".", ""):
        assert list(planted.query("containerfilestats", root).json()) == ["logs"]


def test_a_linked_logs_directory_is_refused(target: Target) -> None:
    """``W/logs`` replaced by a link to ``keys/``: nothing is served through it (the running
    processes keep their open log files meanwhile)."""
    logs = target.working_dir / "logs"
    aside = target.working_dir / "logs.aside"
    logs.rename(aside)
    try:
        logs.symlink_to(KEYS_DIR)
        for route, raw in [
            ("containerfiledata", "logs/topology.key_secret"),
            ("containerfiledownload", "logs/topology.key_secret"),
            ("containerfilestats", "logs"),
            ("containerfilestats", "."),
        ]:
            answer = target.query(route, raw)
            assert answer.status_code == 404, (route, raw, answer.text)
            assert "the container's 'logs' is a link or not a directory" in answer.text
            assert not target.leaks(answer)
    finally:
        logs.unlink(missing_ok=True)
        aside.rename(logs)
    assert target.query("containerfilestats", "logs").status_code == 200


UI_INSTANCES = [
    "..",
    "%2e%2e",
    "..%2Fkeys%2Ftopology.key_secret",
    "..%252Fkeys%252Ftopology.key_secret",
    "keys%2Ftopology.key_secret",
    "%2Fetc%2Fpasswd",
    "container_1_report_2%2F..%2F..%2Fkeys%2Ftopology.key_secret",
    "container_1_report_2%00",
    "CONTAINER_1_REPORT_2",
]


@pytest.mark.parametrize("instance", UI_INSTANCES)
def test_the_uis_log_routes_never_serve_the_key(planted: Target, instance: str) -> None:
    """The UI serves the log the physical plan names for an instance; any other instance
    name is a 404 (or a 4xx from routing), never a file."""
    base = f"{planted.ui.url}/api/topologies/local/default/{NAME}/instances/{instance}/log"
    for url in (base, base + "/download"):
        answer = planted.ui.http.get(httpx.URL(url))
        assert 400 <= answer.status_code < 500, (url, answer.text)
        assert not planted.leaks(answer), (url, answer.text)


def test_control_the_uis_log_routes_serve_the_instance_log(target: Target) -> None:
    base = f"{target.ui.url}/api/topologies/local/default/{NAME}/instances/{target.instance}/log"
    tail = target.ui.http.get(base)
    assert tail.status_code == 200 and MARKER in tail.json()["data"]
    assert tail.json()["path"] == f"logs/{target.instance}.log"
    download = target.ui.http.get(base + "/download")
    assert download.status_code == 200 and MARKER.encode() in download.content
