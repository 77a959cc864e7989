"""The web floor display's pages: the floor board and the stream overlay (HTML, CSS, JavaScript).

Both draw the view the server pushes (``/events``, server-sent events; the
browser's EventSource reconnects by itself); the countdown ticks locally. Cards
are drawn as SVG by the page (no artwork is downloaded). Everything the page
shows comes from the view: the roads, ask roads and statistics are computed by
the server's pure functions (``display/roads.py``, ``display/boards.py``), so a
test can compare the DOM with them. Labels come in the display's language
(:data:`table_controller.display.labels.LABELS`, ``__LABELS__`` below); card
codes and numbers are the same in every language.

The floor board fits 1920 × 1080 (landscape) and 1080 × 1920 (portrait, by CSS
orientation), with type sized to be read from 5 m. It shows "connection lost"
when no view came for 2.5 s (a live table sends a heartbeat every second).
"""

STYLE = r"""
  :root { --felt: #0b5d3b; --gold: #f2c14e; --red: #d32f2f; --blue: #1565c0; --green: #2e7d32; }
  * { box-sizing: border-box; }
  body { margin: 0; font-family: "DejaVu Sans", "Noto Sans CJK SC", "WenQuanYi Zen Hei", Arial, sans-serif; background: var(--felt);
         color: #fff; width: 100vw; height: 100vh; overflow: hidden; }
  header { display: flex; gap: 2rem; align-items: baseline; padding: .8rem 2rem; background: #063d27; }
  #table { font-size: 3rem; font-weight: bold; }
  #game { font-size: 1.6rem; }
  #state { font-size: 2.4rem; color: var(--gold); text-transform: uppercase; }
  #round { font-size: 1.4rem; color: #cde; }
  #countdown { font-size: 4rem; font-weight: bold; margin-left: auto; min-width: 3ch; text-align: right; }
  #status { font-size: 1.2rem; padding: .3rem .8rem; border-radius: .4rem; background: #333; }
  #status.live { background: #1f7a3a; } #status.stale { background: var(--red); font-size: 2rem; }
  main { display: grid; gap: .8rem 1.6rem; padding: .8rem 2rem;
         grid-template-columns: 1.1fr 1fr; grid-template-areas: "cards roads" "banner roads" "side roads"; }
  @media (orientation: portrait) {
    main { grid-template-columns: 1fr; grid-template-areas: "cards" "banner" "roads" "side"; }
  }
  #positions { grid-area: cards; display: flex; gap: 2.5rem; justify-content: center; flex-wrap: wrap; }
  .position h2 { text-transform: uppercase; text-align: center; margin: .2rem 0 .4rem; letter-spacing: .1em;
                 font-size: 2rem; }
  .position .points { font-size: 2.6rem; font-weight: bold; text-align: center; color: var(--gold); }
  .cards { display: flex; gap: .4rem; }
  svg.card { width: 110px; height: 154px; filter: drop-shadow(2px 3px 3px rgba(0,0,0,.5)); }
  #banner { grid-area: banner; text-align: center; font-size: 3rem; font-weight: bold; padding: .5rem;
            background: var(--gold); color: #222; border-radius: .6rem; }
  [hidden] { display: none !important; }
  #roads { grid-area: roads; display: flex; flex-direction: column; gap: .5rem; }
  #side { grid-area: side; display: flex; gap: 1.5rem; flex-wrap: wrap; align-items: flex-start; }
  h3 { margin: .1rem 0 .3rem; font-weight: normal; letter-spacing: .06em; font-size: 1.3rem; }
  svg.road { background: #fff; border-radius: .3rem; display: block; }
  .asks { display: flex; gap: 1rem; }
  .ask { background: #fff; color: #222; border-radius: .4rem; padding: .3rem .6rem; font-size: 1.5rem;
         display: flex; gap: .5rem; align-items: center; }
  .ask b { color: #fff; padding: 0 .4rem; border-radius: .3rem; }
  .stats { display: grid; grid-template-columns: auto auto; gap: .1rem 1rem; font-size: 1.6rem; }
  .stats dd { margin: 0; font-weight: bold; text-align: right; }
  .stats dt.B { color: #ff8a80; } .stats dt.P { color: #82b1ff; } .stats dt.T { color: #b9f6ca; }
  #payouts table, #board table { border-collapse: collapse; font-size: 1.3rem; }
  #payouts td, #board td, #board th { padding: .1rem .6rem; border-bottom: 1px solid rgba(255,255,255,.2); }
  #board .win { color: #b9f6ca; font-weight: bold; } #board .lose { color: #ff8a80; }
  #notable li { font-size: 1.3rem; }
  #history span { display: inline-block; min-width: 2.2rem; text-align: center; margin: 2px; padding: 2px 5px;
                  border-radius: 50%; font-weight: bold; font-size: 1.3rem; }
  .lbl-B { background: var(--red); } .lbl-P { background: var(--blue); } .lbl-T { background: var(--green); }
  .lbl-VOID { background: #555; border-radius: 4px !important; }
  #pause { position: fixed; left: 10%; right: 10%; bottom: 6%; background: rgba(160,20,20,.95); font-size: 2.6rem;
           text-align: center; padding: 1rem; border-radius: .8rem; border: 4px solid #fff; }
"""

