"""Issue 17 item 6: ``heron ui`` over a real ``heron tracker`` over a real topology, looked at in
a real headless Chromium (Debian's ``chromium`` and ``chromium-driver``; CI installs them).
The last tests click the topology page's Deactivate, Activate, Restart and Kill buttons and
check what they did in the cluster's state.

Every test runs twice: with the topology on the ``local`` cluster (localfs state) and on
``localzk`` (the session's real ZooKeeper server)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from selenium import webdriver
from selenium.common.exceptions import (
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait
from ui_components import FlakyBolt, TallyBolt, WordSpout

from heron_core.api import Grouping, TopologyBuilder
from heron_core.client import cluster_state, kill, topology_processes
from heron_core.proto import topology_pb2
from heron_core.testing.cluster import TopologyRun
from heron_core.testing.processes import PipeLines, isolated_home, run_command

HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
NAME = "uiflaky"
SUBMITTED = "uicontrol"
"""The topology submitted with ``heron submit`` (it has a scheduler service) for the Restart
and Kill buttons."""
HERON = [sys.executable, "-c", "from heron_core.cli.main import main; main()"]
WAIT_S = 180.0
"""Deadline of each browser wait: metrics reach the tmanager every second, a chart's first
minute bucket and the first exception take longer on a busy machine."""

pytestmark = pytest.mark.processes

CLUSTERS = ["local", pytest.param("localzk", marks=pytest.mark.zookeeper)]


class Daemon:
    """A ``heron`` verb run as a real process; its announced URL; stopped by pid."""

    def __init__(self, args: list[str], announced: str) -> None:
        argv = [*HERON, *args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.argv = argv
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        self.output = PipeLines(self.proc.stdout)
        deadline = time.monotonic() + 60
        while not (found := self.output.match(rf".*{announced}(http://\S+?)/?(\s.*)?")):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(
                    f"{' '.join(args)} did not announce its address; it printed:\n"
                    + "\n".join(self.output.lines)
                )
            time.sleep(0.05)
        match = re.fullmatch(rf".*{announced}(http://\S+?)/?(\s.*)?", found[0])
        assert match is not None
        self.url = match.group(1)

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after 15 s; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(15)
        self.output.join(5)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode


def _flaky_topology() -> TopologyBuilder:
    b = TopologyBuilder(NAME)
    words = b.add_spout("words", WordSpout, par=1)
    flaky = b.add_bolt("flaky", FlakyBolt, par=2, inputs={words: Grouping.SHUFFLE})
    b.add_bolt("tally", TallyBolt, par=1, inputs={flaky: Grouping.fields("word")})
    return b


@pytest.fixture(scope="module", params=CLUSTERS)
def cluster(request: pytest.FixtureRequest) -> str:
    """The cluster the module's topology runs on: every test runs once per cluster."""
    return str(request.param)


