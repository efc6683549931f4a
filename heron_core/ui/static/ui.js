/* Heron UI: helpers shared by the pages (no libraries; every page script uses HeronUI). */
"use strict";

const HeronUI = (() => {
  const config = JSON.parse(document.body.dataset.config || "{}");
  const SVG_NS = "http://www.w3.org/2000/svg";

  /** An element: el("td", {class: "num"}, "3", child, ...); null/undefined children skipped. */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    return fill(node, attrs, children);
  }

  /** An SVG element, like el(). */
  function svg(tag, attrs, ...children) {
    return fill(document.createElementNS(SVG_NS, tag), attrs, children);
  }

  function fill(node, attrs, children) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  /** The path of this topology's API (or of the list, without a topology). */
  function apiPath(suffix) {
    const ids = [config.cluster, config.environ, config.topology].map(encodeURIComponent);
    return `${config.base}/api/topologies/${ids.join("/")}${suffix || ""}`;
  }

  /** A page path under the UI's base URL. */
  function pagePath(...parts) {
    return `${config.base}/${parts.map(encodeURIComponent).join("/")}`;
  }

  /** GET JSON from the UI's API; throws an Error whose message is readable. */
  function api(path) {
    return request(path, { headers: { Accept: "application/json" } });
  }

  /**
   * POST to one of the UI's actions with the server's token (config.csrf); the JSON answer,
   * or an Error with the server's message (e.g. the client's "no topology ..." refusal).
   */
  function post(path) {
    const headers = { Accept: "application/json" };
    if (config.csrf) headers[config.csrf.header] = config.csrf.token;
    return request(path, { method: "POST", headers });
  }

  async function request(path, init) {
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      throw new Error(`The Heron UI server cannot be reached (${err.message}).`);
    }
    let body = null;
    try {
      body = await response.json();
    } catch (err) {
      body = null;
    }
    if (!response.ok) {
      const detail = body && (body.error || body.detail);
      throw new Error(detail ? String(typeof detail === "string" ? detail : JSON.stringify(detail))
                             : `HTTP ${response.status} ${response.statusText}`);
    }
    return body;
  }

  /** Show (or, with null, hide) the page-wide error banner. */
  function showError(message) {
    const box = document.getElementById("error");
    box.textContent = message || "";
    box.hidden = !message;
  }

  /** A section of <main> with a title; its body is replaced on each render. */
  function section(id, title) {
    let node = document.getElementById(id);
    if (!node) {
      node = el("section", { id }, el("h2", {}, title), el("div", { class: "body" }));
      document.getElementById("main").append(node);
    }
    return node.querySelector(".body");
  }

  /** Replace a section's body; `render` errors become a readable message in the section. */
  function renderInto(body, render) {
    try {
      const content = render();
      body.replaceChildren(...[content].flat().filter((c) => c));
    } catch (err) {
      body.replaceChildren(el("div", { class: "section-error" }, `Cannot show this: ${err.message}`));
    }
  }

  /**
   * Call each loader now and again every config.refresh ms; a loader that throws shows its
   * message in its section (`onError`) and the banner; success clears both. Returns
   * `refresh()`, which loads again now (after the round in flight, if any).
   */
  function every(loaders) {
    const errors = new Map();
    let timer = null;
    let round = null;
    let again = false;
    async function tick() {
      await Promise.all(loaders.map(async (loader) => {
        try {
          await loader.load();
          errors.delete(loader.name);
        } catch (err) {
          errors.set(loader.name, `${loader.name}: ${err.message}`);
          if (loader.onError) loader.onError(err);
        }
      }));
      showError(errors.size ? [...errors.values()].join("\n") : null);
      document.getElementById("updated").textContent =
        `updated ${new Date().toLocaleTimeString()} · refresh every ${config.refresh / 1000}s`;
    }
    function refresh() {
      if (round) {
        again = true;
        return round;
      }
      clearTimeout(timer);
      round = (async () => {
        do {
          again = false;
          await tick();
        } while (again);
      })().finally(() => {
        round = null;
        timer = setTimeout(refresh, config.refresh);
      });
      return round;
    }
    refresh();
    return refresh;
  }

  const NOTICE_KEY = "heron-ui-notice";

  /** Keep a message for the next page this tab opens (e.g. the list, after a kill). */
  function noticeForNextPage(message) {
    try {
      sessionStorage.setItem(NOTICE_KEY, message);
    } catch (err) {
      /* storage disabled: the next page shows no notice */
    }
  }

  /** Show (once) the message a previous page kept with noticeForNextPage in #notice. */
  function showKeptNotice() {
    let message = null;
    try {
      message = sessionStorage.getItem(NOTICE_KEY);
      sessionStorage.removeItem(NOTICE_KEY);
    } catch (err) {
      message = null;
    }
    const box = document.getElementById("notice");
    if (box && message) {
      box.textContent = message;
      box.hidden = false;
    }
  }

  /** A number for a table cell: integers with separators, others with 2 decimals; – if none. */
  function number(value, digits) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    if (digits === undefined) digits = Number.isInteger(value) ? 0 : 2;
    return value.toLocaleString("en-US", { maximumFractionDigits: digits,
                                           minimumFractionDigits: digits });
  }

  showKeptNotice();
  return { config, el, svg, api, post, apiPath, pagePath, showError, section, renderInto, every,
           number, noticeForNextPage };
})();