COMMON = r"""
"use strict";
const LABELS = __LABELS__;
const L = key => (LABELS[key] !== undefined ? LABELS[key] : key);
const SVG = "http://www.w3.org/2000/svg";
const SUITS = {S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663"};

function el(tag, attrs, text, ns) {
  const node = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}
const svg = (tag, attrs, text) => el(tag, attrs, text, true);

function card(code) {
  const box = svg("svg", {class: "card", viewBox: "0 0 100 140", "data-code": code || ""});
  if (!code) {
    box.appendChild(svg("rect", {x: 2, y: 2, width: 96, height: 136, rx: 8, fill: "#7b1e1e", stroke: "#fff", "stroke-width": 3}));
    return box;
  }
  const rank = code.slice(0, -1) === "T" ? "10" : code.slice(0, -1), suit = code.slice(-1);
  const colour = (suit === "H" || suit === "D") ? "#c62828" : "#111";
  const symbol = SUITS[suit] || suit;
  box.appendChild(svg("rect", {x: 2, y: 2, width: 96, height: 136, rx: 8, fill: "#fff", stroke: "#333", "stroke-width": 2}));
  box.appendChild(svg("text", {x: 9, y: 30, "font-size": 26, "font-weight": "bold", fill: colour}, rank));
  box.appendChild(svg("text", {x: 9, y: 54, "font-size": 22, fill: colour}, symbol));
  box.appendChild(svg("text", {x: 50, y: 100, "font-size": 56, "text-anchor": "middle", fill: colour}, symbol));
  box.appendChild(svg("text", {x: 91, y: 130, "font-size": 26, "font-weight": "bold", "text-anchor": "end", fill: colour}, rank));
  return box;
}

function drawPositions(view) {
  document.getElementById("positions").replaceChildren(...view.positions.map(p => {
    const box = el("div", {class: "position", "data-position": p.name});
    box.appendChild(el("h2", {}, L(p.name)));
    const cards = el("div", {class: "cards"});
    p.cards.forEach(c => cards.appendChild(card(c)));
    box.appendChild(cards);
    if (p.points !== null && p.points !== undefined) box.appendChild(el("div", {class: "points", "data-points": p.points}, String(p.points)));
    return box;
  }));
}

"""