@pytest.fixture(scope="module")
def clusters(
    cluster: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The tracker's cluster config directory (``local.yaml``, and for ``localzk`` a
    ``localzk.yaml`` on the session's ZooKeeper under a fresh root path) and the state-manager
    overrides of the topology's run. As ``zk_config`` (tests/conftest.py), for a module: the
    server's log written meanwhile is printed if a test failed."""
    directory = tmp_path_factory.mktemp(f"clusters-{cluster}")
    local = {"heron.class.scheduler": "local", "heron.class.state.manager": "localfs"}
    (directory / "local.yaml").write_text(yaml.safe_dump(local))
    if cluster == "local":
        yield directory, {}
        return
    server = request.getfixturevalue("zookeeper_server")
    failures = request.session.testsfailed
    log_start = len(server.log_text())
    overrides = {
        "heron.statemgr.connection.string": server.connection_string,
        "heron.statemgr.root.path": f"/ui-{uuid.uuid4().hex}",
        "heron.statemgr.zookeeper.session.timeout.ms": 30000,
        "heron.statemgr.zookeeper.connection.timeout.ms": 10000,
    }
    localzk = {
        "heron.class.scheduler": "local",
        "heron.class.state.manager": "zookeeper",
        **overrides,
    }
    (directory / "localzk.yaml").write_text(yaml.safe_dump(localzk))
    yield directory, overrides
    if request.session.testsfailed > failures:
        print(f"--- ZooKeeper server log during the UI tests on {cluster} ---")
        print(server.log_text()[log_start:])


@pytest.fixture(scope="module")
def home(
    cluster: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """A heron home for the module's tests on ``cluster``; every log under it is printed if a
    test failed, and no process may outlive it."""
    failures = request.session.testsfailed
    root = tmp_path_factory.mktemp(f"ui-{cluster}")
    with isolated_home(root, lambda: request.session.testsfailed > failures) as path:
        yield path


@pytest.fixture(scope="module")
def topology(
    cluster: str,
    clusters: tuple[Path, dict[str, Any]],
    home: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[TopologyRun]:
    """The flaky topology running on ``cluster`` (one container)."""
    code = tmp_path_factory.mktemp("code")
    shutil.copy(HERE / "ui_components.py", code)
    plan = _flaky_topology().build()
    run = TopologyRun(
        plan,
        heron_home=home,
        code_root=code,
        containers=1,
        cluster=cluster,
        config=clusters[1],
    )
    with run:
        yield run


@pytest.fixture(scope="module")
def submitted(
    cluster: str,
    clusters: tuple[Path, dict[str, Any]],
    home: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """`SUBMITTED` on ``cluster``, submitted with ``heron submit`` (so it has a scheduler
    service, which restarts it); killed at the end unless a test killed it."""
    code = tmp_path_factory.mktemp("submitted-code")
    shutil.copy(HERE / "ui_components.py", code)
    where = ["--config-path", str(clusters[0]), "--heron-home", str(home)]
    spec = f"{code / 'ui_components.py'}:QuietWords"
    done = run_command(
        [*HERON, "submit", cluster, spec, "--name", SUBMITTED, *where], timeout=WAIT_S
    )
    assert done.returncode == 0, f"heron submit failed:\n{done.stdout}\n{done.stderr}"
    try:
        yield SUBMITTED
    finally:
        if _stored(cluster, clusters[0], home, SUBMITTED) is not None:
            kill(cluster, SUBMITTED, clusters[0], heron_home=home)


def _stored(cluster: str, config_path: Path, home: Path, name: str) -> topology_pb2.Topology | None:
    """Topology ``name`` as the cluster's state manager holds it now (None: not there)."""
    with cluster_state(cluster, config_path, heron_home=home) as (_, state):
        return state.get_topology(name)


@pytest.fixture(scope="module")
def ui(home: Path, clusters: tuple[Path, dict[str, Any]], topology: TopologyRun) -> Iterator[str]:
    """``heron tracker`` (over the clusters of `clusters`) and ``heron ui`` (whose actions use
    the same clusters and heron home) as processes on free ports, stopped by pid; the UI's
    URL."""
    config = ["--config-path", str(clusters[0]), "--heron-home", str(home)]
    tracker = Daemon(["tracker", "--port", "0", *config], "serving ")
    try:
        ui = Daemon(["ui", "--port", "0", "--tracker-url", tracker.url, *config], "listening on ")
        try:
            yield ui.url
        finally:
            status = ui.stop()
            print("--- heron ui ---\n" + "\n".join(ui.output.lines))
            assert status == 0, f"heron ui exited with {status} on SIGTERM"
    finally:
        tracker.stop()
        print("--- heron tracker ---\n" + "\n".join(tracker.output.lines))


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """Headless Chromium; the test fails (never skips) when it is not installed."""
    if not CHROMIUM.exists() or not CHROMEDRIVER.exists():
        pytest.fail(
            f"the UI tests need Debian's chromium ({CHROMIUM}) and chromium-driver "
            f"({CHROMEDRIVER}): apt-get install chromium chromium-driver",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument("--window-size=1400,1600")
    options.binary_location = str(CHROMIUM)
    try:
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    except WebDriverException as exc:
        pytest.fail(f"cannot start headless chromium: {exc.msg}", pytrace=False)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: WebDriver, what: str, condition: object) -> object:
    """WebDriverWait with the module's deadline; on timeout the page's text is in the error.

    An element found by one poll may be gone by the time the condition reads it, when the page
    is replaced in between (a click that navigates): such a stale element is polled again,
    not an error."""
    wait = WebDriverWait(
        driver, WAIT_S, poll_frequency=0.5, ignored_exceptions=(StaleElementReferenceException,)
    )
    try:
        return wait.until(condition)  # type: ignore[arg-type]
    except TimeoutException as exc:
        body = driver.find_element(By.TAG_NAME, "body").get_attribute("textContent")
        raise AssertionError(f"{what} did not happen in {WAIT_S:.0f}s; the page:\n{body}") from exc


def _topology_url(ui: str, cluster: str) -> str:
    return f"{ui}/topologies/{cluster}/default/{NAME}"


def test_list_shows_the_running_topology(ui: str, cluster: str, browser: WebDriver) -> None:
    browser.get(ui + "/")
    row = f'tr.topology[data-name="{NAME}"]'
    _wait(browser, "the topology in the list", lambda d: d.find_elements(By.CSS_SELECTOR, row))
    _wait(
        browser,
        "status running",
        lambda d: "running" in d.find_element(By.CSS_SELECTOR, f"{row} .status").text,
    )
    cells = browser.find_element(By.CSS_SELECTOR, row).text
    assert cluster in cells.split() and "default" in cells
    # the search box filters rows out
    browser.find_element(By.ID, "search").send_keys("no-such-topology")
    _wait(browser, "the row filtered out", lambda d: not d.find_elements(By.CSS_SELECTOR, row))


def test_dag_shows_every_component_and_stream(ui: str, cluster: str, browser: WebDriver) -> None:
    browser.get(_topology_url(ui, cluster))
    _wait(browser, "the DAG", lambda d: d.find_elements(By.CSS_SELECTOR, "#dag-svg g.node"))
    nodes = browser.find_elements(By.CSS_SELECTOR, "#dag-svg g.node")
    assert {n.get_attribute("data-component"): n.text for n in nodes} == {
        "words": "words",
        "flaky": "flaky",
        "tally": "tally",
    }
    edges = {
        (e.get_attribute("data-source"), e.get_attribute("data-target"))
        for e in browser.find_elements(By.CSS_SELECTOR, "#dag-svg g.edge-group")
    }
    assert edges == {("words", "flaky"), ("flaky", "tally")}
    # layered left to right: each node right of its input
    x = {
        n.get_attribute("data-component"): float(
            n.find_element(By.TAG_NAME, "rect").get_attribute("x") or "nan"
        )
        for n in nodes
    }
    assert x["words"] < x["flaky"] < x["tally"]


def test_counters_and_charts_have_values(ui: str, cluster: str, browser: WebDriver) -> None:
    browser.get(_topology_url(ui, cluster))
    executed = 'tr.component[data-component="tally"] td[data-counter="executed"]'

    def counted(d: WebDriver) -> bool:
        cells = d.find_elements(By.CSS_SELECTOR, executed)
        return bool(cells) and cells[0].text not in ("", "\N{EN DASH}", "0")

    _wait(browser, "tally's executed count in the last 10 minutes", counted)
    points = 'svg.chart[data-chart="rates"] g.series[data-series="tally"] circle.point'
    _wait(browser, "a point of tally's rate", lambda d: d.find_elements(By.CSS_SELECTOR, points))
    for chart in ("rates", "latency", "failures", "backpressure"):
        assert browser.find_elements(By.CSS_SELECTOR, f'svg.chart[data-chart="{chart}"]')


def test_exception_of_the_flaky_bolt_is_listed(ui: str, cluster: str, browser: WebDriver) -> None:
    browser.get(_topology_url(ui, cluster))
    summary = '.component-exceptions[data-component="flaky"] tr.exception'
    _wait(browser, "flaky's exception", lambda d: d.find_elements(By.CSS_SELECTOR, summary))
    titles = [row.text for row in browser.find_elements(By.CSS_SELECTOR, summary)]
    assert any("ValueError: flaky bolt gives up at tuple 400" in title for title in titles), titles
    traces = browser.find_elements(
        By.CSS_SELECTOR, '.component-exceptions[data-component="flaky"] details.trace'
    )
    text = " ".join(t.get_attribute("textContent") or "" for t in traces)
    assert "ValueError: flaky bolt gives up at tuple" in text


def _user_metric_rows(driver: WebDriver) -> list[dict[str, str | None]]:
    """Every row of the user metrics section, read in one script (the page re-renders its
    sections every few seconds, so elements found one by one may go stale)."""
    rows: list[dict[str, str | None]] = driver.execute_script(
        """return [...document.querySelectorAll(".user-metrics tr.user-metric")].map((r) => ({
             component: r.closest(".user-metrics").dataset.component,
             metric: r.dataset.metric, instance: r.dataset.instance,
             recent: r.querySelector('td[data-window="recent"]').dataset.value ?? null,
             all_time: r.querySelector('td[data-window="all-time"]').dataset.value ?? null}));"""
    )
    return rows


def test_user_metric_of_the_flaky_bolt_is_shown(ui: str, cluster: str, browser: WebDriver) -> None:
    browser.get(_topology_url(ui, cluster))

    def counted(d: WebDriver) -> bool:
        return any(
            row["component"] == "flaky"
            and row["metric"] == "flaky-words"
            and float(row["recent"] or 0) > 0
            and float(row["all_time"] or 0) > 0
            for row in _user_metric_rows(d)
        )

    _wait(browser, "flaky-words of flaky with a value > 0 (10 min and all time)", counted)
    rows = _user_metric_rows(browser)
    # only user metrics, each row one instance of its component
    assert rows and not [r for r in rows if str(r["metric"]).startswith("__")], rows
    flaky = [r for r in rows if r["component"] == "flaky"]
    assert {r["metric"] for r in flaky} == {"flaky-words"}, rows
    assert all("_flaky_" in str(r["instance"]) for r in flaky), rows
    assert {r["component"] for r in rows} == {"flaky"}, rows
    headers = browser.execute_script(
        'return document.querySelector("#user-metrics thead").textContent'
    )
    assert "10 min" in headers and "All time" in headers, headers


def test_instance_log_link_opens_its_log(ui: str, cluster: str, browser: WebDriver) -> None:
    browser.get(_topology_url(ui, cluster))
    link = 'a.log-link[data-instance*="_flaky_"]'
    _wait(browser, "a log link of flaky", lambda d: d.find_elements(By.CSS_SELECTOR, link))
    instance = browser.find_element(By.CSS_SELECTOR, link).get_attribute("data-instance")
    browser.find_element(By.CSS_SELECTOR, link).click()
    _wait(
        browser,
        f"the log of {instance}",
        lambda d: (
            "flaky bolt ready to process words"
            in (d.find_element(By.ID, "log-text").get_attribute("textContent") or "")
            if d.find_elements(By.ID, "log-text")
            else False
        ),
    )
    href = browser.find_element(By.ID, "download").get_attribute("href")
    assert href is not None
    download = httpx.get(href, timeout=30)
    assert download.status_code == 200
    assert "flaky bolt ready to process words" in download.text
    assert "attachment" in download.headers["content-disposition"]


def test_unknown_topology_shows_the_trackers_message(
    ui: str, cluster: str, browser: WebDriver
) -> None:
    browser.get(f"{ui}/topologies/{cluster}/default/no-such-topology")
    _wait(
        browser,
        "an error banner",
        lambda d: (
            d.find_element(By.ID, "error").is_displayed()
            and "no-such-topology" in d.find_element(By.ID, "error").text
        ),
    )


# --- the actions ------------------------------------------------------------------------------


def _button(driver: WebDriver, action: str) -> Any:
    return driver.find_element(By.CSS_SELECTOR, f'#actions button[data-action="{action}"]')


def _click_and_answer(driver: WebDriver, action: str, *, accept: bool = True) -> str:
    """Click the ``action`` button once it is enabled and answer its confirmation dialog;
    the dialog's text."""
    _wait(driver, f"the {action} button enabled", lambda d: _button(d, action).is_enabled())
    _button(driver, action).click()
    WebDriverWait(driver, WAIT_S).until(expected_conditions.alert_is_present())
    alert = driver.switch_to.alert
    text = alert.text
    if accept:
        alert.accept()
    else:
        alert.dismiss()
    return text


def _result(driver: WebDriver, state: str, text: str) -> None:
    """Wait until the message beside the buttons is ``text`` (or contains it) in ``state``
    (``ok`` or ``error``)."""

    def shown(d: WebDriver) -> bool:
        box = d.find_element(By.ID, "action-result")
        return box.get_attribute("data-state") == state and text in box.text

    _wait(driver, f"{state} message {text!r} beside the buttons", shown)


def _status(driver: WebDriver, status: str) -> None:
    _wait(
        driver,
        f"status {status}",
        lambda d: d.find_element(By.ID, "status").get_attribute("data-status") == status,
    )


def test_deactivate_and_activate_buttons_change_the_topologys_state(
    ui: str, cluster: str, browser: WebDriver, topology: TopologyRun
) -> None:
    browser.get(_topology_url(ui, cluster))
    _status(browser, "running")
    assert not _button(browser, "activate").is_enabled()  # it runs already
    # a dismissed confirmation does nothing
    text = _click_and_answer(browser, "deactivate", accept=False)
    assert text.startswith(f'Deactivate topology "{NAME}" on cluster "{cluster}"?'), text
    assert browser.find_element(By.ID, "action-result").text == ""
    assert topology.state.get_topology(NAME).state == topology_pb2.RUNNING

    _click_and_answer(browser, "deactivate")
    _result(browser, "ok", f"deactivated topology '{NAME}' on '{cluster}'")
    assert topology.state.get_topology(NAME).state == topology_pb2.PAUSED
    _status(browser, "paused")  # as the tracker reports it
    assert not _button(browser, "deactivate").is_enabled()

    _click_and_answer(browser, "activate")
    _result(browser, "ok", f"activated topology '{NAME}' on '{cluster}'")
    assert topology.state.get_topology(NAME).state == topology_pb2.RUNNING
    _status(browser, "running")
    assert not browser.find_element(By.ID, "error").is_displayed()


def test_restart_button_shows_why_a_topology_of_heron_run_cannot_restart(
    ui: str, cluster: str, browser: WebDriver, topology: TopologyRun
) -> None:
    """TopologyRun starts a topology as ``heron run`` does: no scheduler service."""
    browser.get(_topology_url(ui, cluster))
    _status(browser, "running")
    tmanager = topology.state.get_tmanager_location(NAME)
    _click_and_answer(browser, "restart")
    _result(browser, "error", f"topology '{NAME}' on cluster '{cluster}' has no scheduler service")
    _wait(browser, "the buttons enabled again", lambda d: _button(d, "restart").is_enabled())
    assert topology.state.get_tmanager_location(NAME) == tmanager  # nothing was restarted
    _status(browser, "running")


def _stmgr_pids(cluster: str, config_path: Path, home: Path, name: str) -> dict[int, int]:
    with cluster_state(cluster, config_path, heron_home=home) as (_, state):
        plan = state.get_physical_plan(name)
        return {} if plan is None else {s.container_id: s.pid for s in plan.stmgrs}


def test_restart_button_restarts_a_submitted_topology(
    ui: str,
    cluster: str,
    browser: WebDriver,
    submitted: str,
    clusters: tuple[Path, dict[str, Any]],
    home: Path,
) -> None:
    browser.get(f"{ui}/topologies/{cluster}/default/{submitted}")
    _status(browser, "running")
    before = _stmgr_pids(cluster, clusters[0], home, submitted)
    assert before, "the submitted topology has no physical plan"
    _click_and_answer(browser, "restart")
    _result(browser, "ok", f"restarted topology '{submitted}' on '{cluster}' (containers 0, 1)")
    after = _stmgr_pids(cluster, clusters[0], home, submitted)
    assert after.keys() == before.keys() and not set(after.values()) & set(before.values())
    _status(browser, "running")


def test_kill_button_kills_a_submitted_topology(
    ui: str,
    cluster: str,
    browser: WebDriver,
    submitted: str,
    clusters: tuple[Path, dict[str, Any]],
    home: Path,
) -> None:
    browser.get(f"{ui}/topologies/{cluster}/default/{submitted}")
    _status(browser, "running")
    stored = _stored(cluster, clusters[0], home, submitted)
    assert stored is not None
    assert topology_processes(stored.id)
    text = _click_and_answer(browser, "kill", accept=False)
    assert "This cannot be undone." in text, text
    assert _stored(cluster, clusters[0], home, submitted) is not None

    _click_and_answer(browser, "kill")
    # the page goes to the list, which says what happened
    _wait(
        browser,
        "the list page with the kill's notice",
        lambda d: (
            d.find_element(By.ID, "notice").is_displayed()
            and d.find_element(By.ID, "notice").text
            == f"killed topology '{submitted}' on '{cluster}'"
        ),
    )
    assert browser.current_url == f"{ui}/"
    assert _stored(cluster, clusters[0], home, submitted) is None
    assert topology_processes(stored.id) == []
    row = 'tr.topology[data-name="{}"]'
    _wait(
        browser,
        "the flaky topology listed",
        lambda d: d.find_elements(By.CSS_SELECTOR, row.format(NAME)),
    )
    _wait(
        browser,
        "the killed topology gone from the list",
        lambda d: not d.find_elements(By.CSS_SELECTOR, row.format(submitted)),
    )
