"use strict";
// Rows live in the page as gzip+base64 JSON blobs, decoded (DecompressionStream) only when their task is opened,
// then filtered and shown a page at a time. Row data only ever reaches the page through textContent.
(function () {
  const INDEX = JSON.parse(document.getElementById("pw-index").textContent);
  const PAGE = 50;
  const decoded = new Map();

  function decode(id) {
    if (!decoded.has(id)) {
      decoded.set(id, (async () => {
        const bin = atob(document.getElementById(id).textContent.trim());
        const bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
        return JSON.parse(await new Response(stream).text());
      })());
    }
    return decoded.get(id);
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  const show = (v) => (v === undefined ? "" : v === null ? "null" : typeof v === "string" ? v : JSON.stringify(v));
  function verdict(r) {
    if (r.error) return ["error", "err"];
    if (r.correct === true) return ["✓ correct", "ok"];
    if (r.correct === false) return ["✗ wrong", "bad"];
    return ["–", "na"];
  }
  const isLabelMap = (p) => p !== null && typeof p === "object" && !Array.isArray(p) && !("role" in p);

  function partText(part) {
    if (typeof part === "string") return part;
    if (part && part.type === "text") return part.text;
    if (part && typeof part === "object") {
      const kind = part.type || "part";
      const v = part[kind];
      const url = v && typeof v === "object" ? v.url : v;
      const u = typeof url === "string" ? url : "";
      return "[" + kind + ": " + (u.length > 80 ? u.slice(0, 77) + "…" + " (" + u.length + " chars)" : u) + "]";
    }
    return show(part);
  }

  // a message's role in the template (HUMAN) and as sent on the wire (user), as the HTTP model maps it
  const WIRE = INDEX.wire_roles || {};
  const wireRole = (role) => (typeof role === "string" ? (WIRE[role] || role.toLowerCase()) : "");

  // the full text of a prompt (messages' contents joined; a ppl row's first label), for the shared prefix
  function fullText(p) {
    if (typeof p === "string") return p;
    if (Array.isArray(p)) return p.map((m) => (typeof m === "string" ? m : Array.isArray(m) ? "" : show(m.prompt !== undefined ? m.prompt : m.content))).join("\n");
    if (isLabelMap(p)) { const k = Object.keys(p)[0]; return k === undefined ? "" : fullText(p[k]); }
    return show(p);
  }

  // the start every row of a task shares (its in-context examples, instructions), cut back to a line start;
  // read from up to 1000 rows spread over the task, and checked on each row before it is cut off
  function sharedPrefix(rows) {
    if (rows.length < 2) return "";
    const step = Math.max(1, Math.floor(rows.length / 1000));
    let pre = fullText(rows[0].prompt);
    for (let i = step; i < rows.length && pre; i += step) {
      const t = fullText(rows[i].prompt);
      let n = 0;
      const m = Math.min(pre.length, t.length);
      while (n < m && pre.charCodeAt(n) === t.charCodeAt(n)) n++;
      pre = pre.slice(0, n);
    }
    return pre.slice(0, pre.lastIndexOf("\n") + 1);
  }

  function ownText(p, prefix) {
    const t = fullText(p);
    return prefix && t.startsWith(prefix) ? t.slice(prefix.length) : t;
  }

  // a prompt the model cut to fit max_seq_len: the dropped start struck through, or the decoded text it received
  function renderCut(p, cut) {
    if (typeof p === "string" && typeof cut.dropped_chars === "number") {
      const pre = el("pre", { class: "prompt prompt-text cut" });
      pre.append(el("del", { class: "dropped", title: "dropped: the model never received this part", text: p.slice(0, cut.dropped_chars) }),
        document.createTextNode(p.slice(cut.dropped_chars)));
      return pre;
    }
    if (typeof cut.sent_text === "string") {
      return el("div", {}, el("pre", { class: "prompt prompt-sent", text: cut.sent_text }),
        el("details", {}, el("summary", { text: "the prompt before it was cut" }), renderPrompt(p)));
    }
    return renderPrompt(p);
  }

  function cutNote(cut) {
    const why = "max_seq_len " + cut.max_seq_len + (cut.reserved ? " less max_out_len " + cut.reserved : "");
    return el("p", { class: "cut-note", text: "cut to fit (" + why + "): the model received the last " + cut.tokens_after + " of " +
      cut.tokens_before + " tokens; the first " + (cut.tokens_before - cut.tokens_after) + " (struck through) were dropped from the " + cut.side });
  }

  // the prompt exactly as sent: a text, or the message list (role + content, content parts labelled)
  function renderPrompt(p) {
    if (typeof p === "string") return el("pre", { class: "prompt prompt-text", text: p });
    if (Array.isArray(p)) {
      const box = el("div", { class: "messages" });
      for (const m of p) {
        if (typeof m === "string") { box.append(el("pre", { class: "prompt seg", text: m })); continue; }
        if (Array.isArray(m)) { box.append(el("pre", { class: "prompt ids", text: "<token ids " + JSON.stringify(m) + ">" })); continue; }
        const body = m.prompt !== undefined ? m.prompt : m.content;
        const role = show(m.role);
        const roleBox = el("div", { class: "role", text: role });
        const wire = wireRole(m.role);
        if (wire && wire !== role) roleBox.append(el("span", { class: "wire", title: "the role as sent to the model", text: "→ " + wire }));
        const msg = el("div", { class: "msg r-" + role.replace(/[^A-Za-z0-9_-]/g, ""), "data-wire-role": wire }, roleBox);
        msg.append(el("pre", { class: "prompt msg-body", text: typeof body === "string" ? body : (Array.isArray(body) ? body.map(partText).join("\n") : show(body)) }));
        box.append(msg);
      }
      return box;
    }
    return el("pre", { class: "prompt", text: show(p) });
  }

  function dl(pairs) {
    const d = el("dl");
    for (const [k, v, cls] of pairs) d.append(el("dt", { text: k }), el("dd", cls ? { class: cls } : {}, v instanceof Node ? v : el("pre", { text: show(v) })));
    return d;
  }

  const SHOWN = new Set(["index", "prompt", "output", "prediction", "gold", "correct", "shot_ids", "retrieved_ids", "error", "turn_id", "success", "truncated"]);

  function rowDetail(t, r) {
    const [vtext, vcls] = verdict(r);
    const parts = [el("h3", { text: t.dataset + " × " + t.model + " · row " + show(r.index) + (r.turn_id !== undefined ? " · turn " + r.turn_id : "") }),
      el("span", { class: vcls + " verdict", text: vtext })];
    const facts = [];
    if (r.error) facts.push(["error", r.error, "err"]);
    if (!isLabelMap(r.output)) facts.push(["raw answer", r.output]);
    facts.push(["postprocessed answer", r.prediction], ["gold", r.gold]);
    facts.push(["in-context examples", r.shot_ids === undefined ? "(none recorded)" : r.shot_ids]);
    if (r.retrieved_ids !== undefined) facts.push(["retrieved (before fitting max_seq_len)", r.retrieved_ids]);
    parts.push(dl(facts));
    if (isLabelMap(r.prompt) || isLabelMap(r.output)) {
      const labels = Object.keys(isLabelMap(r.output) ? r.output : r.prompt);
      const tb = el("tbody");
      for (const lab of labels) {
        const chosen = show(r.prediction) === lab;
        tb.append(el("tr", {}, el("td", { class: chosen ? "chosen" : "", text: lab + (chosen ? " ◀ chosen" : "") }),
          el("td", { class: "num", text: isLabelMap(r.output) ? show(r.output[lab]) : "" })));
      }
      parts.push(el("h4", { text: "score per label" }),
        el("table", { class: "grid ppl" }, el("thead", {}, el("tr", {}, el("th", { text: "label" }), el("th", { text: t.mode === "ppl" ? "perplexity (lowest is chosen)" : "score (output)" }))), tb));
      if (isLabelMap(r.prompt)) {
        parts.push(el("h4", { text: "prompt per label (exactly as sent)" }));
        for (const lab of Object.keys(r.prompt)) {
          const d = el("details", { class: "label-prompt", "data-label": lab }, el("summary", { text: "label " + lab }), renderPrompt(r.prompt[lab]));
          if (lab === show(r.prediction)) d.open = true;
          parts.push(d);
        }
      }
    } else if (r.truncated) {
      parts.push(el("h4", { text: "prompt as the model received it (cut)" }), cutNote(r.truncated), renderCut(r.prompt, r.truncated));
    } else {
      parts.push(el("h4", { text: "prompt (exactly as sent)" }), renderPrompt(r.prompt));
    }
    const judge = Object.keys(r).filter((k) => k.toLowerCase().startsWith("judge"));
    if (judge.length) parts.push(el("h4", { text: "LLM judge" }), dl(judge.map((k) => [k, r[k]])));
    const other = Object.keys(r).filter((k) => !SHOWN.has(k) && !judge.includes(k));
    if (other.length) parts.push(el("h4", { text: "other fields" }), dl(other.map((k) => [k, r[k]])));
    parts.push(el("details", {}, el("summary", { text: "prompt as JSON (predictions file)" }),
      el("pre", { id: "detail-prompt-json", text: JSON.stringify(r.prompt) })));
    return parts;
  }

  // the same row as the run's other models saw and answered it (their blobs are decoded on demand)
  async function otherModels(t, r, box) {
    const peers = tasks.filter((o) => o !== t && o.run === t.run && o.dataset === t.dataset && o.n > 0);
    if (!peers.length) return;
    const stamp = (box.dataset.stamp = String(Number(box.dataset.stamp || 0) + 1));  // a later click wins
    const tb = el("tbody");
    const mine = JSON.stringify(r.prompt);
    for (const o of peers) {
      const rows = await decode(o.blob);
      const same = rows.find((x) => x.index === r.index && x.turn_id === r.turn_id);
      if (!same) continue;
      const [vt, vc] = verdict(same);
      const pick = el("a", { href: "#rows", text: o.model });
      pick.addEventListener("click", () => {
        sel.value = String(tasks.indexOf(o));
        openTask(tasks.indexOf(o)).then(() => showDetail(o, same));
      });
      tb.append(el("tr", {}, el("td", {}, pick), el("td", { class: vc, text: vt }), el("td", { text: show(same.prediction) }),
        el("td", { text: JSON.stringify(same.prompt) === mine ? "same prompt" : "different prompt" })));
    }
    if (!tb.children.length || box.dataset.stamp !== stamp) return;
    box.append(el("h4", { text: "the same row on the other models" }),
      el("table", { class: "grid peers" }, el("thead", {}, el("tr", {}, el("th", { text: "model" }), el("th", { text: "verdict" }),
        el("th", { text: "prediction" }), el("th", { text: "prompt" }))), tb));
  }

  // ------------------------------------------------------------------ rows section
  const tasks = [];
  INDEX.runs.forEach((run, ri) => run.tasks.forEach((t) => tasks.push(Object.assign({ run: ri }, t))));
  const sel = document.getElementById("task-select");
  const runTag = (t) => (INDEX.mode === "compare" ? (t.run === 0 ? "A · " : "B · ") : "");
  tasks.forEach((t, k) => sel.append(el("option", { value: String(k), text: runTag(t) + t.dataset + " × " + t.model + " (" + t.n + " rows, " + t.status + ")" })));
  const state = { task: null, rows: [], hay: null, view: [], page: 0, prefix: "" };
  const $ = (id) => document.getElementById(id);

  // a drill-down has a URL: #task=<run:>model/dataset&row=<index>[&turn=<turn>] opens it
  const taskId = (t) => (INDEX.mode === "compare" ? (t.run === 0 ? "A:" : "B:") : "") + t.key;
  function showDetail(t, r) {
    const d = $("detail");
    d.replaceChildren(...rowDetail(t, r));
    d.hidden = false;
    otherModels(t, r, d);
    const frag = "task=" + encodeURIComponent(taskId(t)) + "&row=" + encodeURIComponent(show(r.index)) +
      (r.turn_id !== undefined ? "&turn=" + encodeURIComponent(show(r.turn_id)) : "");
    history.replaceState(null, "", "#" + frag);
  }
  async function openFromHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const want = h.get("task"), row = h.get("row"), turn = h.get("turn");
    if (!want || row === null) return false;
    const k = tasks.findIndex((t) => taskId(t) === want);
    if (k < 0) return false;
    sel.value = String(k);
    await openTask(k);
    const r = state.rows.find((x) => show(x.index) === row && (turn === null || show(x.turn_id) === turn));
    if (!r) return false;
    showDetail(state.task, r);
    $("detail").scrollIntoView();
    return true;
  }

  function fillSelect(s, values) {
    s.replaceChildren(el("option", { value: "", text: "any" }));
    for (const v of values) s.append(el("option", { value: v, text: v }));
  }

  async function openTask(k) {
    const t = tasks[k];
    state.task = t;
    state.rows = await decode(t.blob);
    state.hay = null;
    state.prefix = sharedPrefix(state.rows);
    const distinct = (f) => Array.from(new Set(state.rows.map((r) => show(r[f])))).sort().slice(0, 200);
    fillSelect($("gold-filter"), distinct("gold"));
    fillSelect($("pred-filter"), distinct("prediction"));
    $("detail").hidden = true;
    applyFilters();
    document.body.dataset.task = String(k);
  }

  function applyFilters() {
    const q = $("search").value.trim().toLowerCase();
    const wrong = $("wrong-only").checked, gold = $("gold-filter").value, pred = $("pred-filter").value;
    if (q && !state.hay) state.hay = state.rows.map((r) => [show(r.prompt), show(r.output), show(r.prediction), show(r.gold), show(r.error)].join("\n").toLowerCase());
    const view = [];
    state.rows.forEach((r, i) => {
      if (wrong && r.correct !== false && !r.error) return;
      if (gold && show(r.gold) !== gold) return;
      if (pred && show(r.prediction) !== pred) return;
      if (q && !state.hay[i].includes(q)) return;
      view.push(i);
    });
    state.view = view;
    state.page = 0;
    renderPage();
  }

  function renderPage() {
    const pages = Math.max(1, Math.ceil(state.view.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const body = $("row-body");
    const frag = document.createDocumentFragment();
    for (const i of state.view.slice(state.page * PAGE, (state.page + 1) * PAGE)) {
      const r = state.rows[i];
      const [vtext, vcls] = verdict(r);
      const tr = el("tr", { "data-pos": String(i) },
        el("td", { class: "num", text: String(i) }), el("td", { class: "num", text: show(r.index) }),
        el("td", { class: vcls, text: vtext }), el("td", { text: show(r.prediction) }), el("td", { text: show(r.gold) }),
        el("td", { text: show(r.shot_ids) }), el("td", { class: "own", text: ownText(r.prompt, state.prefix).slice(0, 300) }));
      tr.addEventListener("click", () => {
        for (const x of body.querySelectorAll("tr.sel")) x.classList.remove("sel");
        tr.classList.add("sel");
        showDetail(state.task, r);
      });
      frag.append(tr);
    }
    body.replaceChildren(frag);
    $("page-info").textContent = "page " + (state.page + 1) + " of " + pages;
    $("match-count").textContent = state.view.length + " of " + state.rows.length + " rows match";
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
  }

  sel.addEventListener("change", () => openTask(Number(sel.value)));
  for (const id of ["wrong-only", "gold-filter", "pred-filter"]) $(id).addEventListener("change", applyFilters);
  let timer = null;
  $("search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(applyFilters, 150); });
  $("prev").addEventListener("click", () => { state.page -= 1; renderPage(); });
  $("next").addEventListener("click", () => { state.page += 1; renderPage(); });

  // ------------------------------------------------------------------ compare section
  async function initCompare() {
    const changes = await decode("changes");
    const cs = $("change-task");
    const counted = (n) => "prompt " + n.prompt + ", answer " + n.answer + ", verdict " + n.verdict;
    changes.forEach((c, k) => cs.append(el("option", { value: String(k), text: c.dataset + " × " + c.model + " (" + (c.changed.length + (c.truncated || 0)) + " changed: " + counted(c.counts) + ")" })));
    const render = () => {
      const c = changes[Number(cs.value)];
      const meta = INDEX.changes[Number(cs.value)];
      $("change-summary").textContent = c ? ((c.changed.length + (meta.truncated || 0)) + " row(s) changed (" + counted(c.counts) + "), " + meta.unchanged + " unchanged, " + meta.unmatched + " in one run only" + (meta.truncated ? ", " + meta.truncated + " more not shown" : "")) : "no task in both runs";
      const body = $("change-body");
      body.replaceChildren();
      $("change-detail").hidden = true;
      if (!c) return;
      c.changed.forEach((ch) => {
        const [va, ca] = verdict(ch.a), [vb, cb] = verdict(ch.b);
        const inline = el("td", { class: "inline-diff" });
        if (ch.diff) {
          const lines = ch.diff.filter(([op]) => op !== "=");
          for (const [op, line] of lines.slice(0, 4)) inline.append(el("div", { class: op === "+" ? "d-add" : "d-del", text: op + " " + line }));
          if (lines.length > 4) inline.append(el("div", { class: "muted", text: "… " + (lines.length - 4) + " more changed line(s)" }));
        } else inline.textContent = "same";
        const tr = el("tr", { "data-what": ch.what.join(" ") }, el("td", { class: "num", text: show(ch.a.index) }), el("td", { class: "what", text: ch.what.join(", ") }),
          el("td", { class: ca, text: va }), el("td", { class: cb, text: vb }),
          el("td", { text: show(ch.a.prediction) }), el("td", { text: show(ch.b.prediction) }), inline);
        tr.addEventListener("click", () => {
          const d = $("change-detail");
          const side = el("div", { class: "side" },
            el("div", {}, el("h4", { text: "A · " + va }), dl([["raw answer", ch.a.output], ["postprocessed", ch.a.prediction], ["gold", ch.a.gold]]), renderPrompt(ch.a.prompt)),
            el("div", {}, el("h4", { text: "B · " + vb }), dl([["raw answer", ch.b.output], ["postprocessed", ch.b.prediction], ["gold", ch.b.gold]]), renderPrompt(ch.b.prompt)));
          const kids = [el("h3", { text: c.dataset + " × " + c.model + " · row " + show(ch.a.index) }), side];
          if (ch.diff) {
            const box = el("div", { class: "diff", id: "prompt-diff" });
            for (const [op, line] of ch.diff) box.append(el("div", { class: op === "+" ? "d-add" : op === "-" ? "d-del" : "d-eq", text: (op === "=" ? "  " : op + " ") + line }));
            kids.push(el("h4", { text: "prompt diff (− A, + B)" }), box);
          } else kids.push(el("p", { class: "muted", text: "the prompts are identical" }));
          d.replaceChildren(...kids);
          d.hidden = false;
        });
        body.append(tr);
      });
    };
    cs.addEventListener("change", render);
    render();
  }

  // ``data-ready`` and PW_TIMING let tests and benchmarks see when the first rows are on screen
  window.PW_TIMING = {};
  window.addEventListener("hashchange", () => { openFromHash().catch((e) => { console.error(e); }); });
  if (tasks.length) {
    (location.hash.includes("task=") ? openFromHash().then((ok) => ok || openTask(0)) : openTask(0)).then(() => {
      window.PW_TIMING.rowsShown = performance.now();
      document.body.dataset.ready = "1";
    }).catch((e) => { console.error(e); });
  } else document.body.dataset.ready = "1";
  if (INDEX.mode === "compare") initCompare().catch((e) => { console.error(e); });
})();
