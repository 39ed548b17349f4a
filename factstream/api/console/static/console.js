// factstream console: the API key lives in sessionStorage (never in a URL) and goes out as a
// bearer token; pages are server-rendered shells, their data server-rendered fragments.
"use strict";
(() => {
  const KEY = "factstream.key";
  const NS = "factstream.namespace";
  const $ = (selector) => document.querySelector(selector);
  let feedAbort = null;

  class Failure extends Error {
    constructor(status, detail) {
      super(detail);
      this.status = status;
    }
  }

  const key = () => sessionStorage.getItem(KEY);
  const urlNamespace = () => new URLSearchParams(location.search).get("namespace");
  const namespace = () => urlNamespace() || sessionStorage.getItem(NS) || "";
  const say = (text) => { $("#status").textContent = text; };

  async function call(url, options = {}) {
    const headers = { ...(options.headers || {}), Authorization: `Bearer ${key()}` };
    const response = await fetch(url, { ...options, headers });
    if (response.ok) return response;
    let detail = response.statusText;
    try {
      const body = await response.json();
      detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    } catch (_) { /* not JSON */ }
    if (response.status === 401) {
      sessionStorage.removeItem(KEY);
      showLogin(`401 Unauthorized: ${detail}`);
    }
    throw new Failure(response.status, detail);
  }

  function showError(element, error) {
    const p = document.createElement("p");
    p.className = "error";
    p.setAttribute("role", "alert");
    const names = { 401: "Unauthorized", 403: "Forbidden", 404: "Not found", 422: "Invalid" };
    p.textContent = `${error.status || ""} ${names[error.status] || "Error"}: ${error.message}`;
    element.replaceChildren(p);
  }

  function formParams(form) {
    const out = {};
    for (const [name, value] of new FormData(form)) {
      if (value === "") continue;
      const input = form.elements[name];
      out[name] = input.type === "datetime-local" ? new Date(value).toISOString() : value;
    }
    return out;
  }

  async function load(element, extra = {}) {
    const params = new URLSearchParams({ namespace: namespace() });
    for (const [name, value] of Object.entries(extra)) params.set(name, value);
    element.setAttribute("aria-busy", "true");
    try {
      const response = await call(`${element.dataset.fragment}?${params}`);
      element.innerHTML = await response.text();
    } catch (error) {
      showError(element, error);
    } finally {
      element.setAttribute("aria-busy", "false");
    }
  }

  async function* events(response) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = "message";
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (data) yield { event, data: JSON.parse(data) };
      }
    }
  }

  // -- ask --------------------------------------------------------------------------------

  function link(href, text) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function truth(value) {
    const span = document.createElement("span");
    span.className = `truth ${value}`;
    span.textContent = String(value);
    return span;
  }

  function renderFacts(facts) {
    const ns = encodeURIComponent(namespace());
    const items = facts.map((fact) => {
      const li = document.createElement("li");
      li.className = "cited-fact";
      li.append(link(`/ui/facts/${encodeURIComponent(fact.fact_id)}?namespace=${ns}`, fact.text), " ", truth(fact.truth));
      if (fact.turn_ids.length && fact.history.length) {
        // The conversation turns it was said in, in the document of its first change.
        const said = fact.history[0].document_id;
        const turns = document.createElement("span");
        turns.className = "cited-turns small muted";
        turns.append(" · said in turn", fact.turn_ids.length > 1 ? "s " : " ");
        fact.turn_ids.forEach((id, i) => {
          if (i) turns.append(", ");
          turns.append(link(`/ui/documents/${encodeURIComponent(said)}?namespace=${ns}#turn-${id}`, id));
        });
        li.append(turns);
      }
      const history = document.createElement("ul");
      history.className = "history";
      for (const entry of fact.history) {
        const item = document.createElement("li");
        const doc = `/ui/documents/${encodeURIComponent(entry.document_id)}?namespace=${ns}#edit-${entry.edit_id}`;
        item.append(truth(entry.truth), ` from ${entry.ts.slice(0, 10)} · document `, link(doc, entry.document_id));
        history.append(item);
      }
      li.append(history);
      return li;
    });
    $("#cited").replaceChildren(...items);
  }

  async function ask(form) {
    const answer = $("#answer");
    const reasoning = $("#reasoning");
    const params = formParams(form);
    const body = { question: params.question, namespace: namespace(), stream: true };
    if (params.as_of) body.as_of = params.as_of;
    if (params.valid_at) body.valid_at = params.valid_at;
    answer.replaceChildren();
    reasoning.textContent = "";
    $("#answer-meta").textContent = "";
    $("#cited").replaceChildren();
    answer.setAttribute("aria-busy", "true");
    answer.dataset.tokens = "0";
    let attempt = 0;
    try {
      const response = await call("/v1/ask", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      for await (const { event, data } of events(response)) {
        if (event === "facts") {
          renderFacts(data.facts);
        } else if (event === "token") {
          if (data.attempt !== attempt) {
            attempt = data.attempt;
            answer.textContent = "";
            reasoning.textContent = "";
          }
          answer.dataset.tokens = String(Number(answer.dataset.tokens) + 1);
          if (data.fields.answer) answer.append(data.fields.answer);
          if (data.fields.reasoning) reasoning.append(data.fields.reasoning);
        } else if (event === "answer") {
          answer.textContent = data.answer;
          reasoning.textContent = data.reasoning;
          renderFacts(data.facts);
          const valid = data.valid_time ? ` · valid time: ${data.valid_time.description}` : "";
          $("#answer-meta").textContent = `${data.model} · ${data.prompt}${valid}`;
        } else if (event === "error") {
          throw new Failure(502, data.detail);
        }
      }
    } catch (error) {
      showError(answer, error);
    } finally {
      answer.setAttribute("aria-busy", "false");
    }
  }

  // -- live feed --------------------------------------------------------------------------

  async function follow(list) {
    if (feedAbort) feedAbort.abort();
    feedAbort = new AbortController();
    const state = $("#feed-state");
    state.textContent = "Connecting…";
    try {
      const params = new URLSearchParams({ namespace: namespace() });
      const response = await call(`${list.dataset.stream}?${params}`, { signal: feedAbort.signal });
      for await (const { event, data } of events(response)) {
        if (event === "ready") {
          state.textContent = `Following the changelog of ${namespace()}.`;
          list.dataset.ready = "true";
        } else if (event === "edit") {
          list.insertAdjacentHTML("afterbegin", data.html);
        }
      }
      state.textContent = "The feed ended.";
    } catch (error) {
      if (error.name !== "AbortError") showError(state, error);
    }
  }

  // -- session ----------------------------------------------------------------------------

  function showLogin(message) {
    $("#session").hidden = true;
    $("#login").hidden = false;
    if (message) say(message);
    $("#login-key").focus();
  }

  async function start() {
    $("#login").hidden = true;
    $("#session").hidden = false;
    const picker = $("#namespace");
    try {
      const response = await call("/ui/f/namespaces");
      picker.innerHTML = await response.text();
    } catch (error) {
      if (error.status !== 401) say(`${error.status}: ${error.message}`);
      return;
    }
    const wanted = namespace();
    const known = [...picker.options].map((o) => o.value);
    if (known.includes(wanted)) picker.value = wanted;
    if (!urlNamespace() || !known.includes(wanted)) sessionStorage.setItem(NS, picker.value);
    say(`Logged in; namespace ${namespace() || "(none)"}.`);
    for (const element of document.querySelectorAll("[data-autoload]")) load(element);
    const feed = $("#feed");
    if (feed) follow(feed);
  }

  function bind() {
    $("#login").addEventListener("submit", (event) => {
      event.preventDefault();
      sessionStorage.setItem(KEY, $("#login-key").value);
      $("#login-key").value = "";
      start();
    });
    $("#logout").addEventListener("click", () => {
      sessionStorage.clear();
      if (feedAbort) feedAbort.abort();
      showLogin("Logged out.");
    });
    $("#namespace").addEventListener("change", (event) => {
      sessionStorage.setItem(NS, event.target.value);
      if (urlNamespace()) {
        const url = new URL(location.href);
        url.searchParams.set("namespace", event.target.value);
        location.assign(url);
        return;
      }
      start();
    });
    const askForm = $("#ask");
    if (askForm) askForm.addEventListener("submit", (event) => { event.preventDefault(); ask(askForm); });
    for (const form of document.querySelectorAll("form[data-target]")) {
      const target = document.getElementById(form.dataset.target);
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        target.dataset.params = JSON.stringify(formParams(form));
        load(target, formParams(form));
      });
    }
    document.addEventListener("click", (event) => {
      const next = event.target.closest(".next-page");
      if (!next) return;
      const target = next.closest("[data-fragment]");
      const params = JSON.parse(target.dataset.params || "{}");
      load(target, { ...params, cursor: next.dataset.cursor });
    });
  }

  document.addEventListener("DOMContentLoaded", () => {
    bind();
    if (key()) start();
    else showLogin();
  });
})();
