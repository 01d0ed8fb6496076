// engram's web view. Every view is a page of its own (?view=...), read from
// the URL, so links, the back button and reloads just work; the data comes
// from the HTTP API of the same server. Text from the store is only ever
// set as text (never as HTML).

const params = new URLSearchParams(location.search);
const ns = params.get("ns") || "default";
const main = document.getElementById("main");

// ---- the API ---------------------------------------------------------

const TOKEN_KEY = "engram-token";

class APIError extends Error {
  constructor(status, body) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.field = e.field;
  }
}

// askToken shows the token dialog and resolves with what was typed.
function askToken() {
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token");
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(input.value.trim()), { once: true });
    dialog.showModal();
    input.focus();
  });
}

// api calls the engram API at path (GET, or POST with a JSON body). On a
// 401 it asks for the token once, keeps it for the tab and retries.
function api(path, body) {
  return send(body === undefined ? "GET" : "POST", path, body);
}

// send calls the API with any method; a body goes as JSON (the server's
// guard wants application/json from a page).
async function send(method, path, body, retried) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  const init = { method, headers, credentials: "omit" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  if (resp.status === 401 && !retried) {
    const t = await askToken();
    if (t) {
      sessionStorage.setItem(TOKEN_KEY, t);
      return send(method, path, body, true);
    }
  }
  let data = null;
  try {
    data = await resp.json();
  } catch {
    data = null;
  }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

function query(path, values) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) {
    if (v !== undefined && v !== null && v !== "" && v !== false) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

// ---- DOM helpers -----------------------------------------------------

// el builds an element: attrs are attributes (on* keys are listeners),
// children are nodes or strings (set as text).
function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}

const svgNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const n = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
  for (const c of children.flat()) n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return n;
}

// link is an href to another view of this page, keeping the namespace.
function link(values) {
  return query("./", { ns: ns === "default" ? "" : ns, ...values });
}

function fmtTime(ts) {
  if (!ts || ts.startsWith("0001-")) return "";
  return ts.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, "").replace(/Z$/, "") + " UTC";
}
const day = (ts) => (ts || "").slice(0, 10);

// days writes the days of [from, to): one day, or the first and the last.
function days(from, to) {
  const last = day(new Date(Date.parse(to) - 1).toISOString());
  return last === day(from) ? day(from) : `${day(from)} to ${last}`;
}

function show(title, ...content) {
  document.title = title ? `${title} · engram` : "engram";
  main.replaceChildren(el("h1", {}, title), ...content);
}

function fail(err) {
  main.append(el("p", { class: "error", role: "alert" }, "Error: " + err.message + (err.field ? ` (${err.field})` : "")));
}

function empty(text) {
  return el("p", { class: "empty" }, text);
}

// ---- source turns ----------------------------------------------------
//
// What a memory, a fact, a facet or a result stems from is shown as the
// turns themselves (who said it, when, its first words), each a link to
// the turn in its session, never as bare ids. known holds the turns read so
// far: a turn, or null for an id no stored turn has (forgotten).

const known = new Map();
const SHOWN_SOURCES = 3; // the sources an item shows before "and N more"

function learn(turns) {
  for (const t of turns) known.set(t.id, t);
}

// lookup reads the turns of ids not read yet (GET /v1/turns?ids=), a
// hundred at a time. It never fails a view: a turn it could not read is
// shown by what the item itself knows of it.
async function lookup(ids) {
  // An id holding a comma cannot be asked for in a comma-separated list.
  const want = [...new Set(ids)].filter((id) => id && !known.has(id) && !id.includes(","));
  const batches = [];
  for (let i = 0; i < want.length; i += 100) batches.push(want.slice(i, i + 100));
  await Promise.all(batches.map(async (batch) => {
    try {
      const page = await api(query("/v1/turns", { namespace: ns, ids: batch.join(",") }));
      learn(page.turns);
      for (const id of batch) if (!known.has(id)) known.set(id, null);
    } catch {
      // left unknown: shown without its speaker and words
    }
  }));
}

// lookupShown reads the sources items show before they are expanded.
function lookupShown(lists) {
  return lookup(lists.flatMap((ids) => (ids || []).slice(0, SHOWN_SOURCES)));
}

// firstWords is the start of a turn's text, at most n words.
function firstWords(text, n = 12) {
  const words = (text || "").trim().split(/\s+/);
  return words.length > n ? words.slice(0, n).join(" ") + " …" : words.join(" ");
}

function sessionLink(t) {
  return link({ view: "session", session: t.session, turn: t.id, ns: t.namespace });
}

