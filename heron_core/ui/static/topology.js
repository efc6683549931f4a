/* Heron UI: a topology's page (DAG, counters, charts, user metrics, physical plan, exceptions). */
"use strict";

(() => {
  const { el, svg, api, post, apiPath, pagePath, config, section, renderInto, every, number,
          noticeForNextPage } = HeronUI;
  const COLORS = ["#2f6fba", "#e8792b", "#12b76a", "#d92d20", "#7a5af8", "#0e9384", "#c11574",
                  "#667085", "#ca8504", "#1d2939"];
  const LABELS = { emitted: "Emitted", executed: "Executed", acked: "Acked", failed: "Failed",
                   latency: "Latency (ms)" };

  const main = document.getElementById("main");
  main.append(el("h1", { class: "title" }, config.topology, " ",
                 el("span", { id: "status", class: "status" }, "…")),
              el("p", { class: "muted" }, `cluster ${config.cluster} · environ ${config.environ}`));

  // --- actions ----------------------------------------------------------------------------
  // Each asks for confirmation, then POSTs to the UI server, which does what the `heron` verb
  // of that name does; its answer (or refusal) is shown beside the buttons.
  const named = `topology "${config.topology}" on cluster "${config.cluster}"`;
  const ACTIONS = [
    { name: "activate", label: "Activate", doing: "Activating",
      confirm: `Activate ${named}? Its spouts start emitting again.` },
    { name: "deactivate", label: "Deactivate", doing: "Deactivating",
      confirm: `Deactivate ${named}? Its spouts stop emitting until it is activated again; ` +
               "tuples already emitted finish." },
    { name: "restart", label: "Restart", doing: "Restarting",
      confirm: `Restart ${named}? Every container's processes are stopped and started again.` },
    { name: "kill", label: "Kill", doing: "Killing", danger: true,
      confirm: `Kill ${named}? All its processes stop and its state and working directory ` +
               "are deleted. This cannot be undone." },
  ];
  let status = null;
  let busy = false;
  const result = el("span", { id: "action-result", class: "action-result", role: "status" });
  const buttons = ACTIONS.map((a) => el("button", {
    type: "button", class: a.danger ? "action danger" : "action", "data-action": a.name,
    onclick: () => act(a),
  }, a.label));
  main.append(el("div", { class: "actions", id: "actions" }, buttons, result));

  /** Enable the buttons that make sense in the topology's status (all when it is unknown). */
  function updateButtons() {
    for (const button of buttons) {
      const action = button.dataset.action;
      button.disabled = busy || (action === "activate" && status === "running") ||
                        (action === "deactivate" && status === "paused");
    }
  }

  function showResult(state, text) {
    result.dataset.state = state;
    result.textContent = text;
  }

  async function act(action) {
    if (busy || !window.confirm(action.confirm)) return;
    busy = true;
    updateButtons();
    showResult("pending", `${action.doing} ${config.topology}…`);
    let answer;
    try {
      answer = await post(apiPath(`/${action.name}`));
    } catch (err) {
      showResult("error", err.message);
      busy = false;
      updateButtons();
      return;
    }
    if (action.name === "kill") {  // gone: say so on the list (the buttons stay disabled)
      showResult("ok", answer.message);
      noticeForNextPage(answer.message);
      window.location.assign(pagePath(""));
      return;
    }
    showResult("ok", answer.message);
    busy = false;
    updateButtons();
    refresh();  // the tracker shows the new state (the periodic refresh catches up if late)
  }

  const dagBody = section("dag", "Logical plan");
  const countersBody = section("counters", "Components");
  const chartsBody = section("charts", "Over time (minutely)");
  const userMetricsBody = section("user-metrics", "User metrics");
  const physicalBody = section("physical", "Physical plan");
  const exceptionsBody = section("exceptions", "Exceptions");
  const failed = (body) => (err) =>
    renderInto(body, () => el("div", { class: "section-error" }, err.message));

  // --- DAG --------------------------------------------------------------------------------
  function drawDag(dag) {
    const W = 170, H = 40, GAP_X = 90, GAP_Y = 28, PAD = 16;
    const where = new Map();
    let width = 0, height = 0;
    for (const n of dag.nodes) {
      const x = PAD + n.layer * (W + GAP_X), y = PAD + n.row * (H + GAP_Y);
      where.set(n.name, { x, y });
      width = Math.max(width, x + W + PAD);
      height = Math.max(height, y + H + PAD);
    }
    const edges = dag.edges.map((e) => {
      const a = where.get(e.source), b = where.get(e.target);
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      const back = x2 <= x1;
      const bend = back ? 60 : (x2 - x1) / 2;
      const path = back
        ? `M${x1},${y1} C${x1 + bend},${y1 - 60} ${x2 - bend},${y2 - 60} ${x2},${y2}`
        : `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
      return svg("g", { class: "edge-group", "data-source": e.source, "data-target": e.target },
        svg("path", { class: "edge", d: path, "marker-end": "url(#arrow)" },
            svg("title", {}, `${e.source} → ${e.target}: stream ${e.stream}` +
                             (e.grouping ? ` (${e.grouping})` : ""))),
        svg("text", { class: "edge-label", x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 5 }, e.stream));
    });
    const nodes = dag.nodes.map((n) => {
      const { x, y } = where.get(n.name);
      return svg("g", { class: `node ${n.kind}`, "data-component": n.name },
        svg("rect", { x, y, width: W, height: H, rx: 6 }),
        svg("text", { x: x + W / 2, y: y + H / 2 }, n.name.length > 22 ? `${n.name.slice(0, 21)}…` : n.name),
        svg("title", {}, `${n.kind} ${n.name}`));
    });
    return svg("svg", { class: "dag", id: "dag-svg", viewBox: `0 0 ${width} ${height}`,
                        style: `max-width:${width}px`, role: "img",
                        "aria-label": "logical plan of the topology" },
      svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8a94a6" }))),
      edges, nodes);
  }

  // --- counters ---------------------------------------------------------------------------
  let interval = null;
  let lastMetrics = null;
  function drawCounters() {
    const m = lastMetrics;
    if (interval === null) interval = m.intervals[0];
    const tabs = el("div", { class: "tabs" }, m.intervals.map((label) => el("button", {
      class: label === interval ? "active" : null, "data-interval": label,
      onclick: () => { interval = label; renderInto(countersBody, drawCounters); },
    }, label)));
    const head = el("tr", {}, el("th", {}, "Component"), el("th", {}, "Kind"),
                    m.counters.map((c) => el("th", { class: "num" }, LABELS[c] || c)));
    const rows = m.components.map((c) => el("tr", { class: "component", "data-component": c.name },
      el("td", {}, c.name), el("td", {}, c.kind),
      m.counters.map((k) => el("td", { class: "num", "data-counter": k },
                               number(c.values[interval][k], k === "latency" ? 2 : 0)))));
    return [tabs, el("table", { id: "counters-table" }, el("thead", {}, head), el("tbody", {}, rows))];
  }

  // --- charts -----------------------------------------------------------------------------
  function drawChart(chart, start, end) {
    const W = 560, H = 200, L = 52, R = 10, T = 10, B = 24;
    const points = chart.series.flatMap((s) => s.points);
    const max = Math.max(1, ...points.map((p) => p[1]));
    // from the first point (at least the last 10 minutes) to now
    const t0 = Math.max(start, Math.min(end - 600, ...points.map((p) => p[0])));
    const t1 = Math.max(end, t0 + 60, ...points.map((p) => p[0]));
    const X = (t) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
    const Y = (v) => T + (1 - v / max) * (H - T - B);
    const grid = [0, 0.5, 1].map((f) => [
      svg("line", { class: "grid", x1: L, x2: W - R, y1: Y(max * f), y2: Y(max * f) }),
      svg("text", { x: L - 4, y: Y(max * f) + 3, "text-anchor": "end" }, number(max * f, max * f < 10 ? 1 : 0)),
    ]);
    const clock = (t) => new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const axis = [
      svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }),
      svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }),
      svg("text", { x: L, y: H - 8 }, clock(t0)),
      svg("text", { x: W - R, y: H - 8, "text-anchor": "end" }, clock(t1)),
    ];
    const lines = chart.series.map((s, i) => {
      const color = COLORS[i % COLORS.length];
      return svg("g", { class: "series", "data-series": s.name },
        s.points.length > 1 ? svg("polyline", { stroke: color,
          points: s.points.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" ") }) : null,
        s.points.map((p) => svg("circle", { class: "point", cx: X(p[0]), cy: Y(p[1]), r: 2.6, fill: color },
          svg("title", {}, `${s.name} at ${clock(p[0])}: ${number(p[1], 2)}`))));
    });
    const legend = el("div", { class: "legend" }, chart.series.map((s, i) =>
      el("span", {}, el("i", { style: `background:${COLORS[i % COLORS.length]}` }), s.name)));
    const empty = points.length ? null : svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" },
                                             "no data yet");
    return el("div", { class: "chart-box" }, el("h3", {}, chart.title),
      svg("svg", { class: "chart", "data-chart": chart.id, viewBox: `0 0 ${W} ${H}`,
                   preserveAspectRatio: "none" }, grid, axis, lines, empty),
      chart.series.length ? legend : el("div", { class: "legend muted" }, "no series"));
  }

  // --- user metrics -----------------------------------------------------------------------
  // Per instance: whether a user metric adds up over instances is not known here.
  function drawUserMetrics(data) {
    const withAny = data.components.filter((c) => c.rows.length);
    if (!withAny.length) return el("p", { class: "muted", id: "no-user-metrics" }, "No user metrics reported yet.");
    const cell = (value, which) => el("td", { class: "num", "data-window": which,
                                             "data-value": value === null ? null : value }, number(value));
    return withAny.map((c) => el("div", { class: "user-metrics", "data-component": c.name },
      el("h3", {}, c.name, el("span", { class: "muted" }, ` · ${c.kind}`)),
      el("table", { class: "user-metrics-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "Metric"), el("th", {}, "Instance"),
                                 el("th", { class: "num" }, data.window), el("th", { class: "num" }, "All time"))),
        el("tbody", {}, c.rows.map((r) => el("tr", { class: "user-metric", "data-metric": r.metric,
                                                      "data-instance": r.instance },
          el("td", {}, r.metric), el("td", {}, r.instance),
          cell(r.recent, "recent"), cell(r.all_time, "all-time")))))));
  }

  // --- physical plan ----------------------------------------------------------------------
  function drawPhysical(plan) {
    const instances = plan.instances || {};
    const stmgrs = Object.values(plan.stmgrs || {}).sort((a, b) =>
      String(a.id).localeCompare(String(b.id), undefined, { numeric: true }));
    if (!stmgrs.length) return el("p", { class: "muted" }, "No stream manager has registered yet.");
    return stmgrs.map((s) => {
      const ids = (s.instance_ids || Object.keys(instances).filter((i) => instances[i].stmgr_id === s.id))
        .slice().sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
      return el("div", { class: "container", "data-stmgr": s.id },
        el("h3", {}, `${s.id}`, el("span", { class: "muted" },
          ` · host ${s.host || "?"} · pid ${s.pid ?? "?"} · port ${s.port ?? "?"} · shell port ${s.shell_port ?? "?"}`)),
        el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "Instance"), el("th", {}, "Component"),
                                            el("th", {}, "Log"))),
          el("tbody", {}, ids.map((id) => el("tr", { class: "instance", "data-instance": id },
            el("td", {}, id), el("td", {}, (instances[id] || {}).name || ""),
            el("td", {}, el("a", { class: "log-link", "data-instance": id,
              href: pagePath("topologies", config.cluster, config.environ, config.topology,
                             "instances", id, "log") }, "log")))))));
    });
  }

  // --- exceptions -------------------------------------------------------------------------
  const openTraces = new Set();
  function drawExceptions(data) {
    const withAny = data.components.filter((c) => c.summary.length || c.traces.length);
    if (!withAny.length) return el("p", { class: "muted", id: "no-exceptions" }, "No exceptions reported.");
    return withAny.map((c) => el("div", { class: "component-exceptions", "data-component": c.name },
      el("h3", {}, c.name),
      el("table", { class: "exception-summary" },
        el("thead", {}, el("tr", {}, el("th", {}, "Exception"), el("th", { class: "num" }, "Count"),
                                 el("th", {}, "First"), el("th", {}, "Last"))),
        el("tbody", {}, c.summary.map((e) => el("tr", { class: "exception" },
          el("td", { title: e.class_name }, e.title || e.class_name), el("td", { class: "num" }, number(Number(e.count))),
          el("td", {}, e.firsttime), el("td", {}, e.lasttime))))),
      c.traces.map((t, i) => {
        const key = `${c.name}/${t.instance_id}/${i}`;
        return el("details", { class: "trace", open: openTraces.has(key),
                               ontoggle: (ev) => ev.target.open ? openTraces.add(key) : openTraces.delete(key) },
          el("summary", {}, `${t.instance_id}${t.hostname ? ` on ${t.hostname}` : ""}: ` +
                            `${t.title || "exception"} · ${t.count}× (last ${t.lasttime})`),
          el("pre", {}, t.stack_trace));
      })));
  }

  const refresh = every([
    { name: "Logical and physical plan", onError: (err) => { failed(dagBody)(err); failed(physicalBody)(err); },
      load: async () => {
        const t = await api(apiPath(""));
        renderInto(dagBody, () => drawDag(t.dag));
        renderInto(physicalBody, () => drawPhysical(t.physical_plan));
        const badge = document.getElementById("status");
        badge.textContent = t.status;
        badge.className = `status ${t.status}`;
        badge.dataset.status = t.status;
        status = t.status;
        updateButtons();
      } },
    { name: "Counters", onError: failed(countersBody),
      load: async () => { lastMetrics = await api(apiPath("/metrics")); renderInto(countersBody, drawCounters); } },
    { name: "Charts", onError: failed(chartsBody),
      load: async () => {
        const t = await api(apiPath("/timeline"));
        renderInto(chartsBody, () => el("div", { class: "charts" },
                                         t.charts.map((c) => drawChart(c, t.starttime, t.endtime))));
      } },
    { name: "User metrics", onError: failed(userMetricsBody),
      load: async () => {
        const u = await api(apiPath("/usermetrics"));
        renderInto(userMetricsBody, () => drawUserMetrics(u));
      } },
    { name: "Exceptions", onError: failed(exceptionsBody),
      load: async () => { const e = await api(apiPath("/exceptions")); renderInto(exceptionsBody, () => drawExceptions(e)); } },
  ]);
})();
