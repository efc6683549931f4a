"""The UI's actions (activate, deactivate, restart, kill) over its HTTP API, without a browser:
the token that guards them, the client's refusals as messages, and that they go through
`heron_core.client` with the UI's config, off the event loop.

The browser tests (test_ui_browser.py) do the same on real topologies; here the client
functions are real where an error needs no running topology, and replaced where a test
needs a success or an error it cannot provoke cheaply."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from fastapi import FastAPI
from ui_components import TallyBolt, WordSpout

from heron_core import client
from heron_core.api import Grouping, TopologyBuilder
from heron_core.client import LoadedTopology, install, prepare, uninstall
from heron_core.errors import ConfigurationError, SchedulerError, StateManagerError
from heron_core.proto import topology_pb2
from heron_core.statemgr import create_state_manager
from heron_core.ui import TOKEN_HEADER, create_app

TRACKER = "http://127.0.0.1:1"  # never asked: no test here GETs the API
HOST = "127.0.0.1:8889"
"""The UI's Host here (an app not bound to a socket answers the loopback names, any port)."""
PAGE = "/topologies/local/default/wc"
ACTIONS = ["activate", "deactivate", "restart", "kill"]
T = TypeVar("T")


class UI:
    """The UI app over httpx's ASGI transport (no socket), driven from a sync test on one event
    loop; `http` is the async client, for tests that need requests in flight together."""

    def __init__(self, app: FastAPI, base: str = "") -> None:
        self.app = app
        self._loop = asyncio.Runner()
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url=f"http://{HOST}",
            headers={"Origin": f"http://{HOST}"},  # as a browser sends with every POST
            timeout=60,
        )
        csrf = _config(self.get(base + PAGE))["csrf"]
        self.token = {csrf["header"]: csrf["token"]}
        """The header the topology page's script sends with each action."""

    def get(self, path: str) -> httpx.Response:
        return self.run(self.http.get(path))

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.run(self.http.post(path, **kwargs))

    def act(self, path: str) -> httpx.Response:
        """POST ``path`` with the token, as the page does."""
        return self.post(path, headers=self.token)

    def run(self, job: Coroutine[Any, Any, T]) -> T:
        return self._loop.run(job)

    def close(self) -> None:
        self.run(self.http.aclose())
        self.run(self.app.state.tracker.close())
        self._loop.close()


@contextlib.contextmanager
def serving(app: FastAPI, base: str = "") -> Iterator[UI]:
    ui = UI(app, base)
    try:
        yield ui
    finally:
        ui.close()


def _action(name: str, topology: str = "wc", cluster: str = "local", base: str = "") -> str:
    return f"{base}/api/topologies/{cluster}/default/{topology}/{name}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty heron home, the default one (``$HERON_HOME``) of the CLI and of the UI."""
    monkeypatch.setenv("HERON_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HERON_CONFIG_PATH", raising=False)
    return tmp_path / "home"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """Replaces the three client functions with recorders that succeed (activate: changed;
    restart: containers 0 and 1); each records whether it ran on an event loop's thread."""
    recorded: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def recorder(name: str, answer: object) -> Callable[..., object]:
        def call(*args: Any, **kwargs: Any) -> object:
            try:
                asyncio.get_running_loop()
                on_loop = True
            except RuntimeError:
                on_loop = False
            recorded.append((name, args, {**kwargs, "on_loop": on_loop}))
            return answer

        return call

    monkeypatch.setattr(client, "set_topology_state", recorder("set_topology_state", True))
    monkeypatch.setattr(client, "restart", recorder("restart", [0, 1]))
    monkeypatch.setattr(client, "kill", recorder("kill", None))
    return recorded


def _config(page: httpx.Response) -> dict[str, Any]:
    """The ``data-config`` of a page."""
    found = re.search(r'<body data-config="([^"]*)">', page.text)
    assert found, page.text
    config: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return config


@pytest.fixture
def ui(home: Path) -> Iterator[UI]:
    """The UI with the default config location (as ``heron ui`` without its flags)."""
    with serving(create_app(TRACKER)) as ui:
        yield ui


def test_pages_carry_the_token_are_not_cached_and_not_framed(home: Path) -> None:
    with serving(create_app(TRACKER)) as one, serving(create_app(TRACKER)) as two:
        for path in ("/", PAGE, f"{PAGE}/instances/x/log"):
            page = one.get(path)
            assert page.status_code == 200
            csrf = _config(page)["csrf"]
            assert csrf == {"header": TOKEN_HEADER, "token": one.app.state.token}
            assert page.headers["cache-control"] == "no-store"
            assert page.headers["x-frame-options"] == "DENY"
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        # a token per server, long enough not to be guessed
        first, second = (ui.token[TOKEN_HEADER] for ui in (one, two))
        assert first != second and len(first) >= 32