// sourceNode is one source turn: speaker, time and first words, a link to
// the turn in its session. hint is what a recall result says of the turn
// (its session and time) for a turn that could not be read.
function sourceNode(id, hint) {
  const t = known.get(id);
  if (t) {
    return el("a", { class: "source", href: sessionLink(t), title: "Open this turn in its session" },
      el("span", { class: "who" }, t.speaker || t.role), " ",
      el("time", { datetime: t.ts }, fmtTime(t.ts)), " ",
      el("q", {}, firstWords(t.content)));
  }
  if (t === null) return el("span", { class: "source gone" }, "a turn no longer stored (forgotten)");
  if (hint && hint.session) {
    return el("a", { class: "source", href: link({ view: "session", session: hint.session, turn: id, ns: hint.namespace }) },
      "a turn of session " + hint.session + (fmtTime(hint.ts) ? ", " + fmtTime(hint.ts) : ""));
  }
  return el("span", { class: "source" }, "turn " + id);
}

let expandSeq = 0;

// sources shows the source turns of an item (ids, in order) and a button
// that expands them in place to the turns in full. hints maps an id to
// what a recall result says of it.
function sources(ids, hints) {
  ids = (ids || []).filter(Boolean);
  if (ids.length === 0) return null;
  const more = ids.length - SHOWN_SOURCES;
  const panel = el("div", { class: "source-turns", id: "source-turns-" + ++expandSeq, hidden: true });
  const label = ids.length === 1 ? "Show the turn" : `Show the ${ids.length} turns`;
  const button = el("button", { type: "button", class: "expand", "aria-expanded": "false", "aria-controls": panel.id,
    onclick: async () => {
      if (button.getAttribute("aria-expanded") === "true") {
        panel.hidden = true;
        button.setAttribute("aria-expanded", "false");
        button.textContent = label;
        return;
      }
      button.disabled = true;
      await lookup(ids);
      panel.replaceChildren(...ids.map((id) => sourceTurn(id, hints && hints.get(id))));
      panel.hidden = false;
      button.disabled = false;
      button.setAttribute("aria-expanded", "true");
      button.textContent = "Hide the turns";
    } }, label);
  return el("div", { class: "sources" },
    el("span", { class: "meta" }, "From "),
    el("ul", { class: "source-list", "aria-label": "sources" }, ids.slice(0, SHOWN_SOURCES).map((id) => el("li", {}, sourceNode(id, hints && hints.get(id))))),
    more > 0 ? el("span", { class: "meta" }, ` and ${more} more `) : " ",
    button, panel);
}

// sourceTurn is a source turn in full, as an expanded item shows it.
function sourceTurn(id, hint) {
  const t = known.get(id);
  if (!t) return el("div", { class: "source-turn" }, sourceNode(id, hint));
  return el("div", { class: "source-turn", "data-id": t.id },
    el("span", { class: "who" }, t.speaker || t.role),
    el("time", { class: "when", datetime: t.ts }, fmtTime(t.ts)),
    el("div", { class: "content" }, t.content),
    el("a", { class: "open", href: sessionLink(t) }, "in its session"));
}

// confirmAction is a button that asks before it acts: the first press
// shows "Confirm" and "Cancel"; Confirm runs act, whose result (a text)
// replaces the buttons, or whose error is shown beside them.
function confirmAction(label, question, act) {
  const box = el("span", { class: "actions" });
  const status = el("span", { class: "meta", role: "status" });
  const start = el("button", { type: "button", class: "action", onclick: () => {
    const yes = el("button", { type: "button", class: "action confirm", onclick: async () => {
      yes.disabled = true;
      try {
        box.replaceChildren(el("span", { class: "meta done", role: "status" }, await act()));
      } catch (err) {
        yes.disabled = false;
        status.textContent = "Error: " + err.message;
      }
    } }, "Confirm");
    const no = el("button", { type: "button", class: "action", onclick: () => box.replaceChildren(start, status) }, "Cancel");
    box.replaceChildren(el("span", { class: "meta" }, question + " "), yes, " ", no, status);
    yes.focus();
  } }, label);
  box.append(start, status);
  return box;
}

// correctAction is a button that opens a one-field form (the correct text
// or object) and sends it.
function correctAction(label, value, act) {
  const box = el("span", { class: "actions" });
  const start = el("button", { type: "button", class: "action", onclick: () => {
    const input = el("input", { type: "text", value, "aria-label": label, class: "correct-input" });
    const status = el("span", { class: "meta", role: "status" });
    const form = el("form", { class: "inline", onsubmit: async (ev) => {
      ev.preventDefault();
      if (!input.value.trim() || input.value === value) {
        status.textContent = "Type the correct value first.";
        return;
      }
      try {
        box.replaceChildren(el("span", { class: "meta done", role: "status" }, await act(input.value.trim())));
      } catch (err) {
        status.textContent = "Error: " + err.message;
      }
    } }, input, " ", el("button", { type: "submit", class: "action confirm" }, "Save"), " ",
      el("button", { type: "button", class: "action", onclick: () => box.replaceChildren(start) }, "Cancel"), status);
    box.replaceChildren(form);
    input.focus();
  } }, label);
  box.append(start);
  return box;
}

