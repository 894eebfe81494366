// gdl2pl studio: the page. Every answer comes from the server's JSON endpoints
// (docs/studio.md); text from the server is put in the page as text (textContent), never
// as HTML; the one drawing taken as markup, the graph's SVG, is cleaned first.
"use strict";

const AUTO_STEPS = 50;
// A request the server refused because it (or this page) was busy is sent again, after
// the server's Retry-After (a little more each time), for at most this long.
const RETRY_FOR_MS = 60000;
// A request not answered within this long shows "waiting for the server".
const SLOW_MS = 1000;
// Where the page keeps the student's text between visits (this browser only).
const STORE = "gdl2pl-studio:";

const $ = (id) => document.getElementById(id);
const S = {
  syntax: "auto",
  answers: "auto",  // the syntax answers are shown in: "auto" (the game's), "kif", "infix"
  standalone: false, // the Prolog tab shows translate --standalone's module
  name: null,       // the file's or example's name, which messages and reports say
  held: false,      // a game from a link, shown but not run until the user says so
  moves: [],        // the match: joint moves (KIF strings, one per role)
  pos: 0,           // how many of them the board shows
  players: {},      // role -> "human" | "random" | "mcts" | "legal"
  chosen: {},       // role -> move chosen by the page, waiting for the other roles
  view: null,       // the last /api/play answer
  tab: "prolog",
  findings: [],
  clauses: [],      // /api/translate's clause links
  limits: null,
  autoplay: 0,
  autoLeft: AUTO_STEPS,  // moves the computer may still play on its own before pausing
  moveText: new Map(),   // a move (KIF) as the student reads it, learnt from the views
  rowFirst: null,        // the student's choice of the board's row, where the rules say none
};
let checkTimer = null;
let checkSeq = 0;
let textVersion = 0;   // bumped on each edit; derived views remember the version they show
const shown = { prolog: -1, graph: -1 };

// -- talking to the server ------------------------------------------------------------------

