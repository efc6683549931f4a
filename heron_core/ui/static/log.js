/* Heron UI: the tail of an instance's log, with a download link. */
"use strict";

(() => {
  const { el, api, apiPath, config, section, renderInto, every, number } = HeronUI;
  const logPath = apiPath(`/instances/${encodeURIComponent(config.instance)}/log`);
  const body = section("log", `Log of ${config.instance}`);
  const download = el("a", { id: "download", href: `${logPath}/download`, download: true }, "download the whole log");
  const info = el("p", { class: "muted" });
  body.before(el("p", {}, download), info);

  every([{
    name: "Log",
    onError: (err) => renderInto(body, () => el("div", { class: "section-error" }, err.message)),
    load: async () => {
      const log = await api(logPath);
      const old = body.querySelector("pre");
      const atBottom = !old || old.scrollTop + old.clientHeight >= old.scrollHeight - 4;
      info.textContent = `${log.path} in container ${log.container}: ${number(log.size)} bytes` +
        (log.offset > 0 ? `, showing the last ${number(log.size - log.offset)}` : "");
      renderInto(body, () => el("pre", { class: "log", id: "log-text" }, log.data || "(empty)"));
      const pre = body.querySelector("pre");
      if (atBottom) pre.scrollTop = pre.scrollHeight;
      else if (old) pre.scrollTop = old.scrollTop;
    },
  }]);
})();