function turnNode(t, hit) {
  return el("div", { class: "turn" + (hit ? " hit" : ""), id: "turn-" + t.id, tabindex: hit ? "-1" : null },
    el("span", { class: "who" }, t.speaker || t.role),
    el("span", { class: "when" }, fmtTime(t.ts)),
    el("div", {}, t.content),
    confirmAction("Forget", "Forget this turn everywhere? This cannot be undone.", async () => {
      await send("DELETE", "/v1/turns/" + encodeURIComponent(t.id) + "?reason=web+view");
      return "Forgotten.";
    }));
}

// ---- views -------------------------------------------------------------

// timeline: turns grouped by day and session, newest first, with the
// memories and scenes derived from them beside them.
async function timeline() {
  const before = params.get("before") || "";
  show("Timeline");
  const page = await api(query("/v1/turns", { namespace: ns, before, limit: 60 }));
  const turns = page.turns;
  if (turns.length === 0) {
    main.append(empty(before ? "No older turns." : "Nothing is stored in this namespace yet."));
    return;
  }
  // What the layers derived from these turns.
  const newest = turns[0].ts, oldest = turns[turns.length - 1].ts;
  const to = new Date(Date.parse(newest) + 1000).toISOString(); // past the newest turn, whatever its nanoseconds
  const span = { namespace: ns, from: oldest, to, limit: 1000 };
  const [mems, scenes] = await Promise.all([
    api(query("/v1/memories", { ...span, superseded: true })).catch(() => ({ memories: [] })),
    api(query("/v1/scenes", span)).catch(() => ({ scenes: [] })),
  ]);
  const bySource = new Map();
  for (const m of mems.memories) for (const id of m.sources || []) {
    if (!bySource.has(id)) bySource.set(id, []);
    bySource.get(id).push(m);
  }
  const byTurn = new Map();
  for (const s of scenes.scenes) for (const id of s.turns || []) byTurn.set(id, s);
  learn(turns);
  await lookupShown(mems.memories.map((m) => m.sources));

  // Groups: consecutive turns (newest first) of one day and session.
  const groups = [];
  for (const t of turns) {
    const g = groups[groups.length - 1];
    if (g && g.day === day(t.ts) && g.session === t.session && g.namespace === t.namespace) g.turns.push(t);
    else groups.push({ day: day(t.ts), session: t.session, namespace: t.namespace, turns: [t] });
  }
  let currentDay = null, dayBox = null;
  for (const g of groups) {
    if (g.day !== currentDay) {
      currentDay = g.day;
      dayBox = el("section", { class: "day", "aria-label": g.day }, el("h2", {}, g.day));
      main.append(dayBox);
    }
    const derived = [];
    const seenMem = new Set(), seenScene = new Set();
    for (const t of g.turns) {
      for (const m of bySource.get(t.id) || []) if (!seenMem.has(m.id)) { seenMem.add(m.id); derived.push(memoryNode(m)); }
      const s = byTurn.get(t.id);
      if (s && !seenScene.has(s.id)) { seenScene.add(s.id); derived.push(sceneNode(s)); }
    }
    const ordered = [...g.turns].reverse(); // read a conversation in order
    dayBox.append(el("article", { class: "session" },
      el("header", {}, el("a", { href: link({ view: "session", session: g.session, ns: g.namespace }) }, "Session " + g.session),
        ns === "*" ? el("span", { class: "meta" }, " · " + g.namespace) : null),
      el("div", { class: "turns" }, ordered.map((t) => turnNode(t))),
      el("aside", { class: "derived", "aria-label": "Derived from these turns" },
        derived.length ? [el("h3", {}, "Derived"), ...derived] : el("p", { class: "empty" }, "Nothing derived yet."))));
  }
  if (page.next) {
    main.append(el("p", { class: "more" }, el("a", { href: link({ before: page.next }) }, "Older turns")));
  }
}