FLOOR_SCRIPT = r"""
const COLOUR = {B: "#d32f2f", P: "#1565c0", T: "#2e7d32", red: "#d32f2f", blue: "#1565c0"};
const CELL = 26, ROAD_COLS = 30;
let countdownEnds = null, lastMessage = 0, current = null;

function window_(cells, cols) {  // the last `cols` grid columns of a road
  const last = Math.max(-1, ...cells.map(c => c.col));
  return Math.max(0, last - cols + 1);
}

function roadSvg(id, cells, size, drawCell) {
  const box = document.getElementById(id);
  const cols = Math.floor(ROAD_COLS * CELL / size);
  box.setAttribute("width", String(cols * size + 4));
  box.setAttribute("height", String(6 * size + 4));
  const first = window_(cells, cols);
  box.replaceChildren(...cells.filter(c => c.col >= first).map(c => {
    const g = svg("g", {class: "cell", "data-col": c.col, "data-row": c.row});
    drawCell(g, 2 + (c.col - first) * size + size / 2, 2 + c.row * size + size / 2, size, c);
    return g;
  }));
}

function drawRoads(view) {
  roadSvg("bead-plate", view.bead_plate, 34, (g, x, y, s, b) => {
    g.setAttribute("data-winner", b.winner);
    g.appendChild(svg("circle", {cx: x, cy: y, r: s / 2 - 2, fill: COLOUR[b.winner]}));
    g.appendChild(svg("text", {x: x, y: y + 6, "font-size": 16, "text-anchor": "middle", fill: "#fff"}, L("short_" + b.winner)));
    if (b.banker_pair) g.appendChild(svg("circle", {class: "banker-pair", cx: x - s / 3, cy: y - s / 3, r: 4, fill: COLOUR.B, stroke: "#fff"}));
    if (b.player_pair) g.appendChild(svg("circle", {class: "player-pair", cx: x + s / 3, cy: y + s / 3, r: 4, fill: COLOUR.P, stroke: "#fff"}));
  });
  roadSvg("big-road", view.big_road, CELL, (g, x, y, s, c) => {
    g.setAttribute("data-winner", c.winner); g.setAttribute("data-ties", c.ties);
    g.appendChild(svg("circle", {cx: x, cy: y, r: s / 2 - 3, fill: c.natural ? "#fff59d" : "none", "stroke-width": 3, stroke: COLOUR[c.winner]}));
    if (c.ties) g.appendChild(svg("line", {class: "tie", x1: x - 8, y1: y + 8, x2: x + 8, y2: y - 8, stroke: COLOUR.T, "stroke-width": 3}));
    if (c.ties > 1) g.appendChild(svg("text", {x: x, y: y + 4, "font-size": 11, "text-anchor": "middle", fill: COLOUR.T}, String(c.ties)));
    if (c.banker_pair) g.appendChild(svg("circle", {class: "banker-pair", cx: x - s / 3, cy: y - s / 3, r: 3, fill: COLOUR.B}));
    if (c.player_pair) g.appendChild(svg("circle", {class: "player-pair", cx: x + s / 3, cy: y + s / 3, r: 3, fill: COLOUR.P}));
  });
  const derived = {
    big_eye_boy: (g, x, y, s, c) => g.appendChild(svg("circle", {cx: x, cy: y, r: s / 2 - 2, fill: "none", "stroke-width": 2, stroke: COLOUR[c.colour]})),
    small_road: (g, x, y, s, c) => g.appendChild(svg("circle", {cx: x, cy: y, r: s / 2 - 2, fill: COLOUR[c.colour]})),
    cockroach_pig: (g, x, y, s, c) => g.appendChild(svg("line", {x1: x - s / 2 + 2, y1: y + s / 2 - 2, x2: x + s / 2 - 2, y2: y - s / 2 + 2, stroke: COLOUR[c.colour], "stroke-width": 3})),
  };
  for (const [name, drawCell] of Object.entries(derived)) {
    roadSvg(name.replaceAll("_", "-"), view.derived_roads[name] || [], 14, (g, x, y, s, c) => {
      g.setAttribute("data-colour", c.colour);
      drawCell(g, x, y, s, c);
    });
  }
  for (const side of ["B", "P"]) {
    const box = document.getElementById("ask-" + side);
    const answers = (view.ask_roads || {})[side] || {};
    box.replaceChildren(el("b", {style: "background:" + COLOUR[side]}, L("ask_" + side)), ...["big_eye_boy", "small_road", "cockroach_pig"].map(name => {
      const colour = answers[name];
      const mark = svg("svg", {width: 22, height: 22, "data-road": name, "data-colour": colour || ""});
      if (colour) derived[name](mark, 11, 11, 20, {colour: colour});
      return mark;
    }));
  }
  const stats = view.shoe_stats || {};
  const rows = [["B", "banker"], ["P", "player"], ["T", "tie"], ["", "player_pair"], ["", "banker_pair"], ["", "natural"],
                ["", "rounds"], ["", "cards_left"]];
  document.getElementById("shoe-stats").replaceChildren(...rows.flatMap(([cls, key]) => [
    el("dt", {class: cls}, L("stat_" + key)), el("dd", {"data-stat": key}, stats[key] === null || stats[key] === undefined ? "–" : String(stats[key]))]));
}

function drawBoard(view) {
  const board = view.board;
  const section = document.getElementById("board");
  section.hidden = !board;
  if (!board) return;
  const names = board.rounds.length ? board.rounds[board.rounds.length - 1].positions.map(p => p.name) : [];
  const head = el("tr", {}, undefined);
  head.appendChild(el("th", {}, L("round")));
  names.forEach(n => head.appendChild(el("th", {}, L(n))));
  const body = board.rounds.slice(-12).reverse().map(r => {
    const tr = el("tr", {"data-round": r.round || ""});
    tr.appendChild(el("td", {}, r.round || ""));
    r.positions.forEach(p => tr.appendChild(el("td", {class: p.result || "", "data-position": p.name, "data-result": p.result || ""},
      L(p.result || "") + " " + (p.class === null ? "" : p.class))));
    return tr;
  });
  document.getElementById("board-rounds").replaceChildren(head, ...body);
  document.getElementById("board-wins").replaceChildren(...Object.entries(board.wins).map(([k, v]) =>
    el("span", {"data-wins": k}, k.split(" over ").map(L).join(" > ") + " " + v + "   ")));
  document.getElementById("notable").replaceChildren(...board.notable.slice().reverse().map(n =>
    el("li", {"data-round": n.round || ""}, (n.round || "") + " — " + n.text)));
}

function draw(view) {
  current = view;
  document.getElementById("table").textContent = view.table || "—";
  document.getElementById("game").textContent = view.variant || view.game || "";
  const state = document.getElementById("state");
  state.textContent = L("state_" + (view.state || "waiting"));
  state.setAttribute("data-state", view.state || "waiting");
  document.getElementById("round").textContent = view.round ? L("round") + " " + view.round : "";
  const baccarat = !view.game || view.game === "baccarat";
  document.querySelectorAll(".baccarat-only").forEach(s => { s.hidden = !baccarat; });
  countdownEnds = view.countdown === null ? null : performance.now() + view.countdown * 1000;
  tick();
  drawPositions(view);
  const banner = document.getElementById("banner");
  banner.hidden = !view.result;
  banner.textContent = view.result ? view.result.banner : "";
  document.getElementById("history").replaceChildren(...view.history.map(h =>
    el("span", {class: "lbl-" + h.label, title: h.banner, "data-round": h.round || ""},
       LABELS["short_" + h.label] !== undefined ? LABELS["short_" + h.label] : h.label)));
  if (baccarat) drawRoads(view);
  drawBoard(view);
  document.getElementById("payouts-rows").replaceChildren(...view.payouts.map(p => {
    const tr = el("tr", {"data-bet": p.bet});
    tr.appendChild(el("td", {}, L(p.bet))); tr.appendChild(el("td", {}, p.pays));
    return tr;
  }));
  document.getElementById("limits").textContent = view.limits ? L("limits") + " " + view.limits : "";
  const pause = document.getElementById("pause");
  const alert = view.alerts.length ? view.alerts[view.alerts.length - 1] : null;
  pause.hidden = !(view.state === "paused");
  pause.textContent = view.state === "paused" ? L("paused") + (alert ? ": " + L(alert.kind) + (alert.detail ? " — " + alert.detail : "") : (view.reason ? ": " + view.reason : "")) : "";
}

function tick() {
  const box = document.getElementById("countdown");
  box.textContent = countdownEnds === null ? "" : String(Math.max(0, Math.ceil((countdownEnds - performance.now()) / 1000)));
  const status = document.getElementById("status");
  if (lastMessage && performance.now() - lastMessage > 2500 && status.className === "live") {
    status.className = "stale"; status.textContent = L("connection_lost");
  }
}
setInterval(tick, 200);

function connect() {
  const source = new EventSource("events");
  const status = document.getElementById("status");
  source.addEventListener("view", message => {
    lastMessage = performance.now();
    status.className = "live"; status.textContent = L("live");
    try { draw(JSON.parse(message.data)); } catch (e) { console.error("bad view", e); }
  });
  source.onerror = () => { status.className = "stale"; status.textContent = L("connection_lost"); };
}
connect();
"""