@pytest.mark.parametrize("action", ACTIONS)
def test_an_action_without_the_token_is_refused_and_does_nothing(
    ui: UI, calls: list[Any], action: str
) -> None:
    missing = ui.post(_action(action))
    assert missing.status_code == 403
    assert missing.json()["error"] == (
        f"refused '{action}' of topology 'wc': the request came without the X-Heron-UI-Token "
        "header (only the UI's own pages may act; reload the page)"
    )
    wrong = ui.post(_action(action), headers={TOKEN_HEADER: "x" + ui.token[TOKEN_HEADER]})
    assert wrong.status_code == 403
    assert "came with a wrong X-Heron-UI-Token header" in wrong.json()["error"]
    # a form post of another site cannot set the header; a GET does not act at all
    form = ui.post(_action(action), data={TOKEN_HEADER: ui.token[TOKEN_HEADER]})
    assert form.status_code == 403
    assert ui.get(_action(action)).status_code == 405
    assert calls == []


def test_an_unknown_action_is_a_404(ui: UI) -> None:
    answer = ui.act(_action("explode"))
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "unknown action 'explode'; the actions are activate, deactivate, restart, kill"
    }


def test_actions_call_the_client_with_the_uis_config_off_the_event_loop(
    home: Path, tmp_path: Path, calls: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    config_path, heron_home = tmp_path / "clusters", tmp_path / "other-home"
    app = create_app(TRACKER, "/heron/", config_path=config_path, heron_home=heron_home)
    with serving(app, "/heron") as ui:
        answers = {a: ui.act(_action(a, base="/heron")) for a in ACTIONS}
        monkeypatch.setattr(client, "set_topology_state", lambda *a, **k: False)
        already = {
            a: ui.act(_action(a, base="/heron")).json()["message"]
            for a in ("activate", "deactivate")
        }
    assert {a: (r.status_code, r.json()) for a, r in answers.items()} == {
        a: (
            200,
            {
                "action": a,
                "cluster": "local",
                "topology": "wc",
                "message": message,
                "changed": True,
                "containers": [0, 1] if a == "restart" else [],
            },
        )
        for a, message in {
            "activate": "activated topology 'wc' on 'local'",
            "deactivate": "deactivated topology 'wc' on 'local'",
            "restart": "restarted topology 'wc' on 'local' (containers 0, 1)",
            "kill": "killed topology 'wc' on 'local'",
        }.items()
    }
    assert already == {
        "activate": "topology 'wc' on 'local' was active already",
        "deactivate": "topology 'wc' on 'local' was deactivated already",
    }
    where = {"heron_home": heron_home, "on_loop": False}
    assert [(name, args, {k: kw[k] for k in where}) for name, args, kw in calls] == [
        ("set_topology_state", ("local", "wc", topology_pb2.RUNNING, config_path), where),
        ("set_topology_state", ("local", "wc", topology_pb2.PAUSED, config_path), where),
        ("restart", ("local", "wc", -1, config_path), where),
        ("kill", ("local", "wc", config_path), where),
    ]
    assert all(callable(kw["progress"]) for _, _, kw in calls)


@pytest.mark.parametrize("action", ACTIONS)
def test_an_unknown_topology_is_the_clients_message(ui: UI, action: str) -> None:
    """The real client on the default heron home ($HERON_HOME, empty)."""
    answer = ui.act(_action(action, "nope"))
    assert answer.status_code == 409
    assert answer.json() == {
        "error": "no topology 'nope' on cluster 'local'; topologies there: none"
    }


def test_an_unknown_cluster_is_a_400(ui: UI) -> None:
    answer = ui.act(_action("kill", cluster="nowhere"))
    assert answer.status_code == 400
    assert answer.json()["error"].startswith("unknown cluster 'nowhere': no nowhere.yaml in ")


def test_restart_of_a_topology_without_a_scheduler_service_says_why(ui: UI, home: Path) -> None:
    """A topology stored as `heron run` and TopologyRun store it (no scheduler service; no
    process is started here)."""
    builder = TopologyBuilder("wc")
    words = builder.add_spout("words", WordSpout, par=1)
    builder.add_bolt("tally", TallyBolt, par=1, inputs={words: Grouping.fields("word")})
    plan = builder.build()
    deployment = prepare("local", LoadedTopology(plan, None, "wc"), (), None, home)
    with create_state_manager(deployment.config, "local") as state:
        install(state, deployment)
        try:
            answer = ui.act(_action("restart"))
        finally:
            uninstall(state, "wc", deployment.working_dir)
    assert answer.status_code == 409
    assert answer.json()["error"].startswith(
        "topology 'wc' on cluster 'local' has no scheduler service to restart it"
    )


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (SchedulerError("the topology manager of 'wc' did not answer"), 409),
        (StateManagerError("cannot reach ZooKeeper at 127.0.0.1:1"), 409),
        (ConfigurationError("heron.statemgr.root.path must be absolute"), 400),
    ],
)
def test_client_errors_are_their_message(
    ui: UI,
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    status: int,
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise error

    monkeypatch.setattr(client, "kill", refuse)
    answer = ui.act(_action("kill"))
    assert (answer.status_code, answer.json()) == (status, {"error": str(error)})


def test_an_unexpected_exception_is_a_message_not_a_traceback(
    ui: UI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(client, "restart", crash)
    answer = ui.act(_action("restart"))
    assert answer.status_code == 500
    assert answer.json() == {
        "error": "restart of topology 'wc' on 'local' failed unexpectedly: RuntimeError: boom "
        "(see the UI server's log)"
    }


def test_one_action_at_a_time_per_topology(
    ui: UI, calls: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow_restart(*args: Any, **kwargs: Any) -> list[int]:
        entered.set()
        assert release.wait(60), "the test never released the restart"
        return [0]

    monkeypatch.setattr(client, "restart", slow_restart)

    async def meanwhile() -> tuple[httpx.Response, httpx.Response, httpx.Response]:
        first = asyncio.create_task(ui.http.post(_action("restart"), headers=ui.token))
        try:
            assert await asyncio.to_thread(entered.wait, 60), "the restart did not start"
            # the server answers meanwhile: the restart blocks a worker thread, not the loop
            busy = await ui.http.post(_action("kill"), headers=ui.token)
            other = await ui.http.post(_action("kill", "other"), headers=ui.token)
        finally:
            release.set()
        return await first, busy, other

    restarted, busy, other = ui.run(meanwhile())
    assert busy.status_code == 409
    assert busy.json() == {
        "error": "cannot kill topology 'wc' on 'local': a restart of it is still running; wait "
        "for it to finish"
    }
    assert (
        other.status_code == 200 and other.json()["message"] == "killed topology 'other' on 'local'"
    )
    assert restarted.status_code == 200
    # and once the restart is over, the topology takes actions again
    again = ui.act(_action("kill"))
    assert again.status_code == 200
    assert [(name, args[1]) for name, args, _ in calls] == [("kill", "other"), ("kill", "wc")]


def _audit(home: Path) -> list[dict[str, Any]]:
    path = home / "logs" / "ui-audit.log"
    assert path.stat().st_mode & 0o777 == 0o600
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_action_request_is_audited_whatever_became_of_it(
    ui: UI, home: Path, calls: list[Any]
) -> None:
    """One line per operate request in ``<heron home>/logs/ui-audit.log`` (the default): the
    ones done and the ones refused by the token, the front door or the client."""
    ui.act(_action("deactivate"))
    ui.post(_action("kill"))  # no token
    ui.post(_action("kill"), headers={**ui.token, "Origin": "http://evil.example"})
    ui.post(_action("kill"), headers={**ui.token, "Host": "evil.example"})
    ui.act(_action("explode"))
    ui.get(PAGE)  # pages and GETs are not audited
    lines = _audit(home)
    assert [(line["action"], line["status"]) for line in lines] == [
        ("deactivate", 200),
        ("kill", 403),
        ("kill", 403),
        ("kill", 400),
        ("explode", 404),
    ]
    done = lines[0]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", done["time"])
    assert {k: done[k] for k in ("host", "origin", "cluster", "environ", "topology", "result")} == {
        "host": HOST,
        "origin": f"http://{HOST}",
        "cluster": "local",
        "environ": "default",
        "topology": "wc",
        "result": "ok",
    }
    assert done["client"] == "127.0.0.1:123"  # httpx's ASGI transport's client address
    assert "without the X-Heron-UI-Token header" in lines[1]["result"]
    assert lines[2]["origin"] == "http://evil.example"
    assert "Origin 'http://evil.example' is not a page of heron ui" in lines[2]["result"]
    assert lines[3]["host"] == "evil.example"
    assert "Host 'evil.example' is not a name heron ui answers to" in lines[3]["result"]
    assert lines[4]["result"].startswith("unknown action 'explode'")
    # only the first request acted
    assert [name for name, _, _ in calls] == ["set_topology_state"]


def test_the_audit_log_can_be_elsewhere_and_must_be_writable(
    home: Path, tmp_path: Path, calls: list[Any]
) -> None:
    chosen = tmp_path / "audit" / "actions.jsonl"
    with serving(create_app(TRACKER, audit_log=chosen)) as ui:
        assert ui.app.state.audit.path == chosen
        ui.act(_action("activate"))
    assert chosen.stat().st_mode & 0o777 == 0o600
    assert json.loads(chosen.read_text())["result"] == "ok"
    assert not (home / "logs" / "ui-audit.log").exists()
    loose = tmp_path / "loose.log"
    loose.write_text("")
    loose.chmod(0o644)
    create_app(TRACKER, audit_log=loose)
    assert loose.stat().st_mode & 0o777 == 0o600
    with pytest.raises(ConfigurationError, match=r"the UI's audit log .*/audit cannot be opened"):
        create_app(TRACKER, audit_log=tmp_path / "audit")  # a directory