function memoryNode(m) {
  const path = "/v1/memories/" + encodeURIComponent(m.id);
  const kind = m.wrong ? m.type + " (wrong)" : m.superseded_by ? m.type + " (superseded)" : m.corrected ? m.type + " (corrected)" : m.type;
  return el("div", { class: "item memory", "data-id": m.id },
    el("span", { class: "kind" + (m.superseded_by || m.wrong ? " superseded" : "") }, kind),
    m.text,
    m.rationale ? el("span", { class: "meta" }, " because " + m.rationale) : null,
    m.extracted_text ? el("span", { class: "meta" }, " (extracted: " + m.extracted_text + ")") : null,
    el("div", {}, el("span", { class: "meta" }, fmtTime(m.ts) + (m.subject ? " · " + m.subject : ""))), sources(m.sources),
    m.wrong || m.corrected
      ? confirmAction("Restore", "Take the correction back?", async () => {
        await send("PATCH", path, { restore: true });
        return "Restored as extracted.";
      })
      : el("div", { class: "actions-row" },
        confirmAction("Mark wrong", "Mark this memory wrong? Recall and the listings will leave it out.", async () => {
          await send("PATCH", path, { wrong: true, reason: "web view" });
          return "Marked wrong.";
        }), " ",
        correctAction("Correct", m.text, async (text) => {
          await send("PATCH", path, { text, reason: "web view" });
          return "Corrected: " + text;
        })));
}

// factActions are the correct and mark-wrong actions of a graph triple.
function factActions(x) {
  const path = "/v1/kg/facts/" + encodeURIComponent(x.id);
  return el("span", { class: "fact-actions" },
    confirmAction("Mark wrong", "Mark this fact wrong? The graph will leave it out.", async () => {
      await send("PATCH", path, { wrong: true, reason: "web view" });
      return "Marked wrong.";
    }), " ",
    correctAction("Correct", x.object, async (object) => {
      await send("PATCH", path, { object, reason: "web view" });
      return "Corrected: " + object;
    }));
}

function sceneNode(s) {
  return el("div", { class: "item scene" },
    el("span", { class: "kind" }, "scene"), el("strong", {}, s.title || "(untitled)"),
    el("div", {}, s.summary),
    el("div", { class: "meta" }, `${fmtTime(s.start)} · ${(s.turns || []).length} turns · ${(s.participants || []).join(", ")}`));
}

// search: the query of the URL, through the default path or deep.
async function search(q) {
  const mode = params.get("mode") || "auto";
  document.getElementById("q").value = q;
  document.getElementById("mode").value = mode === "deep" ? "deep" : "auto";
  // kinds: turns and documents (the API's default), or layer items, which
  // the view shows with the turns they stem from.
  const kinds = (params.get("kinds") || "").split(",").filter(Boolean);
  const kindsBox = document.getElementById("kinds");
  kindsBox.value = kinds.join(",");
  if (kindsBox.selectedIndex < 0) kindsBox.value = "";
  show(`Search: ${q}`);
  const resp = await api("/v1/recall", { query: q, mode, namespace: ns, k: 20, kinds: kinds.length ? kinds : undefined });
  main.append(el("p", { class: "meta" },
    `${resp.results.length} result${resp.results.length === 1 ? "" : "s"}, mode ${resp.mode}, ${resp.took_ms} ms`,
    resp.trigger ? ` · trigger “${resp.trigger}”` : "",
    resp.time_range ? ` · ${resp.time_range.expr}: ${day(resp.time_range.from)} to ${day(resp.time_range.to)}` : ""));
  for (const w of resp.warnings || []) main.append(el("p", { class: "warning" }, w));
  if (resp.results.length === 0) {
    main.append(empty("Nothing found."));
    return;
  }
  await lookupShown(resp.results.map(shownSources));
  main.append(el("ol", { class: "results" }, resp.results.map((r) => resultNode(r, resp))));
}

// shownSources are the ids of the turns a result stems from, as its
// sources list shows them: not a document's chunk, and not a turn result
// itself (a turn found in a burst lists the others of the burst).
function shownSources(r) {
  const ids = (r.sources || []).filter((s) => !s.path).map((s) => s.id);
  if (r.kind === "turn" && ids.length === 1 && ids[0] === r.id) return [];
  return ids;
}