PAGE = r"""<!doctype html>
<html lang="__LANG__">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Table display</title>
<style>""" + STYLE + r"""</style>
</head>
<body>
<header>
  <span id="table">—</span><span id="game"></span><span id="state"></span>
  <span id="round"></span><span id="countdown"></span><span id="status">…</span>
</header>
<main>
  <section id="positions"></section>
  <div id="banner" hidden></div>
  <section id="roads">
    <div class="baccarat-only"><h3 data-label="bead_plate"></h3><svg id="bead-plate" class="road"></svg></div>
    <div class="baccarat-only"><h3 data-label="big_road"></h3><svg id="big-road" class="road"></svg></div>
    <div class="baccarat-only" style="display:flex; gap:1rem; flex-wrap:wrap">
      <div><h3 data-label="big_eye_boy"></h3><svg id="big-eye-boy" class="road"></svg></div>
      <div><h3 data-label="small_road"></h3><svg id="small-road" class="road"></svg></div>
      <div><h3 data-label="cockroach_pig"></h3><svg id="cockroach-pig" class="road"></svg></div>
    </div>
    <div class="baccarat-only asks"><div class="ask" id="ask-B"></div><div class="ask" id="ask-P"></div></div>
    <section id="board" hidden><h3 data-label="history_board"></h3><table id="board-rounds"></table>
      <div id="board-wins"></div><h3 data-label="notable"></h3><ul id="notable"></ul></section>
  </section>
  <section id="side">
    <div class="baccarat-only"><h3 data-label="shoe"></h3><dl class="stats" id="shoe-stats"></dl></div>
    <div id="payouts"><h3 data-label="payouts"></h3><div id="limits"></div><table id="payouts-rows"></table></div>
    <div><h3 data-label="last_results"></h3><div id="history"></div></div>
  </section>
</main>
<div id="pause" hidden></div>
<script>""" + COMMON + FLOOR_SCRIPT + r"""
document.querySelectorAll("[data-label]").forEach(h => { h.textContent = L(h.getAttribute("data-label")); });
</script>
</body>
</html>
"""

