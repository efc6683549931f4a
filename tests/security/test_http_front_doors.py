"""The HTTP front doors of ``heron tracker`` and ``heron ui`` against DNS rebinding and other
sites' pages: a request whose ``Host`` is not a name the server answers to is refused (so a
rebinding page never reads a page carrying the UI's action token), an action from a page of
another origin is refused and the topology stays active, and every action, refused or not, is
in the UI's 0600 audit log.

The servers are real (``heron tracker``, ``heron ui`` on free ports over a running topology);
a rebinding browser is a plain TCP client of 127.0.0.1 sending the attacker's ``Host`` and
``Origin``, which is all such a browser can do. Controls: the same request with the server's
own Host and Origin succeeds (the page carries the token; the POST deactivates the topology).
The rule itself (`heron_core._front_door`) is tested first, without processes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from security_support import tracked_topology
from tracker_support import TrackerProcess
from ui_support import UIProcess, page_config

from heron_core._front_door import FrontDoor, parse_allowed_hosts
from heron_core.errors import ConfigurationError
from heron_core.proto import topology_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import wait_until

NAME = "frontdoors"
EVIL = "evil.example"

# --- the rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "extra", "host", "allowed"),
    [
        ("127.0.0.1", [], "127.0.0.1:8889", True),
        ("127.0.0.1", [], "localhost:8889", True),
        ("127.0.0.1", [], "LOCALHOST:8889", True),
        ("127.0.0.1", [], "[::1]:8889", True),
        ("127.0.0.1", [], "[0:0::1]:8889", True),
        ("127.0.0.1", [], "127.0.0.1:8888", False),  # another port
        ("127.0.0.1", [], "127.0.0.1", False),  # port 80
        ("127.0.0.1", [], "localhost.:8889", False),
        ("127.0.0.1", [], "127.1:8889", False),
        ("127.0.0.1", [], f"{EVIL}:8889", False),
        ("127.0.0.1", [], f"localhost.{EVIL}:8889", False),
        ("127.0.0.1", [], f"localhost:8889@{EVIL}", False),
        ("127.0.0.1", [], f"localhost:8889:{EVIL}", False),
        ("127.0.0.1", [], "localhost:08889x", False),
        ("127.0.0.1", [], "::1:8889", False),
        ("127.0.0.1", [], "", False),
        ("127.0.0.1", [], "localhost :8889", False),
        ("::1", [], "[::1]:8889", True),
        ("::1", [], "localhost:8889", True),
        ("0.0.0.0", [], "localhost:8889", True),
        ("0.0.0.0", [], "10.1.2.3:8889", False),  # the machine's address: name it
        ("0.0.0.0", ["10.1.2.3"], "10.1.2.3:8889", True),
        ("10.1.2.3", [], "10.1.2.3:8889", True),
        ("10.1.2.3", [], "localhost:8889", False),  # not loopback: not reachable as such
        ("127.0.0.1", ["heron.example.com"], "heron.example.com", True),
        ("127.0.0.1", ["heron.example.com"], "Heron.Example.Com:443", True),
        ("127.0.0.1", ["heron.example.com:8443"], "heron.example.com:8443", True),
        ("127.0.0.1", ["heron.example.com:8443"], "heron.example.com:8444", False),
        ("127.0.0.1", ["heron.example.com:8443"], "heron.example.com", False),
        ("127.0.0.1", ["[fd00::1]:9"], "[fd00::1]:9", True),
    ],
)
def test_the_host_rule(address: str, extra: list[str], host: str, allowed: bool) -> None:
    door = FrontDoor(address, 8889, parse_allowed_hosts(extra), server="heron ui")
    refusal = door.host_refusal(host)
    assert (refusal is None) == allowed, refusal
    if not allowed:
        assert refusal is not None and f"Host {host!r} is not a name heron ui answers to" in refusal


def test_a_refusal_says_how_to_allow_the_name() -> None:
    door = FrontDoor("127.0.0.1", 8888, server="heron tracker")
    assert door.host_refusal(f"{EVIL}:8888") == (
        f"refused: Host '{EVIL}:8888' is not a name heron tracker answers to (it answers to "
        "127.0.0.1:8888, localhost:8888, [::1]:8888); to reach it as evil.example, start it "
        f"with --allowed-host {EVIL}"
    )
    assert (
        door.host_refusal(None)
        == "refused: the request has no Host header; heron tracker needs one"
    )
    long = "x" * 5000
    assert len(door.host_refusal(long) or "") < 500  # an attacker's header is not echoed whole


@pytest.mark.parametrize(
    ("origin", "referer", "allowed"),
    [
        ("http://127.0.0.1:8889", None, True),
        ("http://localhost:8889", None, True),
        ("http://[::1]:8889", None, True),
        ("https://localhost:8889", None, True),
        ("http://localhost", None, False),  # port 80: another origin
        ("http://localhost:8888", None, False),
        (f"http://{EVIL}:8889", None, False),
        (f"http://{EVIL}:8889", "http://localhost:8889/topologies/x", False),  # Origin wins
        ("null", None, False),
        ("file://", None, False),
        ("ftp://localhost:8889", None, False),
        ("http://user@localhost:8889", None, False),
        ("http://localhost:99999", None, False),
        (None, "http://localhost:8889/topologies/local/default/wc", True),
        (None, f"http://{EVIL}:8889/", False),
        (None, None, False),
        ("https://heron.example.com", None, True),  # --allowed-host heron.example.com
    ],
)
def test_the_origin_rule(origin: str | None, referer: str | None, allowed: bool) -> None:
    door = FrontDoor(
        "127.0.0.1", 8889, parse_allowed_hosts(["heron.example.com"]), server="heron ui"
    )
    refusal = door.origin_refusal(origin, referer)
    assert (refusal is None) == allowed, refusal


@pytest.mark.parametrize("bad", ["", "a b", "evil.example/x", "h:0", "h:65536", "[::1", "h:p"])
def test_a_bad_allowed_host_is_refused_by_name(bad: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(f"--allowed-host {bad!r} is not a")):
        parse_allowed_hosts([bad])


# --- the real servers ----------------------------------------------------------------------


@dataclass
class Servers:
    """A running topology, a tracker and a UI over it."""

    run: TopologyRun
    tracker: TrackerProcess
    ui: UIProcess

    @property
    def ui_host(self) -> str:
        return self.ui.url.removeprefix("http://")

    @property
    def tracker_host(self) -> str:
        return self.tracker.url.removeprefix("http://")

    def state(self) -> int:
        topology = self.run.state.get_topology(NAME)
        assert topology is not None
        return int(topology.state)

    def action(self, verb: str) -> str:
        return f"/api/topologies/local/default/{NAME}/{verb}"

    def audit(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.ui.audit_path.read_text().splitlines()]


@pytest.fixture(scope="module")
def servers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Servers]:
    failures = request.session.testsfailed

    def failed() -> bool:
        return request.session.testsfailed > failures

    extra = ["--allowed-host", "ui.example"]
    root = tmp_path_factory.mktemp("front-doors")
    with tracked_topology(root, NAME, failed, extra) as tracked:
        tracker = tracked.tracker
        wait_until(lambda: tracker.json("/topologies").get("local"), "the topology in the tracker")
        assert tracked.ui.audit_path == tracked.home / "logs" / "ui-audit.log"
        yield Servers(tracked.run, tracker, tracked.ui)


@pytest.mark.processes
def test_the_tracker_refuses_a_foreign_host(servers: Servers) -> None:
    tracker = servers.tracker
    control = tracker.http.get("/topologies")
    assert control.status_code == 200 and NAME in json.dumps(control.json())
    port = servers.tracker_host.rpartition(":")[2]
    for host in (EVIL, f"{EVIL}:{port}", f"localhost.{EVIL}:{port}", "127.0.0.1:1"):
        refused = tracker.http.get("/topologies", headers={"Host": host})
        assert refused.status_code == 400, (host, refused.text)
        assert refused.json()["detail"].startswith(f"refused: Host {host!r} is not a name heron")
        assert NAME not in refused.text
    for route in ("/topologies/containerfiledata", "/", "/openapi.json"):
        assert tracker.http.get(route, headers={"Host": EVIL}).status_code == 400
    for host in (f"localhost:{port}", f"[::1]:{port}", f"127.0.0.1:{port}"):
        assert tracker.http.get("/topologies", headers={"Host": host}).status_code == 200
    # a request that would change something must come from the tracker's own pages (it has
    # none that do: the control reaches the router, which knows no POST here)
    foreign = tracker.http.post("/topologies", headers={"Origin": f"http://{EVIL}:{port}"})
    assert foreign.status_code == 403 and "is not a page of heron tracker" in foreign.text
    own = tracker.http.post("/topologies", headers={"Origin": tracker.url})
    assert own.status_code == 405


@pytest.mark.processes
def test_a_rebinding_page_never_gets_the_token(servers: Servers) -> None:
    ui = servers.ui
    page = f"/topologies/local/default/{NAME}"
    control = ui.http.get(page)
    assert control.status_code == 200
    token = page_config(control.text)["csrf"]["token"]
    assert len(token) >= 32 and token in control.text
    port = servers.ui_host.rpartition(":")[2]
    for host in (EVIL, f"{EVIL}:{port}"):
        for path in ("/", page, f"{page}/instances/x/log", "/static/ui.js", "/api/topologies"):
            refused = ui.http.get(path, headers={"Host": host})
            assert refused.status_code == 400, (host, path, refused.text)
            assert token not in refused.text and "data-config" not in refused.text
            assert f"Host {host!r} is not a name heron ui answers to" in refused.json()["error"]
            assert "--allowed-host evil.example" in refused.json()["error"]
    # the name given with --allowed-host is answered, on any port
    named = ui.http.get(page, headers={"Host": "ui.example:8080"})
    assert named.status_code == 200 and token in named.text


@pytest.mark.processes
def test_a_foreign_origin_cannot_act_and_the_topology_stays_active(servers: Servers) -> None:
    ui = servers.ui
    before = len(servers.audit())
    csrf = page_config(ui.http.get("/").text)["csrf"]
    token = {csrf["header"]: csrf["token"]}
    port = servers.ui_host.rpartition(":")[2]
    assert servers.state() == topology_pb2.RUNNING
    attempts = [
        # the rebinding page: its own Host and Origin (refused at the Host)
        ({"Host": f"{EVIL}:{port}", "Origin": f"http://{EVIL}:{port}"}, 400),
        # the token leaked somehow, sent from another site's page
        ({"Origin": f"http://{EVIL}:{port}"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": f"http://localhost:{int(port) + 1}"}, 403),
        ({"Referer": f"http://{EVIL}/page"}, 403),
        ({}, 403),  # neither Origin nor Referer
    ]
    for headers, status in attempts:
        answer = ui.http.post(servers.action("deactivate"), headers={**token, **headers})
        assert answer.status_code == status, (headers, answer.text)
        assert answer.json()["error"].startswith("refused:")
        assert servers.state() == topology_pb2.RUNNING, headers
    # control: the same POST from the UI's own page deactivates it; and back
    own = {**token, "Origin": ui.url}
    done = ui.http.post(servers.action("deactivate"), headers=own)
    assert done.status_code == 200, done.text
    assert done.json()["message"] == f"deactivated topology {NAME!r} on 'local'"
    assert servers.state() == topology_pb2.PAUSED
    referer = {**token, "Referer": f"{ui.url}/topologies/local/default/{NAME}"}
    again = ui.http.post(servers.action("activate"), headers=referer)
    assert again.status_code == 200, again.text
    assert servers.state() == topology_pb2.RUNNING
    # each request is one audit line: when, from where, what, result
    lines = servers.audit()[before:]
    assert [(line["action"], line["status"]) for line in lines] == [
        *[("deactivate", status) for _, status in attempts],
        ("deactivate", 200),
        ("activate", 200),
    ]
    for line, (headers, _) in zip(lines, attempts, strict=False):
        assert line["host"] == headers.get("Host", servers.ui_host)
        assert line["origin"] == headers.get("Origin")
        assert line["result"].startswith("refused:")
    for line in lines:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"])
        assert re.fullmatch(r"127\.0\.0\.1:\d+", line["client"])
        assert (line["cluster"], line["environ"], line["topology"]) == ("local", "default", NAME)
    assert lines[-2]["result"] == lines[-1]["result"] == "ok"
    assert lines[-1]["referer"] == referer["Referer"] and lines[-1]["origin"] is None
    assert servers.ui.audit_path.stat().st_mode & 0o777 == 0o600


@pytest.mark.processes
def test_a_wrong_token_from_the_uis_own_origin_is_refused_and_audited(servers: Servers) -> None:
    ui = servers.ui
    before = len(servers.audit())
    answer = ui.http.post(
        servers.action("kill"), headers={"Origin": ui.url, "X-Heron-UI-Token": "guess"}
    )
    assert answer.status_code == 403 and "with a wrong X-Heron-UI-Token" in answer.text
    assert servers.state() == topology_pb2.RUNNING
    (line,) = servers.audit()[before:]
    assert (line["action"], line["status"], line["origin"]) == ("kill", 403, ui.url)
    assert "with a wrong X-Heron-UI-Token header" in line["result"]


@pytest.mark.processes
def test_a_forged_forwarded_for_does_not_change_the_audited_client(servers: Servers) -> None:
    ui = servers.ui
    before = len(servers.audit())
    ui.http.post(
        servers.action("activate"),
        headers={"Origin": ui.url, "X-Forwarded-For": "203.0.113.9", "Forwarded": "for=x"},
    )
    (line,) = servers.audit()[before:]
    assert line["client"].startswith("127.0.0.1:") and "203.0.113.9" not in json.dumps(line)


def test_an_in_process_app_without_the_front_door_would_have_served_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Control for the refusals above: the UI's app with its front door removed answers the
    rebinding page with the token, so the tests would fail without it."""
    import asyncio

    from heron_core._front_door import FrontDoorMiddleware
    from heron_core.ui import create_app

    monkeypatch.setenv("HERON_HOME", str(tmp_path))
    app = create_app("http://127.0.0.1:1")
    app.user_middleware = [m for m in app.user_middleware if m.cls is not FrontDoorMiddleware]

    async def page(host: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=f"http://{host}") as http:
            answer = await http.get("/")
        await app.state.tracker.close()
        return answer

    answer = asyncio.run(page(EVIL))
    assert answer.status_code == 200 and app.state.token in answer.text