function resultNode(r, resp) {
  const where = [];
  if (r.kind === "doc" && r.doc) {
    where.push(el("a", { class: "open", href: link({ view: "doc", vault: r.doc.vault, path: r.doc.path }) },
      `${r.doc.path}${r.doc.heading && r.doc.heading.length ? " › " + r.doc.heading.join(" › ") : ""}, lines ${r.doc.start_line}-${r.doc.end_line}`));
  } else if (r.session) {
    const turn = r.kind === "turn" ? r.id : (r.sources && r.sources[0] && r.sources[0].id);
    where.push(el("a", { class: "open", href: link({ view: "session", session: r.session, turn, ns: r.namespace }) }, "open in its session"));
  }
  const times = (r.times || []).map((t) => `${t.expr} = ${days(t.from, t.to)}`);
  return el("li", { "data-kind": r.kind },
    el("span", { class: "kind" }, r.kind), el("span", { class: "who" }, r.speaker ? r.speaker + ": " : ""), r.text,
    el("div", { class: "meta" }, [fmtTime(r.ts), r.session ? "session " + r.session : "", `score ${Number(r.score).toFixed(3)}`].filter(Boolean).join(" · ")),
    times.length ? el("div", { class: "meta" }, "dates: " + times.join("; ")) : null,
    r.signals ? signalsNode(r.signals, resp && resp.time_range) : null,
    sources(shownSources(r), new Map((r.sources || []).map((s) => [s.id, { ...s, namespace: r.namespace }]))),
    el("div", {}, where));
}

// degree says in a word how strong a signal normalised to [0, 1] is.
function degree(v) {
  return v >= 0.66 ? "strongly" : v >= 0.33 ? "partly" : v > 0 ? "weakly" : null;
}

// signalWords explains each signal of a deep result in words: why it
// ranked where it did, for the hover (title) of its number.
const signalWords = {
  vector: (v) => degree(v) ? `means ${degree(v)} what the question means (its embedding is close to the question's)` : "its meaning is far from the question's (embedding)",
  bm25: (v) => degree(v) ? `matched the words of the question ${degree(v)} (BM25 keyword score, beside the best candidate's)` : "shares no rare word with the question (BM25)",
  session: (v) => degree(v) ? `its conversation as a whole is ${degree(v)} about the question` : "its conversation as a whole is not about the question",
  scene: (v) => degree(v) ? `the scene it belongs to matches the question ${degree(v)}` : "its scene does not match the question",
  neighbour: (v) => degree(v) ? `a turn just before or after it matches the question ${degree(v)}` : "no turn beside it matches the question",
  layer: (v) => degree(v) ? `a memory or scene drawn from it matches the question ${degree(v)}` : "no memory or scene drawn from it matches the question",
  kg: (v) => v > 0 ? `a knowledge-graph fact about someone or something the question names cites it (confidence ${v.toFixed(2)})` : "no knowledge-graph fact about what the question names cites it",
  persona: (v) => v > 0 ? "the question asks for every one of a kind (hobbies, countries, pets) of the person it names, and a persona facet of that kind stems from it" : "no persona facet of a kind the question asks for all of stems from it",
  speaker: (v) => v > 0 ? "the question names its speaker" : "the question does not name its speaker",
  decay: (v) => v >= 0.995 ? "recent: its age costs it nothing" : `its age keeps ${Math.round(v * 100)}% of its score (older turns count less)`,
  in_range: (v) => v ? "it was said in the time the question names" : "it was not said in the time the question names",
  final: (v) => `the score the results are ranked by (${v.toFixed(3)}): the signals fused, times decay`,
};

// signalsNode shows a deep result's signals, each explained in words on
// hover (its title) and, for a keyboard or a touch screen, in a list that
// opens below them.
function signalsNode(s, timeRange) {
  const names = ["vector", "bm25", "session", "scene", "neighbour", "layer", "kg", "persona", "speaker", "decay"];
  const shown = names.map((n) => ({ n, v: Number(s[n] || 0), label: `${n} ${Number(s[n] || 0).toFixed(2)}`, words: signalWords[n](Number(s[n] || 0)) }));
  // in_range is only said when the question names a time.
  if (timeRange || s.in_range) {
    shown.push({ n: "in_range", label: s.in_range ? "in range" : "out of range", words: signalWords.in_range(!!s.in_range) });
  }
  const final = Number(s.final || 0);
  shown.push({ n: "final", label: `final ${final.toFixed(2)}`, words: signalWords.final(final) });
  return el("div", { class: "signals", "aria-label": "signals" },
    shown.map((x) => el("span", { class: "signal", "data-signal": x.n, title: x.words }, x.label)),
    el("details", { class: "why" }, el("summary", {}, "Why it ranked here"),
      el("ul", {}, shown.map((x) => el("li", { "data-signal": x.n }, el("strong", {}, x.n.replace("_", " ") + ": "), x.words)))));
}

// session: every turn of one session, the one asked about highlighted.
async function session() {
  const s = params.get("session");
  const hit = params.get("turn");
  show(`Session ${s}`);
  const all = [];
  let after = 0;
  for (let i = 0; i < 20; i++) {
    const page = await api(query("/v1/turns", { namespace: ns, session: s, after: after || "", limit: 1000 }));
    all.push(...page.turns);
    if (!page.next) break;
    after = page.next;
  }
  if (all.length === 0) {
    main.append(empty("No turns in this session."));
    return;
  }
  main.append(el("p", { class: "meta" }, `${all.length} turns, ${fmtTime(all[0].ts)} to ${fmtTime(all[all.length - 1].ts)}`));
  main.append(el("div", { class: "turns" }, all.map((t) => turnNode(t, t.id === hit))));
  const target = hit && document.getElementById("turn-" + hit);
  if (target) {
    target.scrollIntoView({ block: "center" });
    target.focus();
  }
}