OVERLAY = r"""<!doctype html>
<html lang="__LANG__">
<head>
<meta charset="utf-8">
<title>Table overlay</title>
<style>
  html, body { margin: 0; background: transparent; width: 1920px; height: 1080px; overflow: hidden;
               font-family: "DejaVu Sans", "Noto Sans CJK SC", "WenQuanYi Zen Hei", Arial, sans-serif; color: #fff; }
  #overlay { position: absolute; left: 0; right: 0; bottom: 40px; display: flex; flex-direction: column;
             align-items: center; gap: 12px; text-shadow: 0 2px 6px #000; }
  #positions { display: flex; gap: 120px; }
  .position { background: rgba(0,0,0,.45); border-radius: 12px; padding: 10px 16px; }
  .position h2 { margin: 0 0 6px; text-align: center; font-size: 34px; text-transform: uppercase; }
  .cards { display: flex; gap: 8px; }
  svg.card { width: 90px; height: 126px; }
  .points { text-align: center; font-size: 44px; font-weight: bold; color: #f2c14e; }
  #banner { font-size: 52px; font-weight: bold; background: rgba(242,193,78,.92); color: #222; padding: 6px 28px;
            border-radius: 10px; }
  #banner[hidden] { display: none; }
</style>
</head>
<body>
<div id="overlay"><section id="positions"></section><div id="banner" hidden></div></div>
<script>""" + COMMON + r"""
function draw(view) {
  drawPositions(view);
  const banner = document.getElementById("banner");
  banner.hidden = !view.result;
  banner.textContent = view.result ? view.result.banner : "";
}
const source = new EventSource("events");
source.addEventListener("view", message => {
  try { draw(JSON.parse(message.data)); } catch (e) { console.error("bad view", e); }
});
</script>
</body>
</html>
"""