async function post(name, body) {
  // A link may come from any site: its game runs only once the user has read it.
  if (S.held) throw new Error("the game from the link has not been run: read it, then press \u201cRun it\u201d above");
  const started = Date.now();
  let slow = setTimeout(() => { slow = null; waiting(1); }, SLOW_MS);
  try {
    for (let attempt = 1; ; attempt++) {
      let r, data;
      try {
        r = await fetch("/api/" + name, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
          credentials: "same-origin",
        });
        try { data = await r.json(); } catch (e) { data = { error: "the server answered " + r.status }; }
      } catch (e) {  // no answer at all (the connection dropped): as busy
        r = { ok: false, status: 0, headers: new Headers() };
        data = { error: "the server did not answer", retry: true };
      }
      if (r.ok) return data;
      // busy (the server, or this page's earlier requests): wait, visibly, and ask again
      if (data.retry && Date.now() - started < RETRY_FOR_MS) {
        if (slow) { clearTimeout(slow); slow = null; waiting(1); }
        const after = (Number(r.headers.get("Retry-After")) || 1) * 1000;
        await sleep(Math.min(after * (1 + 0.5 * (attempt - 1)), 5000) * (0.75 + 0.5 * Math.random()));
        continue;
      }
      const err = new Error(data.error || ("error " + r.status));
      err.line = data.line; err.column = data.column; err.status = r.status;
      throw err;
    }
  } finally {
    if (slow) clearTimeout(slow); else waiting(-1);
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// How many requests wait for the server: while any does, the header says so.
function waiting(change) {
  S.waiting = Math.max(0, (S.waiting || 0) + change);
  const box = $("waiting");
  if (box) box.hidden = S.waiting === 0;
}

function game() {
  const g = { text: $("editor").value, syntax: S.syntax, answer_syntax: S.answers };
  if (S.name) g.name = S.name;
  return g;
}

// A file's name as the server takes it: letters, digits, "._-" and spaces (others become
// "_"), starting with a letter or digit, at most 100 characters; null if nothing is left.
function fileName(name) {
  if (typeof name !== "string") return null;
  const n = name.replace(/[^A-Za-z0-9._ -]/g, "_").replace(/^[^A-Za-z0-9]+/, "").slice(0, 100);
  return n || null;
}

function say(text) {
  const m = $("message");
  m.hidden = !text;
  m.textContent = text || "";
}

function failed(err) {
  let text = err.message;
  if (err.line) text = `line ${err.line}, column ${err.column}: ${text}`;
  say(text);
  if (err.line) markLines([{ line: err.line, kind: "error" }], "error");
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

// -- the editor: gutter, backdrop of coloured lines, findings -----------------------------

function lineCount() {
  return $("editor").value.split("\n").length;
}

function renderGutter() {
  const n = lineCount();
  const g = $("gutter");
  const b = $("backdrop");
  if (g.childElementCount !== n) {
    g.replaceChildren(...Array.from({ length: n }, (_, i) => el("div", { "data-line": String(i + 1), text: String(i + 1) })));
    b.replaceChildren(...Array.from({ length: n }, (_, i) => el("div", { "data-line": String(i + 1) })));
  }
  b.style.width = $("editor").scrollWidth + "px";
  syncScroll();
}

function syncScroll() {
  const ed = $("editor");
  $("backdrop").style.transform = `translate(${-ed.scrollLeft}px, ${-ed.scrollTop}px)`;
  $("gutter").style.transform = `translateY(${-ed.scrollTop}px)`;
}

// Colour lines: marks are {line, end?, kind}; "group" says which kind of mark to replace.
function markLines(marks, group) {
  for (const root of [$("gutter"), $("backdrop")]) {
    for (const d of root.querySelectorAll("." + group)) d.classList.remove(group);
    if (group === "error") for (const d of root.querySelectorAll(".warning")) d.classList.remove("warning");
    for (const m of marks) {
      for (let l = m.line; l <= (m.end || m.line); l++) {
        const d = root.querySelector(`div[data-line="${l}"]`);
        if (d && (root === $("backdrop") || m.kind !== "linked")) d.classList.add(m.kind);
      }
    }
  }
}

function goToLine(line, column, end) {
  const ed = $("editor");
  const lines = ed.value.split("\n");
  let offset = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i].length + 1;
  const start = offset + Math.max(0, (column || 1) - 1);
  ed.focus();
  ed.setSelectionRange(start, start);
  const lh = parseFloat(getComputedStyle(ed).lineHeight) || 18;
  const top = (line - 1) * lh;
  const bottom = ((end || line)) * lh;
  if (top < ed.scrollTop || bottom > ed.scrollTop + ed.clientHeight) {
    ed.scrollTop = Math.max(0, top - ed.clientHeight / 3);
  }
  syncScroll();
}

function edited() {
  textVersion++;
  keep();
  renderGutter();
  S.chosen = {};
  S.moveText = new Map();
  clearTimeout(checkTimer);
  checkTimer = setTimeout(runCheck, 350);
}

async function runCheck() {
  const seq = ++checkSeq;
  const version = textVersion;
  let answer;
  try {
    answer = await post("check", game());
  } catch (err) {
    if (seq === checkSeq) $("check-status").textContent = "cannot check: " + err.message;
    return;
  }
  if (seq !== checkSeq) return;  // a later edit's answer will come
  S.findings = answer.findings;
  const status = $("check-status");
  const e = answer.errors;
  const w = answer.warnings;
  const what = answer.kind === "program" ? `${answer.syntax}; a logic program: no roles` : answer.syntax;
  status.textContent = e || w
    ? `${e} error${e === 1 ? "" : "s"}, ${w} warning${w === 1 ? "" : "s"} (${what})`
    : `no problems (${what})`;
  status.className = "status " + (e ? "bad" : "good");
  const list = $("findings");
  list.replaceChildren(...answer.findings.map((f) => el("li", {
    class: f.severity,
    "data-line": String(f.line || ""),
    onclick: () => f.line && goToLine(f.line, f.column),
  },
  el("span", { class: "finding-text", text: (f.line ? `line ${f.line}:${f.column} ` : "") + `${f.severity}: ${f.message}` }),
  ...(f.rule ? [el("code", { class: "rule", text: f.rule })] : []))));
  markLines(answer.findings.filter((f) => f.line).map((f) => ({ line: f.line, kind: f.severity })), "error");
  if (!e) say("");
  if (version === textVersion) refreshTab();
}

// -- tabs -----------------------------------------------------------------------------------

function showTab(name) {
  S.tab = name;
  for (const b of document.querySelectorAll(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const p of document.querySelectorAll(".pane")) p.hidden = p.id !== "pane-" + name;
  say("");
  refreshTab();
}

function refreshTab() {
  if (!S.ready) return;  // the first text is not there yet
  if (S.tab === "prolog" && shown.prolog !== textVersion) loadProlog();
  else if (S.tab === "graph" && shown.graph !== textVersion) loadGraph();
  else if (S.tab === "play") loadPlay();
  else if (S.tab === "why") $("why-where").textContent = whereText();
}

function hasErrors() {
  return S.findings.some((f) => f.severity === "error");
}

// -- Prolog, linked to the rules ------------------------------------------------------------

// The answer of `op` about the game text as it is now (with `extra` in the request), the
// view `view` then marked as showing this version; null when the game has errors and
// `refusal` says why it cannot be shown then, the request failed, or the text changed
// while it was asked.
async function answerForView(op, view, refusal, extra) {
  const version = textVersion;
  if (refusal && hasErrors()) { say(refusal); return null; }
  let answer;
  try { answer = await post(op, { ...game(), ...(extra || {}) }); } catch (err) { failed(err); return null; }
  if (version !== textVersion) return null;
  shown[view] = version;
  return answer;
}

async function loadProlog() {
  const answer = await answerForView(
    "translate", "prolog", "fix the errors first: the game cannot be translated",
    { standalone: S.standalone });
  if (!answer) return;
  $("prolog").dataset.kind = answer.standalone ? "standalone" : "runtime";
  $("prolog-hint").textContent = answer.standalone
    ? "The module gdl2pl translate --standalone writes: save it as game.pl and load it in plain SWI-Prolog (swipl game.pl); its header says how to query and play. Click a clause to see its rule in the game."
    : "The SWI-Prolog module the game translates to, for gdl2pl's runtime. Click a clause to see its rule in the game; put the cursor on a rule to see its clauses.";
  S.clauses = answer.clauses;
  const lines = answer.prolog.split("\n");
  const byStart = new Map(answer.clauses.map((c, i) => [c.prolog_start, i]));
  const out = [];
  let i = 1;
  while (i <= lines.length) {
    if (byStart.has(i)) {
      const c = answer.clauses[byStart.get(i)];
      const text = lines.slice(i - 1, c.prolog_end).join("\n");
      out.push(el("div", {
        class: "clause",
        "data-start": String(c.prolog_start),
        "data-gdl": String(c.gdl_line || ""),
        title: c.gdl_line ? `from the rule at line ${c.gdl_line} of the game` : "",
        text,
        onclick: () => linkClause(c),
      }));
      i = c.prolog_end + 1;
    } else {
      const t = lines[i - 1];
      out.push(el("div", { class: t.startsWith("%") ? "comment" : "", text: t || " " }));
      i++;
    }
  }
  $("prolog").replaceChildren(...out);
}

function linkClause(c) {
  if (!c.gdl_line) return;
  markLines([{ line: c.gdl_line, end: c.gdl_end, kind: "linked" }], "linked");
  goToLine(c.gdl_line, 1, c.gdl_end);
  highlightClauses(c.gdl_line);
}

function highlightClauses(gdlLine) {
  let first = null;
  for (const d of $("prolog").querySelectorAll(".clause")) {
    const on = d.dataset.gdl === String(gdlLine);
    d.classList.toggle("linked", on);
    if (on && !first) first = d;
  }
  if (first) first.scrollIntoView({ block: "nearest" });
}

function cursorMoved() {
  if (S.tab !== "prolog" || !S.clauses.length) return;
  const ed = $("editor");
  const line = ed.value.slice(0, ed.selectionStart).split("\n").length;
  const c = S.clauses.find((c) => c.gdl_line && c.gdl_line <= line && line <= (c.gdl_end || c.gdl_line));
  if (c) {
    markLines([{ line: c.gdl_line, end: c.gdl_end, kind: "linked" }], "linked");
    highlightClauses(c.gdl_line);
  } else {
    markLines([], "linked");
    highlightClauses(-1);
  }
}

// -- the dependency graph -------------------------------------------------------------------

// The SVG as an element, without anything that could run or load: scripts, foreign
// content, event attributes, links.
function cleanSvg(text) {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") return null;
  for (const bad of svg.querySelectorAll("script, foreignObject, iframe, image, use, a")) {
    if (bad.nodeName === "a") bad.replaceWith(...bad.childNodes); else bad.remove();
  }
  for (const node of [svg, ...svg.querySelectorAll("*")]) {
    for (const a of [...node.attributes]) {
      const n = a.name.toLowerCase();
      if (n.startsWith("on") || n === "href" || n === "xlink:href" || n === "style") node.removeAttribute(a.name);
    }
  }
  return document.importNode(svg, true);
}

async function loadGraph() {
  // drawn even when the game has errors: the graph shows where they lie
  const answer = await answerForView("graph", "graph", null);
  if (!answer) return;
  $("graph-errors").hidden = !hasErrors();
  $("graph-errors").textContent = hasErrors()
    ? "The game has errors (listed under the editor); the graph is drawn anyway, to show where they lie."
    : "";
  const cycle = answer.cycle.relations;
  // a relation written (p) is the node p(), shown as the game writes it
  const labelOf = (rel) => (answer.labels || {})[rel] || rel;
  $("graph-cycle").hidden = !cycle.length;
  // said as gdl2pl check says it: not stratified by the notes' definition, and whether a
  // ground atom may depend on its own negation (an error) or none can (a warning)
  $("graph-cycle").textContent = cycle.length
    ? `${answer.cycle.note}; the cycle goes through ${cycle.map(labelOf).join(", ")}.`
    : "";
  $("graph-cycle").classList.toggle("ground-stratified", !!answer.cycle.ground_stratified);
  const box = $("graph");
  box.replaceChildren();
  $("graph-note").hidden = !answer.note;
  $("graph-note").textContent = answer.note ? answer.note + " The graph as DOT text:" : "";
  $("graph-dot").hidden = !!answer.svg;
  $("graph-dot").textContent = answer.svg ? "" : answer.dot;
  if (answer.svg) {
    const svg = cleanSvg(answer.svg);
    if (svg) box.append(svg);
    for (const g of box.querySelectorAll("g.node")) {
      const title = g.querySelector("title");
      const rel = title ? title.textContent : "";
      g.setAttribute("data-relation", rel);
      g.addEventListener("click", () => showRelation(rel, answer.rules[rel] || [], g, labelOf(rel)));
    }
  }
  const rows = [el("tr", {}, el("th", { text: "relation" }), el("th", { text: "stratum" }), el("th", { text: "rules at lines" }))];
  for (const rel of answer.relations) {
    rows.push(el("tr", { "data-relation": rel, class: cycle.includes(rel) ? "cycle" : "", onclick: () => showRelation(rel, answer.rules[rel] || [], null, labelOf(rel)) },
      el("td", { text: labelOf(rel) }),
      el("td", { text: answer.strata ? String(answer.strata[rel]) : "–" }),
      el("td", { text: (answer.rules[rel] || []).join(", ") || "(input or undefined)" })));
  }
  $("strata").replaceChildren(...rows);
}

function showRelation(rel, lines, node, label) {
  for (const g of $("graph").querySelectorAll("g.node")) g.classList.toggle("linked", g === node);
  markLines(lines.map((l) => ({ line: l, end: ruleEnd(l), kind: "linked" })), "linked");
  if (lines.length) goToLine(lines[0], 1);
  say(lines.length ? "" : `${label || rel} has no rule: it is an input (true, does) or undefined`);
}

function ruleEnd(line) {
  const c = S.clauses.find((c) => c.gdl_line === line);
  return c ? c.gdl_end : line;
}

// -- playing --------------------------------------------------------------------------------

function whereText() {
  return S.pos === 0 ? "the initial state" : `the state after move ${S.pos}`;
}

async function loadPlay() {
  if (hasErrors()) { say("fix the errors first: the game cannot be played"); return; }
  let view;
  try {
    view = await post("play", { ...game(), moves: S.moves.slice(0, S.pos), row_first: S.rowFirst });
  } catch (err) {
    failed(err);
    if (err.status === 422 && S.pos > 0) say(err.message + "\n(the game changed? start a new match)");
    return;
  }
  showView(view);
}

// An atom about relation `rel` with arguments `args` (texts in the answer syntax), in the
// syntax of the view: what the page asks Why when a fluent, a move or a goal is clicked.
function atomText(view, rel, args) {
  return view.answer_syntax === "infix" ? `${rel}(${args.join(",")})` : `(${rel} ${args.join(" ")})`;
}

// A move of the history (KIF) as the student reads it (learnt from the views).
function moveShown(move) {
  return S.moveText.get(move) || move;
}

function learnMoveText(view) {
  view.legal.forEach((ms, i) => ms.forEach((m, j) => S.moveText.set(m, view.shown.legal[i][j])));
  view.shown.moves.forEach((jm, i) => jm.forEach((m, j) => {
    if (S.moves[i]) S.moveText.set(S.moves[i][j], m);
  }));
}

function showView(view) {
  S.view = view;
  keep();
  learnMoveText(view);
  for (const [i, r] of view.roles.entries()) {
    if (!(r in S.players)) S.players[r] = i === 0 || view.roles.length === 1 ? "human" : "random";
  }
  renderPlayers(view.roles, view.shown.roles);
  $("step-label").textContent = `move ${S.pos} of ${S.moves.length}`;
  $("back").disabled = S.pos === 0;
  $("forward").disabled = S.pos >= S.moves.length;
  renderBoard(view);
  $("fluents").replaceChildren(...view.shown.state.map((f) => el("li", {
    text: f, title: "why is this fluent in the state?",
    onclick: () => askWhy(atomText(view, S.pos > 0 ? "next" : "init", [f])),
  })));
  const status = $("match-status");
  status.replaceChildren(
    el("span", { text: view.terminal ? "Terminal " : "Not terminal " }),
    el("button", { class: "ask", type: "button", text: "why?", title: view.terminal ? "why is the state terminal?" : "why is it not terminal?", onclick: () => askWhy("terminal") }),
    el("span", { text: view.terminal ? " Goals: " : " Goal values now: " }));
  status.className = "status" + (view.terminal ? " good" : "");
  for (const [i, r] of view.roles.entries()) {
    const vs = view.goals[i];
    const name = view.shown.roles[i];
    const text = vs.length === 1 ? `${name} ${vs[0]}` : vs.length ? `${name} ${vs.join("/")}` : `${name} (no goal)`;
    status.append(el("span", { class: "goal", "data-role": r, text: text + " " }));
    if (vs.length) status.append(el("button", { class: "ask", type: "button", text: "why?", title: `why does ${name} get ${vs[0]}?`, onclick: () => askWhy(atomText(view, "goal", [name, vs[0]])) }));
  }
  renderLegal(view);
  $("history").replaceChildren(...S.moves.map((jm, i) => el("li", {
    class: i < S.pos ? "" : "future",
    text: jm.map(moveShown).join("  "),
    title: "go to the state after this move",
    onclick: () => { S.pos = i + 1; S.chosen = {}; S.autoLeft = 0; loadPlay(); },
  })));
  $("why-where").textContent = whereText();
  autoStep();
}

function renderPlayers(roles, names) {
  const box = $("players");
  if (box.dataset.roles === roles.join(" ")) return;
  box.dataset.roles = roles.join(" ");
  box.replaceChildren(...roles.map((r, i) => el("label", { text: names[i] + " " },
    el("select", {
      "data-role": r,
      onchange: (e) => { S.players[r] = e.target.value; S.autoLeft = AUTO_STEPS; autoStep(); },
    }, ...(S.players_known || ["human", "random", "mcts", "legal"]).map((p) =>
      el("option", { value: p, text: p === "human" ? "you" : p, selected: S.players[r] === p }))))));
}

function renderBoard(view) {
  const table = $("board");
  table.replaceChildren();
  // where the game's row and column rules do not say which coordinate is the row, the
  // student says it: the first (a matrix, row 1 on top) or the second (Cartesian)
  $("row-first-box").hidden = !view.board || view.board.row_first_said;
  if (!view.board) return;
  const b = view.board;
  $("row-first").checked = b.row_first;
  const movable = boardMoves(view);
  table.append(el("tr", {}, el("th"), ...b.columns.map((c) => el("th", { text: c }))));
  // rows top first, columns left to right: the cell (f x y v), or (f y x v) when the game
  // names the row first (row_first: its row and column rules say so, as in the notes)
  b.rows.forEach((y, i) => {
    table.append(el("tr", {}, el("th", { text: y }), ...b.columns.map((x, j) => {
      const v = b.shown[i][j];
      const key = b.row_first ? y + " " + x : x + " " + y;
      // "b" is shown faintly: most games write a blank cell so
      const td = el("td", { "data-row": y, "data-col": x, text: v === null ? "" : v, class: v === "b" ? "blank" : "" });
      if (movable.has(key)) {
        const [role, move] = movable.get(key);
        td.classList.add("playable");
        td.title = `${role}: ${move}`;
        td.addEventListener("click", () => choose(role, move));
      }
      return td;
    })));
  });
}

// Cells a human role can click: a legal move whose two arguments are the cell's.
function boardMoves(view) {
  const out = new Map();
  if (view.terminal) return out;
  view.roles.forEach((r, i) => {
    if (S.players[r] !== "human" || view.legal[i].length < 2) return;
    for (const m of view.legal[i]) {
      const parts = m.replace(/^\(|\)$/g, "").split(/\s+/);
      if (parts.length === 3) out.set(parts[1] + " " + parts[2], [r, m]);
    }
  });
  return out;
}

function renderLegal(view) {
  const box = $("legal");
  box.replaceChildren();
  view.roles.forEach((r, i) => {
    const ms = view.legal[i];
    const name = view.shown.roles[i];
    const human = S.players[r] === "human";
    const div = el("div", { class: "role", "data-role": r }, el("h4", { text: `${name} (${human ? "you" : S.players[r]})` }));
    if (view.terminal) div.append(el("span", { text: "the match is over" }));
    ms.forEach((m, j) => {
      const shown = view.shown.legal[i][j];
      div.append(el("button", {
        type: "button", class: "move" + (S.chosen[r] === m ? " chosen" : ""), "data-move": m, text: shown,
        disabled: !human && ms.length > 1,
        title: human ? "play this move" : "the computer plays for this role",
        onclick: () => choose(r, m),
      }));
      div.append(el("button", { type: "button", class: "ask", text: "?", title: `why is ${shown} legal?`, onclick: () => askWhy(atomText(view, "legal", [name, shown])) }));
    });
    box.append(div);
  });
}

function choose(role, move) {
  const v = S.view;
  if (!v || v.terminal) return;
  S.chosen[role] = move;
  // every human role with a choice has chosen: play the joint move
  const waiting = v.roles.filter((r, i) => S.players[r] === "human" && v.legal[i].length > 1 && !(r in S.chosen));
  if (waiting.length) { renderLegal(v); return; }
  S.autoLeft = AUTO_STEPS;
  playStep();
}

async function playStep() {
  const chosen = S.chosen;
  S.chosen = {};
  let answer;
  try {
    answer = await post("step", { ...game(), moves: S.moves.slice(0, S.pos), chosen, players: S.players, row_first: S.rowFirst });
  } catch (err) { failed(err); return; }
  S.moves = answer.moves;
  S.pos = S.moves.length;
  showView(answer.view);
}

// After a step: when no human role has a choice, the computer (or the forced moves) play on,
// at most AUTO_STEPS moves in a row (a game may never end); then "play on" asks to go on.
// Looking at a replayed or earlier position (autoLeft 0) plays nothing until asked.
function autoStep() {
  const v = S.view;
  $("play-on").hidden = true;
  if (!v || v.terminal || S.tab !== "play" || S.pos !== S.moves.length) return;
  const humanChoice = v.roles.some((r, i) => S.players[r] === "human" && v.legal[i].length > 1);
  if (humanChoice) return;
  if (S.autoLeft <= 0) { $("play-on").hidden = false; return; }
  S.autoLeft--;
  const ticket = ++S.autoplay;
  setTimeout(() => { if (ticket === S.autoplay && S.tab === "play") playStep(); }, 250);
}

// -- why ------------------------------------------------------------------------------------

async function askWhy(atom) {
  showTab("why");
  $("why-atom").value = atom;
  const tree = $("why-tree");
  tree.replaceChildren(el("p", { text: "…" }));
  let answer;
  try {
    answer = await post("explain", { ...game(), moves: S.moves.slice(0, S.pos), atom, depth: 4 });
  } catch (err) {
    // a question that cannot be answered is said here, by the question; an error of the
    // game (with its line) is marked in the editor too
    tree.replaceChildren(el("p", { class: "fails unread", text: err.message }));
    if (err.line) failed(err);
    return;
  }
  const where = answer.joint_move
    ? `with the joint move [${answer.joint_move.join(" ")}] in the state before it`
    : whereText();
  tree.replaceChildren(
    el("p", { class: answer.holds ? "holds" : "fails", text: `${answer.atom} ${answer.holds ? "holds" : "does not hold"} (${where})` }),
    renderNode(answer.tree, true));
}

function renderNode(node, open) {
  const d = el("details", { class: "node " + node.kind, "data-kind": node.kind });
  if (open) d.open = true;
  const verdict = node.kind === "attempt" ? "rule tried" : node.holds ? "holds" : "does not hold";
  const summary = el("summary", {},
    node.place ? el("span", { class: "place", text: `${node.place}. ` }) : "",
    el("span", { class: node.holds ? "holds" : "fails", text: node.text }),
    el("span", { text: ` ${verdict}${node.note ? ": " + node.note : ""}` }));
  d.append(summary);
  if (node.rule) d.append(renderRule(node.rule));
  for (const c of node.children) d.append(renderNode(c, false));
  if (!node.children.length && !node.rule) d.classList.add("leaf");
  return d;
}

function renderRule(r) {
  const box = el("div", { class: "rule" });
  const what = r.fact ? "fact" : "rule";
  const link = el("a", {
    text: r.line ? `${what} at line ${r.line}` : what,
    title: "show it in the game and in Prolog",
    onclick: () => showRule(r),
  });
  box.append(el("span", { text: "by " }), link, el("span", { text: ": " }), el("code", { text: r.source }));
  if (r.prolog_line) box.append(el("div", {}, el("span", { text: `Prolog, line ${r.prolog_line}: ` }), el("code", { text: r.prolog_text.split(/\s+/).join(" ") })));
  const b = Object.entries(r.bindings);
  if (b.length) box.append(el("div", { text: "with " + b.map(([k, v]) => `${k} = ${v}`).join(", ") }));
  if (r.failing) box.append(el("div", { class: "failing", text: r.failing_text }));
  return box;
}

function showRule(r) {
  if (r.line) {
    markLines([{ line: r.line, end: ruleEnd(r.line), kind: "linked" }], "linked");
    goToLine(r.line, r.column || 1);
  }
  if (r.prolog_line) {
    showTab("prolog");
    const wait = () => {
      const d = $("prolog").querySelector(`.clause[data-start="${r.prolog_line}"]`);
      if (!d) { setTimeout(wait, 100); return; }
      for (const x of $("prolog").querySelectorAll(".clause")) x.classList.toggle("linked", x === d);
      d.scrollIntoView({ block: "center" });
    };
    wait();
  }
}

// -- analyze --------------------------------------------------------------------------------

async function runAnalyze() {
  const box = $("analyze-report");
  const button = $("analyze-run");
  box.replaceChildren(el("p", { text: "searching…" }));
  button.disabled = true;  // one run at a time: the next waits for this one's report
  let answer;
  try { answer = await post("analyze", game()); } catch (err) { box.replaceChildren(); failed(err); return; } finally { button.disabled = false; }
  const rep = answer.report;
  const rows = [el("tr", {}, el("th", { text: "property" }), el("th", { text: "verdict" }), el("th", { text: "why" }))];
  for (const [name, p] of Object.entries(rep.properties)) {
    const why = el("td");
    if (p.note) why.append(el("div", { text: p.note }));
    if (p.counterexample) why.append(replayButton("counterexample", p.counterexample));
    if (p.roles) why.append(el("div", { text: Object.entries(p.roles).map(([r, v]) => `${r}: ${v}`).join(", ") }));
    for (const [role, moves] of Object.entries(p.witnesses || {})) why.append(replayButton(`witness for ${role}`, moves));
    for (const [role, w] of Object.entries(p.why_not || {})) {
      why.append(el("div", { class: "why-not", text: `why not for ${role}: ${((answer.why_not || {})[name] || {})[role] || ""}` }));
      if (w.best_at) why.append(replayButton(`best ending for ${role}`, w.best_at));
    }
    for (const [role, moves] of Object.entries(p.sequences || {})) {
      why.append(el("div", { class: "sequence", text: `sequence for ${role}: ${moves.map(moveShown).join(", ")}` }));
    }
    rows.push(el("tr", { "data-property": name },
      el("td", { text: (answer.labels || {})[name] || name.replace(/_/g, " "), title: p.definition || "" }),
      el("td", { class: "verdict-" + p.verdict, text: p.verdict }),
      why));
  }
  box.replaceChildren(el("table", {}, ...rows), el("pre", { text: answer.text }));
}

function replayButton(label, moves) {
  return el("div", {},
    el("button", {
      type: "button", class: "replay", text: `replay the ${label} (${moves.length} move${moves.length === 1 ? "" : "s"})`,
      onclick: () => { S.moves = moves.map((jm) => [...jm]); S.pos = S.moves.length; S.chosen = {}; S.autoLeft = 0; showTab("play"); },
    }));
}

// -- model ----------------------------------------------------------------------------------

async function runModel() {
  const box = $("model-result");
  box.replaceChildren(el("p", { text: "…" }));
  const inputs = $("model-inputs").value.split(",").map((s) => s.trim()).filter(Boolean);
  let answer;
  try {
    answer = await post("model", { ...game(), input: $("model-input").value, inputs });
  } catch (err) { box.replaceChildren(); failed(err); return; }
  const out = [];
  if (answer.inputs.length) out.push(el("p", { class: "hint", text: "input relations: " + answer.inputs.join(", ") + " (the output is shown)" }));
  if (answer.semantics === "well-founded") {
    out.push(el("p", { class: "hint", text: "negation not stratified: the well-founded model (an atom not shown is false); "
      + (answer.two_valued ? "it is two-valued: the program's one stable model" : "it is three-valued: undefined atoms are marked") }));
  }
  for (const r of answer.relations) {
    const maybe = r.undefined || [];
    out.push(el("h4", { text: `${r.label || r.name}/${r.arity}: ${r.atoms.length} atom${r.atoms.length === 1 ? "" : "s"}` + (maybe.length ? ` true, ${maybe.length} undefined` : "") }));
    out.push(el("ul", { class: "atoms" },
      ...r.atoms.map((a) => el("li", { text: a })),
      ...maybe.map((a) => el("li", { class: "undefined", text: a + "  (undefined)" }))));
  }
  box.replaceChildren(...out);
}

// -- loading, converting, sharing -----------------------------------------------------------

function setText(text, moves) {
  $("editor").value = text;
  S.moves = moves || [];
  S.pos = S.moves.length;
  S.players = {};
  S.chosen = {};
  S.view = null;
  S.rowFirst = null;
  S.autoLeft = AUTO_STEPS;
  $("players").dataset.roles = "";
  $("why-tree").replaceChildren();
  $("analyze-report").replaceChildren();
  $("model-result").replaceChildren();
  markLines([], "linked");
  edited();
}

async function loadExample(name) {
  if (!name) return;
  const r = await fetch("/api/examples/" + encodeURIComponent(name));
  const data = await r.json();
  if (!r.ok) { say(data.error); return; }
  S.syntax = "auto";
  $("syntax").value = "auto";
  S.name = fileName(name);
  setExercise({});  // an example is no answer to the exercise
  setText(data.text);
  const kind = (S.examples || []).find((e) => e.name === name);
  if (kind && kind.kind === "program") showTab("model");
}

async function convertTo(to) {
  try {
    const answer = await post("convert", { ...game(), to });
    S.syntax = to;
    $("syntax").value = to;
    const moves = S.moves;
    const pos = S.pos;
    setText(answer.text, moves);
    S.pos = pos;
  } catch (err) { failed(err); }
}

// What Share link and Download keep: the text, its syntax and name, the match, and the
// exercise the text answers (its title, instructions and properties), if any.
function exercise() {
  const out = { gdl2pl_studio: 1, syntax: S.syntax, name: S.name, text: $("editor").value, moves: S.moves, pos: S.pos };
  if (S.exercise) {
    const { title, instructions, properties } = S.exercise;
    Object.assign(out, { title, instructions, properties });
  }
  return out;
}

function encode(obj) {
  const bytes = new TextEncoder().encode(JSON.stringify(obj));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decode(text) {
  const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return JSON.parse(new TextDecoder().decode(bytes));
}

function restore(ex) {
  if (!ex || typeof ex.text !== "string") throw new Error("not a gdl2pl studio exercise");
  setExercise(ex);
  const moves = Array.isArray(ex.moves) ? ex.moves.filter((jm) => Array.isArray(jm) && jm.every((m) => typeof m === "string")) : [];
  S.syntax = ["auto", "kif", "infix"].includes(ex.syntax) ? ex.syntax : "auto";
  $("syntax").value = S.syntax;
  $("examples").value = "";  // no longer an example: choosing one loads it again
  S.name = fileName(ex.name);
  setText(ex.text, moves);
  const pos = Number.isInteger(ex.pos) ? ex.pos : moves.length;
  S.pos = Math.max(0, Math.min(pos, moves.length));
  S.autoLeft = 0;
}

function share() {
  const url = location.href.split("#")[0] + "#s=" + encode(exercise());
  history.replaceState(null, "", url);
  $("share-url").value = url;
  $("share-box").hidden = false;
  $("share-url").select();
  if (navigator.clipboard) navigator.clipboard.writeText(url).catch(() => {});
}

function download() {
  const blob = new Blob([JSON.stringify(exercise(), null, 1)], { type: "application/json" });
  const a = el("a", { href: URL.createObjectURL(blob), download: "exercise.gdl2pl.json" });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

async function openFile(file) {
  if (!file) return;
  if (S.limits && file.size > S.limits.max_text * 4) { say(`${file.name} is too large for this server`); return; }
  const text = await file.text();
  if (file.name.endsWith(".json")) {
    try { restore(JSON.parse(text)); } catch (err) { say(`${file.name}: ${err.message}`); }
    return;
  }
  S.syntax = "auto";
  $("syntax").value = "auto";
  $("examples").value = "";  // no longer an example: choosing one loads it again
  S.name = fileName(file.name);
  setExercise({});
  setText(text);
}

// -- start ----------------------------------------------------------------------------------

async function start() {
  const ed = $("editor");
  ed.addEventListener("input", edited);
  ed.addEventListener("scroll", syncScroll);
  ed.addEventListener("click", cursorMoved);
  ed.addEventListener("keyup", (e) => { if (e.key.startsWith("Arrow") || e.key.startsWith("Page")) cursorMoved(); });
  ed.addEventListener("keydown", (e) => {
    if (e.key === "Tab" && !e.shiftKey) { e.preventDefault(); document.execCommand("insertText", false, "  "); }
  });
  for (const b of document.querySelectorAll(".tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("examples").addEventListener("change", (e) => loadExample(e.target.value));
  $("syntax").addEventListener("change", (e) => { S.syntax = e.target.value; edited(); });
  $("to-kif").addEventListener("click", () => convertTo("kif"));
  $("to-infix").addEventListener("click", () => convertTo("infix"));
  $("share").addEventListener("click", share);
  $("share-close").addEventListener("click", () => { $("share-box").hidden = true; });
  $("restored-close").addEventListener("click", () => { $("restored").hidden = true; });
  $("download").addEventListener("click", download);
  $("link-run").addEventListener("click", () => {
    S.held = false;
    $("link-box").hidden = true;
    // the text is the student's now: a reload gives back what they made of it (kept by
    // this browser), not the link's again
    history.replaceState(null, "", location.href.split("#")[0]);
    edited();
  });
  $("link-discard").addEventListener("click", () => {
    S.held = false;
    $("link-box").hidden = true;
    history.replaceState(null, "", location.href.split("#")[0]);
    $("examples").value = "ticTacToe.kif";
    loadExample("ticTacToe.kif");
  });
  $("open-file").addEventListener("change", (e) => {
    const file = e.target.files[0];
    e.target.value = "";  // so that opening the same file again reads it again
    openFile(file);
  });
  $("answer-syntax").addEventListener("change", (e) => { S.answers = e.target.value; edited(); });
  for (const r of document.querySelectorAll('input[name="prolog-kind"]')) {
    r.addEventListener("change", () => { S.standalone = r.value === "standalone" && r.checked; shown.prolog = -1; refreshTab(); });
  }
  $("restart").addEventListener("click", () => { S.moves = []; S.pos = 0; S.chosen = {}; S.autoLeft = AUTO_STEPS; loadPlay(); });
  $("back").addEventListener("click", () => { if (S.pos > 0) { S.pos--; S.chosen = {}; S.autoplay++; S.autoLeft = 0; loadPlay(); } });
  $("forward").addEventListener("click", () => { if (S.pos < S.moves.length) { S.pos++; S.chosen = {}; S.autoplay++; S.autoLeft = 0; loadPlay(); } });
  $("play-on").addEventListener("click", () => { S.autoLeft = AUTO_STEPS; autoStep(); });
  $("row-first").addEventListener("change", (e) => { S.rowFirst = e.target.checked; loadPlay(); });
  $("why-form").addEventListener("submit", (e) => { e.preventDefault(); const a = $("why-atom").value.trim(); if (a) askWhy(a); });
  $("analyze-run").addEventListener("click", runAnalyze);
  $("exercise-run").addEventListener("click", runExercise);
  $("model-run").addEventListener("click", runModel);
  window.addEventListener("resize", renderGutter);

  const info = await (await fetch("/api/info")).json();
  S.limits = info.limits;
  S.players_known = info.players;
  S.examples = info.examples;
  for (const e of info.examples) $("examples").append(el("option", { value: e.name, text: e.title }));
  S.ready = true;
  const hash = location.hash.startsWith("#s=") ? location.hash.slice(3) : "";
  if (hash) {
    try {
      const ex = decode(hash);
      S.held = true;  // shown, not run: nothing is sent until "Run it"
      $("link-box").hidden = false;
      restore(ex);
      return;
    } catch (err) {
      S.held = false;
      $("link-box").hidden = true;
      say("the link does not hold an exercise: " + err.message);
    }
  }
  // the exercise the server was started with, else its game, else an example; the
  // student's own text for it, kept by this browser, comes back over any of them
  S.context = info.exercise ? "exercise:" + fingerprint(info.exercise)
    : info.game ? "game:" + fingerprint(info.game) : "";
  const kept = keptText();
  if (info.exercise) restore(info.exercise);
  else if (info.game && !kept) { S.name = fileName(info.game.name); setText(info.game.text); }
  else if (!kept) { $("examples").value = "ticTacToe.kif"; await loadExample("ticTacToe.kif"); }
  if (kept) {
    restoreKept(kept);
    $("restored-text").textContent = "Your text from your last visit is back (this browser kept it); choose an example to start afresh.";
    $("restored").hidden = false;
  }
}

// -- the student's text, kept in this browser (localStorage) -----------------------------------

// A short fingerprint of a JSON value: which exercise or game the server offers, so that
// the text kept for one is not restored for another.
function fingerprint(value) {
  let h = 2166136261;
  for (const c of JSON.stringify(value)) { h ^= c.codePointAt(0); h = Math.imul(h, 16777619) >>> 0; }
  return h.toString(36);
}

function storeKey() {
  return STORE + "text:" + (S.context || "");
}

// Keep the text, its syntax and name, and the match, as Share link does; not a link's
// text that has not been run (it is not the student's until then).
function keep() {
  if (S.held || !S.ready) return;
  try { localStorage.setItem(storeKey(), JSON.stringify(exercise())); } catch (e) { /* full or off */ }
}

function keptText() {
  try {
    const v = JSON.parse(localStorage.getItem(storeKey()) || "null");
    return v && typeof v.text === "string" ? v : null;
  } catch (e) { return null; }
}

function restoreKept(v) {
  // the exercise's properties come from where it was opened, not from what was kept
  const ex = S.exercise;
  restore(v);
  if (ex) setExercise(ex);
}

// -- exercises: starter text and properties, each checked with the analyses that exist ------

// Each property an exercise may ask, read from its words (docs/studio.md lists them): the
// analyses it needs and how it is judged. A role or atom is written as in the game.
const PROPERTIES = [
  { re: /^(?:it has )?no errors$/, needs: ["check"], judge: (m, a) => noErrors(a) },
  { re: /^(?:it is )?well[- ]formed$/, needs: ["analyze"], judge: (m, a) => verdict(a, "well_formed") },
  { re: /^(?:it )?terminates$/, needs: ["analyze"], judge: (m, a) => verdict(a, "termination") },
  { re: /^(?:it is )?playable$/, needs: ["analyze"], judge: (m, a) => verdict(a, "playability") },
  { re: /^(?:it is )?monotonic$/, needs: ["analyze"], judge: (m, a) => verdict(a, "monotonicity") },
  { re: /^(\S+) is weakly winnable$/, needs: ["analyze"], judge: (m, a) => winnable(a, "weak_winnability", m[1]) },
  { re: /^(\S+) is strongly winnable$/, needs: ["analyze"], judge: (m, a) => winnable(a, "strong_winnability", m[1]) },
  { re: /^terminal is reached within (\d+) moves?$/, needs: ["analyze"], judge: (m, a) => within(a, Number(m[1])) },
  { re: /^the model contains (.+)$/, needs: ["model"], judge: (m, a) => inModel(a, m[1], true) },
  { re: /^the model does not contain (.+)$/, needs: ["model"], judge: (m, a) => inModel(a, m[1], false) },
  { re: /^(.+) holds in the initial state$/, needs: ["explain"], judge: (m, a) => initially(a, m[1], true) },
  { re: /^(.+) does not hold in the initial state$/, needs: ["explain"], judge: (m, a) => initially(a, m[1], false) },
];

function readProperty(text) {
  const words = String(text).trim().replace(/\.$/, "").replace(/\s+/g, " ");
  for (const p of PROPERTIES) {
    const m = words.match(new RegExp(p.re.source, "i"));
    if (m) return { text: words, match: m, spec: p };
  }
  return { text: words, match: null, spec: null };
}

function setExercise(ex) {
  const props = Array.isArray(ex.properties) ? ex.properties.filter((p) => typeof p === "string").slice(0, 50) : [];
  S.exercise = props.length || typeof ex.title === "string" ? {
    title: typeof ex.title === "string" ? ex.title.slice(0, 200) : "",
    instructions: typeof ex.instructions === "string" ? ex.instructions.slice(0, 5000) : "",
    properties: props,
  } : null;
  renderExercise();
}

function renderExercise() {
  const ex = S.exercise;
  $("exercise-tab").hidden = !ex;
  if (!ex) { if (S.tab === "exercise") showTab("prolog"); return; }
  $("exercise-title").textContent = ex.title || "Exercise";
  $("exercise-instructions").textContent = ex.instructions;
  $("exercise-properties").replaceChildren(...ex.properties.map((text, i) => el("li", { "data-property": String(i), class: "todo" },
    el("span", { class: "mark", text: "\u2022" }), el("span", { class: "property", text: " " + text }))));
}

// Check the text against each property of the exercise: the analyses they need, each
// asked once, within the server's limits; then each property judged on their answers.
async function runExercise() {
  const ex = S.exercise;
  if (!ex) return;
  const button = $("exercise-run");
  button.disabled = true;
  const read = ex.properties.map(readProperty);
  const items = [...$("exercise-properties").children];
  items.forEach((li) => { li.className = "todo"; li.querySelector(".mark").textContent = "\u2026"; li.querySelector(".why")?.remove(); });
  const needs = new Set(read.flatMap((r) => (r.spec ? r.spec.needs : [])));
  const answers = {};
  try {
    answers.check = await post("check", game()).catch((err) => ({ failed: err.message }));
    const errors = answers.check.failed ? 1 : answers.check.errors;
    const isGame = answers.check.kind === "game";
    const broken = { failed: answers.check.failed || "the text has errors: fix them first" };
    if (needs.has("analyze")) {
      answers.analyze = errors ? broken
        : !isGame ? { failed: "it is a logic program, not a game (no roles)" }
        : await post("analyze", game()).catch((err) => ({ failed: err.message }));
    }
    answers.model = {};
    for (const r of read.filter((r) => r.spec && r.spec.needs.includes("model"))) {
      const syntax = atomSyntax(r.match[1]);
      if (syntax in answers.model) continue;
      answers.model[syntax] = errors ? broken
        : await post("model", { ...game(), answer_syntax: syntax, input: "", inputs: [] })
          .catch((err) => ({ failed: err.message }));
    }
    if (needs.has("explain")) {
      answers.explain = {};
      for (const r of read.filter((r) => r.spec && r.spec.needs.includes("explain"))) {
        const atom = r.match[1];
        answers.explain[atom] = errors ? broken
          : !isGame ? { failed: "it is a logic program, not a game: it has no initial state" }
          : await post("explain", { ...game(), moves: [], atom, depth: 2 }).catch((err) => ({ failed: err.message }));
      }
    }
  } finally {
    button.disabled = false;
  }
  let held = 0;
  read.forEach((r, i) => {
    const result = r.spec ? r.spec.judge(r.match, answers)
      : { holds: null, why: "not understood: docs/studio.md lists the properties an exercise may ask" };
    if (result.holds) held++;
    const li = items[i];
    li.className = result.holds ? "holds" : result.holds === false ? "fails" : "unknown";
    li.querySelector(".mark").textContent = result.holds ? "\u2713" : result.holds === false ? "\u2717" : "?";
    if (!result.holds) {
      const why = el("div", { class: "why", text: result.why || "" });
      if (result.moves) why.append(replayButton(result.label || "counterexample", result.moves));
      li.append(why);
    }
  });
  $("exercise-summary").textContent = `${held} of ${read.length} hold`;
}

function failedAnswer(a) {
  return a && a.failed ? { holds: null, why: "cannot check: " + a.failed } : null;
}

function noErrors(a) {
  const c = a.check;
  if (c.failed) return failedAnswer(c);
  if (!c.errors) return { holds: true };
  const first = c.findings.find((f) => f.severity === "error");
  return { holds: false, why: `${c.errors} error${c.errors === 1 ? "" : "s"}, the first: ${first.line ? "line " + first.line + ": " : ""}${first.message}` };
}

function verdict(a, name) {
  const r = a.analyze;
  if (r.failed) return failedAnswer(r);
  const p = r.report.properties[name];
  if (p.verdict === "proved") return { holds: true };
  const why = p.verdict === "refuted" ? p.note : "not known: " + p.note;
  return { holds: p.verdict === "refuted" ? false : null, why, moves: p.counterexample || null };
}

function roleOf(report, written) {
  return report.roles.find((r) => r.toLowerCase() === written.toLowerCase());
}

function winnable(a, name, written) {
  const r = a.analyze;
  if (r.failed) return failedAnswer(r);
  const role = roleOf(r.report, written);
  if (!role) return { holds: false, why: `${written} is not a role of the game (its roles: ${r.report.roles.join(", ")})` };
  const p = r.report.properties[name];
  const v = p.roles[role];
  if (v === "proved") return { holds: true };
  const whyNot = ((r.why_not || {})[name] || {})[role];
  const best = ((p.why_not || {})[role] || {}).best_at;
  if (v === "refuted") {
    return {
      holds: false,
      why: whyNot || `no ${name === "weak_winnability" ? "match" : "sequence of its own moves"} wins for ${written}`,
      moves: best || null, label: `best ending for ${written}`,
    };
  }
  return { holds: null, why: "not known within the server's search budget: " + (r.report.properties.well_formed.note || "") };
}

function within(a, n) {
  const r = a.analyze;
  if (r.failed) return failedAnswer(r);
  const rep = r.report;
  const term = rep.properties.termination;
  if (term.verdict === "refuted") return { holds: false, why: "a match can go on for ever: " + term.note, moves: term.counterexample };
  if (!rep.exhaustive) return { holds: null, why: "not known: the search stopped before it saw every state" };
  if (!rep.depth) return { holds: false, why: "no terminal state is reachable" };
  if (rep.depth.max <= n) return { holds: true };
  return { holds: false, why: `a match can last ${rep.depth.max} moves` };
}

// An atom as text compared with another: spaces and case aside (GDL symbols are
// case-insensitive), in the syntax it is written in.
function sameAtom(x, y) {
  const norm = (t) => t.toLowerCase().replace(/\s+/g, " ").replace(/\( /g, "(").replace(/ \)/g, ")").replace(/\s*,\s*/g, ",").trim();
  return norm(x) === norm(y);
}

// The syntax an atom of a property is written in: KIF when it starts with "(".
function atomSyntax(atom) {
  return atom.trim().startsWith("(") ? "kif" : "infix";
}

function inModel(a, atom, wanted) {
  const m = a.model[atomSyntax(atom)];
  if (m.failed) return failedAnswer(m);
  const name = atom.trim().replace(/^\(\s*/, "").split(/[\s(),]/)[0].toLowerCase();
  // (p) is the relation p() beside the proposition p: their atoms are told apart by text
  const rel = m.relations.filter((r) => r.name.toLowerCase().replace(/\(\)$/, "") === name);
  const atoms = rel.flatMap((r) => r.atoms);
  const found = atoms.some((x) => sameAtom(x, atom));
  const undefined_ = rel.flatMap((r) => r.undefined || []).some((x) => sameAtom(x, atom));
  if (found === wanted && !undefined_) return { holds: true };
  if (undefined_) return { holds: false, why: `${atom} is undefined in the well-founded model (neither true nor false)` };
  if (wanted) {
    const some = atoms.slice(0, 8).join(" ");
    return { holds: false, why: atoms.length ? `the model does not contain it; its ${name} atoms: ${some}${atoms.length > 8 ? " \u2026" : ""}` : `the model has no ${name} atom at all` };
  }
  return { holds: false, why: `the model contains ${atom}` };
}

function initially(a, atom, wanted) {
  const e = a.explain[atom];
  if (e.failed) return failedAnswer(e);
  if (e.holds === wanted) return { holds: true };
  return { holds: false, why: e.text.split("\n").slice(0, 6).join("\n") };
}

document.addEventListener("DOMContentLoaded", start);