function filterForm(fields) {
  const form = el("form", { class: "filters", method: "get", action: "./" },
    el("input", { type: "hidden", name: "view", value: params.get("view") }),
    ns !== "default" ? el("input", { type: "hidden", name: "ns", value: ns }) : null,
    fields, el("button", { type: "submit" }, "Apply"));
  return form;
}

function field(label, input) {
  return el("label", {}, label, input);
}

async function memories() {
  const type = params.get("type") || "", subject = params.get("subject") || "", q = params.get("mq") || "";
  const superseded = params.get("superseded") === "true";
  const types = ["", "fact", "decision", "preference", "plan", "event"];
  show("Memories", filterForm([
    field("Type", el("select", { name: "type" }, types.map((t) => el("option", { value: t, selected: t === type }, t || "any")))),
    field("Subject", el("input", { name: "subject", value: subject })),
    field("Words", el("input", { name: "mq", value: q, type: "search" })),
    el("label", { class: "check" }, el("input", { type: "checkbox", name: "superseded", value: "true", checked: superseded }), "superseded too"),
  ]));
  const resp = await api(query("/v1/memories", { namespace: ns, type, subject, q, superseded, limit: 300 }));
  if (resp.memories.length === 0) {
    main.append(empty("No memories match."));
    return;
  }
  await lookupShown(resp.memories.map((m) => m.sources));
  main.append(el("div", { class: "list" }, resp.memories.map(memoryNode)));
}

async function scenes() {
  const q = params.get("sq") || "";
  show("Scenes", filterForm([field("Words", el("input", { name: "sq", value: q, type: "search" }))]));
  const resp = await api(query("/v1/scenes", { namespace: ns, q, limit: 200 }));
  if (resp.scenes.length === 0) {
    main.append(empty("No scenes yet."));
    return;
  }
  main.append(el("div", { class: "list" }, resp.scenes.map((s) => {
    const n = sceneNode(s);
    n.append(el("a", { href: link({ view: "session", session: s.session, turn: s.turns[0], ns: s.namespace }) }, "open its session"));
    return n;
  })));
}

async function persona() {
  const speaker = params.get("speaker") || "";
  show("Persona");
  const resp = await api(query("/v1/persona", { namespace: ns === "*" ? "" : ns, speaker }));
  if (resp.personas.length === 0) {
    main.append(empty("No persona yet: facets come from the memories about each speaker."));
    return;
  }
  await lookupShown(resp.personas.flatMap((p) => p.facets.map((f) => f.evidence)));
  for (const p of resp.personas) {
    const byFacet = new Map();
    for (const f of p.facets) {
      if (!byFacet.has(f.facet)) byFacet.set(f.facet, []);
      byFacet.get(f.facet).push(f);
    }
    const sec = el("section", { "aria-label": p.speaker }, el("h2", {}, p.speaker), el("p", { class: "meta" }, "updated " + fmtTime(p.updated)));
    for (const [facet, fs] of byFacet) {
      sec.append(el("h3", {}, facet));
      for (const f of fs) {
        sec.append(el("div", { class: "facet" },
          el("strong", {}, f.key + ": "), f.value, el("span", { class: "meta" }, " since " + day(f.since)), sources(f.evidence),
          f.history && f.history.length ? el("ul", { class: "history", "aria-label": "history" },
            f.history.map((h) => el("li", {}, `${h.value} (${day(h.from)} to ${day(h.to)})`))) : null));
      }
    }
    main.append(sec);
  }
}