STUDIO_PAGE = r"""<!doctype html>
<html lang="__LANG__">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Studio</title>
<style>
  * { box-sizing: border-box; }
  body { margin: 0; font-family: "DejaVu Sans", "Noto Sans CJK SC", "WenQuanYi Zen Hei", Arial, sans-serif;
         background: #10151c; color: #eee; }
  header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #1b2430; }
  header h1 { font-size: 1.6rem; margin: 0; }
  #count { color: #9ab; }
  #status { margin-left: auto; padding: .2rem .6rem; border-radius: .3rem; background: #444; }
  #status.live { background: #1f7a3a; } #status.stale { background: #c62828; }
  #tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: .6rem; padding: .8rem; }
  .tile { background: #1e2835; border-radius: .5rem; padding: .5rem .7rem; cursor: pointer; border-left: 6px solid #556;
          text-decoration: none; color: inherit; display: block; }
  .tile[data-state="betting"] { border-color: #2e7d32; } .tile[data-state="dealing"] { border-color: #f2c14e; }
  .tile[data-state="paused"] { border-color: #d32f2f; background: #3a1c1c; }
  .tile.silent { opacity: .45; }
  .tile .top { display: flex; justify-content: space-between; align-items: baseline; }
  .tile .name { font-size: 1.5rem; font-weight: bold; } .tile .countdown { font-size: 1.5rem; font-weight: bold; }
  .tile .state { text-transform: uppercase; font-size: .9rem; color: #f2c14e; }
  .tile .meta { font-size: .85rem; color: #9ab; }
  .tile .alert { color: #ff8a80; font-size: .9rem; }
  .chips span { display: inline-block; min-width: 1.3rem; text-align: center; margin: 1px; border-radius: 50%;
                font-size: .75rem; font-weight: bold; }
  .lbl-B { background: #d32f2f; } .lbl-P { background: #1565c0; } .lbl-T { background: #2e7d32; }
  .lbl-VOID { background: #555; border-radius: 3px !important; } .chips span.other { background: #556; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<header><h1 data-label="studio"></h1><span id="count"></span>
  <label><span data-label="filter_state"></span> <select id="filter">
    <option value="">*</option><option>betting</option><option>dealing</option><option>result</option>
    <option>idle</option><option>paused</option><option>closed</option></select></label>
  <label><span data-label="sort"></span> <select id="sort"><option value="table">table</option>
    <option value="state">state</option><option value="alert">alert</option></select></label>
  <span id="status">…</span></header>
<main id="tiles"></main>
<script>
"use strict";
const LABELS = __LABELS__;
const L = key => (LABELS[key] !== undefined ? LABELS[key] : key);
const tiles = new Map();  // table -> {data, node, at}
window.updates = [];      // [table, seq, Date.now()] per drawn update (the benchmark reads it)
let lastMessage = 0;

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function drawTile(t) {
  let entry = tiles.get(t.table);
  if (!entry) {
    entry = {node: el("a", {class: "tile", href: "table/" + encodeURIComponent(t.table) + "/"})};
    tiles.set(t.table, entry);
  }
  entry.data = t; entry.at = performance.now();
  entry.ends = t.countdown === null ? null : performance.now() + t.countdown * 1000;
  const n = entry.node;
  n.dataset.table = t.table; n.dataset.state = t.state || ""; n.dataset.seq = t.seq;
  n.classList.remove("silent");
  const top = el("div", {class: "top"});
  top.append(el("span", {class: "name"}, t.table), el("span", {class: "countdown"}, ""));
  const chips = el("div", {class: "chips"});
  t.last.forEach(x => chips.append(el("span", {class: "lbl-" + x + (["B", "P", "T", "VOID"].includes(x) ? "" : " other")},
    LABELS["short_" + x] !== undefined ? LABELS["short_" + x] : x)));
  n.replaceChildren(top, el("div", {class: "state"}, L("state_" + (t.state || "waiting")) + (t.round ? " · " + t.round : "")),
    el("div", {class: "meta"}, (t.variant || t.game || "") + (t.dealer ? " · " + L("dealer") + " " + t.dealer : "") +
       " · " + t.rounds_this_hour + " " + L("rounds_per_hour")), chips);
  if (t.alert) n.append(el("div", {class: "alert"}, L(t.alert.kind) + (t.alert.detail ? ": " + t.alert.detail : "")));
  window.updates.push([t.table, t.seq, Date.now()]);
}

function layout() {
  const filter = document.getElementById("filter").value, sort = document.getElementById("sort").value;
  const order = {paused: 0, dealing: 1, betting: 2, result: 3, idle: 4, closed: 5};
  const list = [...tiles.values()].filter(e => !filter || e.data.state === filter);
  list.sort((a, b) => {
    if (sort === "state") return (order[a.data.state] ?? 9) - (order[b.data.state] ?? 9) || a.data.table.localeCompare(b.data.table);
    if (sort === "alert") return (b.data.alert ? 1 : 0) - (a.data.alert ? 1 : 0) || a.data.table.localeCompare(b.data.table);
    return a.data.table.localeCompare(b.data.table);
  });
  const box = document.getElementById("tiles");
  const wanted = list.map(e => e.node);
  if (wanted.length !== box.children.length || wanted.some((node, i) => box.children[i] !== node)) box.replaceChildren(...wanted);
  document.getElementById("count").textContent = list.length + " / " + tiles.size;
}

function tick() {
  const now = performance.now();
  for (const e of tiles.values()) {
    const c = e.node.querySelector(".countdown");
    if (c) c.textContent = e.ends === null ? "" : String(Math.max(0, Math.ceil((e.ends - now) / 1000)));
    if (now - e.at > 3000) e.node.classList.add("silent");  // a live table sends a heartbeat every second
  }
  const status = document.getElementById("status");
  if (lastMessage && now - lastMessage > 20000) { status.className = "stale"; status.textContent = L("connection_lost"); }
}
setInterval(tick, 250);
document.getElementById("filter").onchange = layout;
document.getElementById("sort").onchange = layout;
document.querySelectorAll("[data-label]").forEach(h => { h.textContent = L(h.getAttribute("data-label")); });

const source = new EventSource("events");
source.addEventListener("tiles", message => {
  lastMessage = performance.now();
  const status = document.getElementById("status");
  status.className = "live"; status.textContent = L("live");
  try {
    JSON.parse(message.data).tiles.forEach(drawTile);
    layout(); tick();
  } catch (e) { console.error("bad tiles", e); }
});
source.onerror = () => { const s = document.getElementById("status"); s.className = "stale"; s.textContent = L("connection_lost"); };
</script>
</body>
</html>
"""


def render_page(template: str, lang: str, labels_json: str) -> str:
    """A page with the display's language and its labels filled in."""
    return template.replace("__LABELS__", labels_json).replace("__LANG__", lang)
