/* Heron UI: the topology list (searchable, sortable). */
"use strict";

(() => {
  const { el, api, config, section, renderInto, every, pagePath } = HeronUI;
  const columns = [
    ["name", "Name"], ["cluster", "Cluster"], ["environ", "Environ"], ["status", "Status"],
    ["submitted_by", "Submitted by"], ["submitted_at", "Submitted at (UTC)"],
  ];
  let rows = [];
  let sortKey = "name";
  let ascending = true;

  const body = section("topologies", "Topologies");
  const search = el("input", { type: "search", id: "search", placeholder: "Search name, cluster, environ, role, submitter…",
                                oninput: draw, "aria-label": "Search topologies" });
  body.before(search);

  function matches(row, words) {
    const text = [row.name, row.cluster, row.environ, row.role, row.status, row.submitted_by,
                  row.release_version].join(" ").toLowerCase();
    return words.every((w) => text.includes(w));
  }

  function draw() {
    const words = search.value.toLowerCase().split(/\s+/).filter((w) => w);
    const shown = rows.filter((r) => matches(r, words)).sort((a, b) => {
      const order = String(a[sortKey]).localeCompare(String(b[sortKey]));
      return ascending ? order : -order;
    });
    renderInto(body, () => {
      if (!rows.length) return el("p", { class: "muted" }, "No topologies are running.");
      const head = el("tr", {}, columns.map(([key, label]) => el("th", {
        class: "sortable", onclick: () => { ascending = key === sortKey ? !ascending : true; sortKey = key; draw(); },
      }, label + (key === sortKey ? (ascending ? " ▲" : " ▼") : ""))));
      const lines = shown.map((r) => el("tr", { class: "topology", "data-name": r.name },
        el("td", {}, el("a", { href: pagePath("topologies", r.cluster, r.environ, r.name) }, r.name)),
        el("td", {}, r.cluster), el("td", {}, r.environ),
        el("td", {}, el("span", { class: `status ${r.status}` }, r.status)),
        el("td", {}, r.submitted_by), el("td", {}, r.submitted_at)));
      return el("table", { id: "topology-table" }, el("thead", {}, head), el("tbody", {}, lines),
        shown.length ? null : el("caption", { class: "muted" }, "No topology matches the search."));
    });
  }

  every([{
    name: "Topologies",
    load: async () => {
      rows = (await api(`${config.base}/api/topologies`)).topologies;
      draw();
    },
    onError: (err) => renderInto(body, () => el("div", { class: "section-error" }, err.message)),
  }]);
})();