// graph: an entity's triples drawn around it, as of the time the slider
// points at.
async function graph() {
  const entity = params.get("entity") || "";
  const list = el("datalist", { id: "entities" });
  show("Knowledge graph", filterForm([
    field("Entity", el("input", { name: "entity", value: entity, list: "entities", required: true, autocomplete: "off" })), list]));
  const ents = await api(query("/v1/entities", { namespace: ns, limit: 200 })).catch(() => ({ entities: [] }));
  for (const e of ents.entities) list.append(el("option", { value: e.name }));
  if (!entity) {
    if (ents.entities.length === 0) {
      main.append(empty("The graph is empty: its triples come from the memories' relations."));
      return;
    }
    main.append(el("h2", {}, "Entities"), el("ul", {}, ents.entities.map((e) =>
      el("li", {}, el("a", { href: link({ view: "graph", entity: e.name }) }, e.name), el("span", { class: "meta" }, ` ${e.triples} triples`)))));
    return;
  }
  let res;
  try {
    res = await api(query("/v1/kg", { entity, namespace: ns === "*" ? "" : ns, timeline: true, limit: 1000 }));
  } catch (err) {
    if (err.status === 404) {
      main.append(empty(`The graph knows no entity “${entity}”.`));
      return;
    }
    throw err;
  }
  const triples = res.triples;
  await lookupShown(triples.map((t) => t.sources));
  const moments = [...new Set(triples.flatMap((t) => [t.valid_from, t.valid_to].filter((x) => x && !x.startsWith("0001-"))))].sort();
  const now = new Date().toISOString();
  moments.push(now);
  const asOfParam = params.get("as_of");
  let idx = moments.length - 1;
  if (asOfParam) {
    const i = moments.findIndex((m) => m >= asOfParam);
    idx = i < 0 ? moments.length - 1 : i;
  }
  const out = el("output", { for: "asof", id: "asof-label" });
  const slider = el("input", { type: "range", id: "asof", min: 0, max: moments.length - 1, value: idx, step: 1, "aria-label": "as of" });
  const box = el("div", { class: "graph-box" });
  const table = el("div", { class: "table-wrap" });
  main.append(el("p", {}, el("strong", {}, res.entity.name), res.entity.aliases && res.entity.aliases.length ? el("span", { class: "meta" }, " also " + res.entity.aliases.join(", ")) : null),
    el("div", { class: "slider" }, el("label", { for: "asof" }, "As of"), slider, out), box, el("h2", {}, "Triples valid then"), table);
  const draw = () => {
    const t = moments[Number(slider.value)];
    out.value = t === now ? "now" : day(t);
    const valid = triples.filter((x) => x.valid_from <= t && (!x.valid_to || x.valid_to.startsWith("0001-") || t < x.valid_to));
    box.replaceChildren(drawGraph(res.entity.name, valid));
    table.replaceChildren(valid.length === 0 ? empty("No triple is valid at that time.") : el("table", {},
      el("thead", {}, el("tr", {}, ["subject", "predicate", "object", "valid", "sources", "correct"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, valid.map((x) => el("tr", { "data-id": x.id }, el("td", {}, x.subject), el("td", {}, x.predicate.replaceAll("_", " ")), el("td", {}, x.object),
        el("td", {}, `${day(x.valid_from)} to ${x.valid_to && !x.valid_to.startsWith("0001-") ? day(x.valid_to) : "now"}`), el("td", {}, sources(x.sources)),
        el("td", {}, factActions(x)))))));
  };
  slider.addEventListener("input", draw);
  draw();
}

function drawGraph(center, triples) {
  const W = 640, H = 360, cx = W / 2, cy = H / 2;
  const others = [];
  for (const t of triples) {
    const other = t.subject === center ? t.object : t.subject;
    const label = t.subject === center ? t.predicate : `${t.predicate} (of)`;
    others.push({ name: other, label: label.replaceAll("_", " ") });
  }
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${center} and ${others.length} related entities` });
  const r = Math.min(W, H) / 2 - 50;
  others.forEach((o, i) => {
    const a = (2 * Math.PI * i) / Math.max(others.length, 1) - Math.PI / 2;
    o.x = cx + r * Math.cos(a) * 1.4;
    o.y = cy + r * Math.sin(a);
    root.append(svg("g", { class: "edge" },
      svg("line", { x1: cx, y1: cy, x2: o.x, y2: o.y }),
      svg("text", { x: (cx + o.x) / 2, y: (cy + o.y) / 2 - 4, "text-anchor": "middle" }, o.label)));
  });
  for (const o of others) {
    const a = document.createElementNS(svgNS, "a");
    a.setAttribute("href", link({ view: "graph", entity: o.name }));
    a.append(svg("g", { class: "node" }, svg("circle", { cx: o.x, cy: o.y, r: 7 }),
      svg("text", { x: o.x, y: o.y + 22, "text-anchor": "middle" }, o.name)));
    root.append(a);
  }
  root.append(svg("g", { class: "node center" }, svg("circle", { cx, cy, r: 10 }),
    svg("text", { x: cx, y: cy + 28, "text-anchor": "middle" }, center)));
  return root;
}

async function docs() {
  show("Documents");
  const resp = await api("/v1/docs");
  if (resp.docs.length === 0) {
    main.append(empty("No vault is indexed: `engram vault add DIR`."));
    return;
  }
  main.append(el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, ["document", "type", "chunks", "vault"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, resp.docs.map((d) => el("tr", {},
      el("td", {}, el("a", { href: link({ view: "doc", vault: d.vault, path: d.path }) }, d.title || d.path), el("div", { class: "meta" }, d.path)),
      el("td", {}, d.type || ""), el("td", {}, d.chunks), el("td", { class: "meta" }, d.vault)))))));
}

async function doc() {
  const path = params.get("path"), vault = params.get("vault") || "";
  show(path);
  const g = await api(query("/v1/graph", { doc: path, vault, depth: 2 }));
  main.replaceChildren(el("h1", {}, g.doc.title || g.doc.path),
    el("p", { class: "meta" }, `${g.doc.path} · ${g.doc.vault}${g.doc.type ? " · " + g.doc.type : ""}${(g.doc.tags || []).length ? " · " + g.doc.tags.join(", ") : ""}`));
  const docLink = (d) => el("li", {}, el("a", { href: link({ view: "doc", vault: g.doc.vault, path: d.path }) }, d.title || d.path),
    el("span", { class: "meta" }, ` depth ${d.depth}${d.via && d.via !== g.doc.path ? ", via " + d.via : ""}`));
  main.append(el("h2", {}, "Links"), g.linked.length ? el("ul", {}, g.linked.map(docLink)) : empty("It links to no document."));
  main.append(el("h2", {}, "Backlinks"), g.backlinks.length ? el("ul", {}, g.backlinks.map(docLink)) : empty("No document links to it."));
  if (g.unresolved.length) {
    main.append(el("h2", {}, "Links that resolve to nothing"), el("ul", {}, g.unresolved.map((l) => el("li", {}, `[[${l.target}]] on line ${l.line}`))));
  }
}

async function jobs() {
  show("Jobs & health");
  const [h, j] = await Promise.all([api("/v1/health"), api("/v1/jobs")]);
  main.append(el("p", {}, "Status: ", el("span", { class: h.status === "ok" ? "status-ok" : "status-bad" }, h.status),
    el("span", { class: "meta" }, ` · version ${h.version} · archive seq ${h.archive_seq} · index lag ${h.index_lag}`)));
  if (h.vectors) {
    main.append(el("p", { class: "meta" }, `vectors: ${h.vectors.model || "none"} (${h.vectors.backend || ""}), lag ${h.vectors.lag}${h.vectors.reembed_pending ? " · " + h.vectors.reembed_pending : ""}`));
  }
  if (h.problems && h.problems.length) main.append(el("ul", { class: "warning", "aria-label": "problems" }, h.problems.map((p) => el("li", {}, p))));
  main.append(el("h2", {}, "Jobs"), el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, ["job", "every", "last success", "next run", "state"].map((x) => el("th", { scope: "col" }, x)))),
    el("tbody", {}, j.jobs.map((x) => el("tr", {},
      el("td", {}, x.name), el("td", {}, x.interval), el("td", {}, fmtTime(x.last_success) || "never"), el("td", {}, fmtTime(x.next_run)),
      el("td", { class: x.failing ? "status-bad" : "" }, x.running ? "running" : x.failing ? `failing: ${x.last_error}` : "ok")))))));
}

// ---- the page ----------------------------------------------------------

// A Map, not an object: ?view=constructor (or toString, __proto__) must be
// an unknown view, not a property every object inherits.
const views = new Map(Object.entries({ timeline, memories, scenes, persona, graph, docs, doc, jobs, session }));

function setup() {
  const nsInput = document.getElementById("ns");
  nsInput.value = ns;
  document.getElementById("search-ns").value = ns === "default" ? "" : ns;
  document.getElementById("search-ns").disabled = ns === "default";
  nsInput.addEventListener("change", () => {
    const p = new URLSearchParams(location.search);
    if (nsInput.value && nsInput.value !== "default") p.set("ns", nsInput.value);
    else p.delete("ns");
    p.delete("before");
    location.search = p.toString();
  });
  const view = params.get("q") ? "search" : params.get("view") || "timeline";
  for (const a of document.querySelectorAll(".views a")) {
    const v = a.dataset.view;
    a.href = link(v === "timeline" ? {} : { view: v });
    if (v === view || (view === "doc" && v === "docs") || (view === "session" && v === "timeline")) a.setAttribute("aria-current", "page");
  }
  return view;
}

async function run() {
  const view = setup();
  try {
    if (view === "search") await search(params.get("q"));
    else if (views.has(view)) await views.get(view)();
    else show("Unknown view", empty(`There is no view “${view}”.`), el("a", { href: "./" }, "Back to the timeline"));
  } catch (err) {
    fail(err);
  }
}

run();
