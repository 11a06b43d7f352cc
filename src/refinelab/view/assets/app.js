// refinelab viewer: a small hash-routed page over data files written as scripts (REFINELAB.put), so
// the same files work served and from file://. Numbers are never computed here: they come from the
// report (tables rendered by refinelab) and from the metrics' case lists.
"use strict";

const REFINELAB = (window.REFINELAB = { data: {}, put(path, value) { this.data[path] = value; } });
const LIVE = Boolean(window.REFINELAB_LIVE);
const CASES = [
  ["all", "All trajectories", "every stored trajectory"],
  ["regressions", "Regression errors", "passing attempt rejected by the critic, then broken"],
  ["false-rejections", "False rejections", "critic rejected code that passes"],
  ["false-acceptances", "False acceptances", "critic accepted code that fails"],
  ["improvements", "Improvements", "first attempt wrong, returned answer right"],
  ["worsened", "Right → wrong", "first attempt right, returned answer wrong"],
  ["disagree", "Disagreements", "trajectories on problems some configurations solve and others do not"],
  ["overthinking", "Overthinking", "a higher reasoning effort got wrong what a lower effort of the same strategy got right"],
];
const ATTEMPT_CASES = { regressions: "regression_errors", "false-rejections": "false_rejections", "false-acceptances": "false_acceptances" };
const VERDICT_LETTER = { pass: "✓", refine: "R", redraft: "D" };
const CALL_TEXT = {
  true_accept: ["true acceptance", "true"], false_accept: ["false acceptance", "false"],
  true_reject: ["true rejection", "true"], false_reject: ["false rejection", "false"],
};
let refreshTimer = null;
const scrolls = {};  // where each address was scrolled to, restored on coming back (e.g. from a trajectory)
let drawn = null;  // the address on screen
history.scrollRestoration = "manual";

// --- data -----------------------------------------------------------------------------------------

function load(path, fresh) {
  if (!fresh && REFINELAB.data[path] !== undefined) return Promise.resolve(REFINELAB.data[path]);
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = LIVE ? `${path}?t=${Date.now()}` : path;
    script.onload = () => { script.remove(); resolve(REFINELAB.data[path]); };
    script.onerror = () => { script.remove(); reject(new Error(`could not load ${path}`)); };
    document.head.appendChild(script);
  });
}

// A run of the index (the id, or a unique prefix of it as on the command line) and the index.
async function runEntry(id, fresh) {
  const index = await load("data/runs.js", fresh);
  const prefixed = index.runs.filter((r) => r.id.startsWith(id));
  const run = index.runs.find((r) => r.id === id) || (prefixed.length === 1 ? prefixed[0] : null);
  if (!run && !fresh && LIVE) return runEntry(id, true);  // a run started since the index was read
  if (!run) throw new Error(`no run ${id} here`);
  return { run, index };
}

async function runData(id, fresh) {
  const { run } = await runEntry(id, fresh);
  return load(`data/${run.slug}/run.js`, fresh);
}

// --- DOM helpers ----------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function trusted(html) {
  // tables rendered (and escaped) by refinelab itself
  const box = document.createElement("div");
  box.innerHTML = html;
  return box;
}

const pct = (v) => (v === null || v === undefined ? "–" : (100 * v).toFixed(1));
const money = (v) => (v === null || v === undefined ? "unknown" : v > 0 && v < 0.01 ? `$${v.toPrecision(3)}` : `$${v.toFixed(4)}`);
const seconds = (v) => `${v.toFixed(1)} s`;
const thousands = (v) => Number(v).toLocaleString("en-US");

function hash(...parts) {
  const [path, query] = parts.length && typeof parts[parts.length - 1] === "object" ? [parts.slice(0, -1), parts[parts.length - 1]] : [parts, null];
  const search = query ? new URLSearchParams(Object.entries(query).filter(([, v]) => v !== "" && v !== null && v !== undefined)).toString() : "";
  return "#/" + path.map((p) => encodeURIComponent(String(p))).join("/") + (search ? `?${search}` : "");
}

function trajectoryLink(runId, config, problem, repeat, attempt) {
  return hash("run", runId, "t", config, problem, repeat, attempt === undefined ? {} : { attempt });
}

function show(...nodes) {
  const main = document.getElementById("main");
  main.replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));
}

function setNav(runId, current) {
  const nav = document.getElementById("nav");
  const links = [el("a", { href: "#/", class: current === "runs" ? "current" : null }, "Runs")];
  if (runId) {
    links.push(el("a", { href: hash("run", runId), class: current === "overview" ? "current" : null }, "Overview"));
    links.push(el("a", { href: hash("run", runId, "cases"), class: current === "cases" ? "current" : null }, "Trajectories"));
    links.push(el("a", { href: hash("run", runId, "figures"), class: current === "figures" ? "current" : null }, "Figures"));
  }
  links.push(el("a", { href: hash("compare", runId ? { a: runId } : {}), class: current === "compare" ? "current" : null }, "Compare"));
  nav.replaceChildren(...links);
}

function setStatus(run) {
  const status = document.getElementById("status");
  status.textContent = run ? `${run.id} · ${run.status}${LIVE ? " · live" : ""}` : (LIVE ? "live" : "static site");
}

// --- router ---------------------------------------------------------------------------------------

// refresh: the same address drawn again with newer data (stay where the reader is)
async function route(refresh) {
  clearTimeout(refreshTimer);
  if (drawn !== null) scrolls[drawn] = window.scrollY;
  const raw = location.hash.replace(/^#\/?/, "");
  const keep = refresh === true ? window.scrollY : (scrolls[raw] ?? 0);
  const [pathPart, queryPart] = raw.split("?");
  const parts = pathPart ? pathPart.split("/").map(decodeURIComponent) : [];
  const query = new URLSearchParams(queryPart || "");
  let placed = false;  // the page scrolled itself (to a linked attempt)
  try {
    if (parts[0] === "run" && parts.length === 2) await overviewPage(parts[1]);
    else if (parts[0] === "run" && parts[2] === "cases") await casesPage(parts[1], query);
    else if (parts[0] === "run" && parts[2] === "figures") await figuresPage(parts[1]);
    // a problem key holds a slash: links encode it, but a hand-written link may not
    else if (parts[0] === "run" && parts[2] === "t" && parts.length >= 6) placed = await trajectoryPage(parts[1], parts[3], parts.slice(4, -1).join("/"), Number(parts[parts.length - 1]), query, refresh === true);
    else if (parts[0] === "compare") await comparePage(query);
    else await runsPage();
  } catch (error) {
    show(el("p", { class: "error" }, String(error.message || error)));
  }
  if (!placed) window.scrollTo(0, keep);
  drawn = raw;
  document.body.dataset.ready = raw;  // the page for this address is drawn (tests wait for it)
}

function liveRefresh(run) {
  if (LIVE && run.status === "running") refreshTimer = setTimeout(async () => { await load("data/runs.js", true); route(true); }, 15000);
}

// --- runs -----------------------------------------------------------------------------------------

async function runsPage() {
  const index = await load("data/runs.js", LIVE);
  setNav(null, "runs");
  setStatus(null);
  if (index.runs.length === 1 && !location.hash.startsWith("#/runs")) {
    location.replace(hash("run", index.runs[0].id));
    return;
  }
  const rows = index.runs.slice().reverse().map((r) => el("tr", {},
    el("td", {}, el("a", { href: hash("run", r.id) }, r.id)), el("td", {}, r.name), el("td", {}, statusBadge(r.status)),
    el("td", {}, new Date(r.created * 1000).toLocaleString()), el("td", { class: "num" }, r.configurations),
    el("td", { class: "num" }, r.problems), el("td", { class: "num" }, r.trajectories)));
  show(el("h1", {}, "Runs"), el("table", { class: "list" },
    el("thead", {}, el("tr", {}, ["run", "name", "status", "started", "configurations", "problems", "trajectories"].map((h) => el("th", {}, h)))),
    el("tbody", {}, rows)));
}

function statusBadge(status) {
  const kind = status === "complete" ? "pass" : status === "running" ? "warn" : "fail";
  return el("span", { class: `badge ${kind}` }, status);
}

// --- overview -------------------------------------------------------------------------------------

async function overviewPage(runId) {
  const data = await runData(runId, LIVE);
  setNav(runId, "overview");
  setStatus(data.run);
  const counts = caseCounts(data);
  const tables = data.overview_html.map((html) => linkLabels(trusted(html), runId));
  show(
    el("h1", {}, `${data.run.name} `, statusBadge(data.run.status)),
    ...data.header.map((line) => el("p", { class: "meta" }, line)),
    el("h2", {}, "Find the cases"),
    el("div", { class: "cases", id: "case-links" }, CASES.map(([key, title, what]) =>
      el("a", { class: "case", href: hash("run", runId, "cases", { case: key }), "data-case": key, title: what },
        el("b", {}, counts[key]), el("span", {}, title)))),
    el("h2", { id: "headline-title" }, data.headline),
    el("p", { class: "note" }, "Each cell: the value, then its 95% bootstrap interval over problems (seeded); after an iteration, " +
      "the change from the first attempt and its interval, in colour. Regr.: passing attempts the critic rejected and the actor " +
      "then broke. Avg It.: mean refinement steps. Cost × single: mean cost per problem over single pass with the same actor " +
      "(tok: tokens, where a price is unknown). Same numbers as refinelab report --format json."),
    el("div", { class: "overview-wrap", id: "headline" }, tables[0]),
    tables.length > 1 ? el("h2", {}, "By benchmark and difficulty") : null,
    el("div", { class: "overview-wrap", id: "slices" }, tables.slice(1)),
    el("h2", {}, "Figures"),
    data.figures.length ? el("p", { id: "figure-links" }, "Drawn when you open them: ", data.figures.map((f, i) =>
      [i ? " · " : "", el("a", { href: hash("run", runId, "figures") }, f.title)]))
      : el("p", { class: "muted", id: "figures-note" }, noFigures(data)),
    el("h2", {}, "Every table of the report"),
    el("details", {}, el("summary", {}, "show the report's tables"), trusted(data.tables_html)),
    ...data.failures.map((line) => el("p", { class: "meta" }, line)),
  );
  liveRefresh(data.run);
}

function linkLabels(box, runId) {
  for (const row of box.querySelectorAll("tr[data-config]")) {
    const cell = row.querySelector("td.label");
    const link = el("a", { href: hash("run", runId, "cases", { config: row.dataset.config }) }, cell.textContent);
    cell.replaceChildren(link);
  }
  return box;
}

// Why a run shows no figures: matplotlib is missing (refinelab says what to install), or nothing is stored yet.
const noFigures = (data) => data.figures_note ? `No figures: ${data.figures_note}. Every table is here.` : "No figures yet: no trajectory of this run is stored.";

// Figures have their own page, so the overview never waits for matplotlib (figures are drawn on request).
async function figuresPage(runId) {
  const data = await runData(runId, LIVE);
  setNav(runId, "figures");
  setStatus(data.run);
  show(
    el("h1", {}, `Figures: ${data.run.name}`),
    el("p", { class: "note" }, "Every configuration keeps one colour, marker and number across the figures. Download each as " +
      "SVG (text stays text) or PNG (200 dpi). The same figures as refinelab report --html."),
    data.figures.length ? el("div", { class: "figures" }, data.figures.map((f) => figure(data.run.slug, f)))
      : el("p", { class: "muted", id: "figures-note" }, noFigures(data)),
  );
  await Promise.all([...document.images].map((image) => image.decode().catch(() => null)));
  liveRefresh(data.run);
}

function figure(runSlug, f) {
  const base = `figures/${runSlug}/${f.name}`;
  const link = (format) => el("a", { href: `${base}.${format}`, download: `${f.name}.${format}`, class: "download", "data-format": format,
    title: `download ${f.name}.${format}`, onclick: (event) => { event.preventDefault(); download(`${base}.${format}`, `${f.name}.${format}`); } },
    format.toUpperCase());
  return el("figure", { id: `figure-${f.name}` },
    el("figcaption", {}, f.title, link("svg"), link("png")),
    el("img", { src: `${base}.svg`, alt: f.title }));
}

// Chromium ignores `download` on links to file:// addresses (it opens the image instead, leaving the
// viewer), so the file's bytes come as a data script and are saved from a blob, which works anywhere.
async function download(path, name) {
  const data = await load(`${path}.js`, false);
  const bytes = Uint8Array.from(atob(data.base64), (c) => c.charCodeAt(0));
  const url = URL.createObjectURL(new Blob([bytes], { type: data.type }));
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function caseCounts(data) {
  const counts = {};
  for (const [key] of shownCases(data)) counts[key] = caseRows(data, key).length;
  return counts;
}

// Overthinking is a case of runs with reasoning efforts only.
function shownCases(data) {
  return CASES.filter(([key]) => key !== "overthinking" || data.efforts);
}

// One row per case the metrics count: attempts for the attempt-level cases, trajectories otherwise.
function caseRows(data, key) {
  const rows = [];
  const disagree = new Set(data.disagreements.map(([p, r]) => `${p}\u0000${r}`));
  const overthought = new Set((data.overthinking || []).map(([c, p, r]) => `${c}\u0000${p}\u0000${r}`));
  for (const t of data.trajectories) {
    if (ATTEMPT_CASES[key]) for (const i of t[ATTEMPT_CASES[key]]) rows.push({ t, attempt: i });
    else if (key === "all" || (key === "improvements" && t.improved) || (key === "worsened" && t.worsened) ||
             (key === "disagree" && disagree.has(`${t.problem}\u0000${t.repeat}`)) ||
             (key === "overthinking" && overthought.has(`${t.config}\u0000${t.problem}\u0000${t.repeat}`))) rows.push({ t, attempt: undefined });
  }
  return rows;
}

// --- cases (trajectory lists) ---------------------------------------------------------------------

async function casesPage(runId, query) {
  const data = await runData(runId, LIVE);
  setNav(runId, "cases");
  setStatus(data.run);
  const asked = query.get("case") || "all";
  const known = CASES.some(([k]) => k === asked);
  const key = known ? asked : "all";  // an unknown case (a typo, an old link) says so and lists every trajectory
  const chosen = { config: query.get("config") || "", difficulty: query.get("difficulty") || "", q: query.get("q") || "" };
  const problems = Object.fromEntries(data.problems.map((p) => [p.key, p]));
  const labels = Object.fromEntries(data.configs.map((c) => [c.config, c.label]));
  const rows = caseRows(data, key).filter(({ t }) =>
    (!chosen.config || t.config === chosen.config) &&
    (!chosen.difficulty || (problems[t.problem]?.difficulty || "unknown") === chosen.difficulty) &&
    (!chosen.q || t.problem.toLowerCase().includes(chosen.q.toLowerCase())));
  const counts = caseCounts(data);
  const [, title, what] = shownCases(data).find(([k]) => k === key) || CASES[0];
  show(
    known ? null : el("p", { class: "error", id: "unknown-case" },
      `No case is called “${asked}” (this link may be mistyped or from another version): every trajectory is ` +
      `shown; the cases are ${CASES.map(([k]) => k).join(", ")}.`),
    el("h1", {}, title),
    el("p", { class: "note" }, `${what}. ${rows.length} shown${rows.length !== counts[key] ? ` of ${counts[key]}` : ""}.`),
    el("div", { class: "cases" }, shownCases(data).map(([k, t]) => el("a", {
      class: `case${k === key ? " current" : ""}`, href: hash("run", runId, "cases", { ...chosen, case: k }), "data-case": k,
    }, el("b", {}, counts[k]), el("span", {}, t)))),
    filters(runId, key, chosen, data),
    el("table", { class: "list", id: "case-list" },
      el("thead", {}, el("tr", {}, ["problem", "difficulty", "configuration", "repeat", "attempts (hidden tests; critic)", "returned", "tokens", ""]
        .map((h, i) => el("th", { class: i === 6 ? "num" : null }, h)))),
      el("tbody", {}, rows.map((row) => caseRow(runId, row, problems, labels)))),
  );
  liveRefresh(data.run);
}

function filters(runId, key, chosen, data) {
  const go = (change) => { location.hash = hash("run", runId, "cases", { ...chosen, case: key, ...change }); };
  const difficulties = [...new Set(data.problems.map((p) => p.difficulty || "unknown"))];
  const configSelect = el("select", { id: "filter-config", onchange: (e) => go({ config: e.target.value }) },
    el("option", { value: "" }, "every configuration"),
    data.configs.map((c) => el("option", { value: c.config, selected: c.config === chosen.config }, c.label)));
  const difficultySelect = el("select", { id: "filter-difficulty", onchange: (e) => go({ difficulty: e.target.value }) },
    el("option", { value: "" }, "every difficulty"),
    difficulties.map((d) => el("option", { value: d, selected: d === chosen.difficulty }, d)));
  const search = el("input", { type: "search", id: "filter-problem", placeholder: "problem id contains…", value: chosen.q,
    onchange: (e) => go({ q: e.target.value }) });
  // the configuration on a line of its own: a closed select shows only what fits, and the same-size and
  // the smaller critic's labels differ only at their very end
  return el("div", { class: "filters" }, el("div", { class: "filter-config" }, el("label", {}, "configuration "), configSelect),
    difficulties.length > 1 ? [el("label", {}, "difficulty "), difficultySelect] : null, search);
}

function caseRow(runId, { t, attempt }, problems, labels) {
  const problem = problems[t.problem] || {};
  return el("tr", { "data-problem": t.problem, "data-config": t.config, "data-attempt": attempt === undefined ? null : attempt },
    el("td", {}, el("a", { href: trajectoryLink(runId, t.config, t.problem, t.repeat, attempt) }, t.problem)),
    el("td", {}, problem.difficulty || "unknown"),
    el("td", {}, labels[t.config] || t.config),
    el("td", { class: "num" }, t.repeat),
    el("td", {}, chips(t, attempt)),
    el("td", {}, el("span", { class: `badge ${t.passed ? "pass" : "fail"}` }, t.passed ? "passes" : "fails"), " ", el("span", { class: "muted" }, t.stop_reason)),
    el("td", { class: "num" }, thousands(t.tokens)),
    el("td", {}, el("a", { href: trajectoryLink(runId, t.config, t.problem, t.repeat, attempt) }, attempt === undefined ? "open" : `attempt ${attempt}`)));
}

function chips(t, marked) {
  return el("span", { class: "chips" }, t.hidden.map((passed, i) => el("span", {
    class: `chip ${passed ? "pass" : "fail"}${i === t.final ? " final" : ""}${i === marked ? " marked" : ""}`,
    title: `attempt ${i}: hidden tests ${passed ? "pass" : "fail"}${t.verdicts[i] ? `; critic: ${t.verdicts[i]}` : ""}${i === t.final ? "; returned" : ""}`,
  }, `${i}${VERDICT_LETTER[t.verdicts[i]] || ""}`)));
}

// --- one trajectory -------------------------------------------------------------------------------

// Reads the run index, the run's problem list and the problem's file, never the run's report (run.js),
// so a deep link opens at once on a big run whose report the server is still computing.
async function trajectoryPage(runId, config, problemKey, repeat, query, refresh) {
  const { run, index } = await runEntry(runId, false);
  const data = { run, configs: index.sides.filter((s) => s.run === run.id) };
  setNav(runId, "cases");
  setStatus(data.run);
  const { problems } = await load(`data/${run.slug}/problems.js`, LIVE);
  const info = problems.find((p) => p.key === problemKey);
  if (!info) throw new Error(`no problem ${problemKey} in run ${runId}`);
  const detail = await load(`data/${data.run.slug}/p/${info.slug}.js`, LIVE);
  const trajectory = detail.trajectories.find((t) => t.config === config && t.repeat === repeat);
  if (!trajectory) throw new Error(`no trajectory of ${config} on ${problemKey} (repeat ${repeat})`);
  // the summaries come with the details (one snapshot of the store), never from an older run.js
  const summaryOf = (t) => detail.summaries.find((s) => s.config === t.config && s.repeat === t.repeat);
  const summary = summaryOf(trajectory);
  const labels = Object.fromEntries(data.configs.map((c) => [c.config, c.label]));
  show(
    el("p", { class: "muted" }, el("a", { href: hash("run", runId) }, data.run.name), " › ",
      el("a", { href: hash("run", runId, "cases", { q: problemKey }) }, "trajectories"), " › ", problemKey),
    el("h1", {}, problemKey, " ", el("span", { class: `badge ${summary.passed ? "pass" : "fail"}` }, summary.passed ? "returned answer passes" : "returned answer fails")),
    el("p", {}, el("b", {}, labels[config] || config), repeat ? ` · repeat ${repeat}` : ""),
    facts(trajectory, summary, detail.problem),
    el("div", { class: "siblings" }, detail.trajectories.map((t) => el("a", {
      href: trajectoryLink(runId, t.config, problemKey, t.repeat), class: t.config === config && t.repeat === repeat ? "current" : null,
    }, summaryOf(t) ? chips(summaryOf(t)) : [], " ", labels[t.config] || t.config, t.repeat ? ` (repeat ${t.repeat})` : ""))),
    el("details", {}, el("summary", {}, "problem statement"),
      el("div", { class: "statement" }, detail.problem.prompt ?? "The statement was not stored (this store predates it).")),
    selectionPanel(trajectory, (i) => trajectoryLink(data.run.id, config, problemKey, repeat, i)),
    trajectory.attempts.map((a) => attemptCard(a, trajectory, summary, trajectoryLink(data.run.id, config, problemKey, repeat, a.index))),
  );
  const focus = query.get("attempt");
  const card = focus === null ? null : document.getElementById(`attempt-${focus}`);
  if (!card) return false;
  card.classList.add("focus");
  if (refresh) return false;
  card.scrollIntoView({ block: "start" });
  return true;
}

function facts(t, summary, problem) {
  const item = (name, value) => el("div", {}, el("span", {}, name), value);
  return el("div", { class: "facts" },
    item("difficulty", problem.difficulty || "unknown"), item("kind", problem.kind),
    item("tests", `${problem.visible_tests} visible · ${problem.hidden_tests} hidden`),
    item("attempts", t.attempts.length), item("returned", t.final === null ? "none" : `attempt ${t.final}`),
    item("stopped", t.stop_reason + (t.budget_note ? ` (${t.budget_note})` : "")),
    item("tokens", thousands(summary.tokens)), item("model time", seconds(summary.seconds)), item("cost", money(summary.cost_usd)));
}

function attemptCard(a, trajectory, summary, link) {
  const marks = [];
  if (summary.regression_errors.includes(a.index)) marks.push(el("span", { class: "badge fail" }, "regression error: rejected while right, broken next"));
  if (summary.regression_errors.includes(a.index - 1)) marks.push(el("span", { class: "badge fail" }, "broke the previous, correct attempt"));
  if (a.index === trajectory.final) marks.push(el("span", { class: "badge" }, "returned answer"));
  for (const d of (trajectory.decisions || []).filter((d) => d.attempt === a.index && DECISION_MARKS[d.kind])) {
    const [text, tone] = DECISION_MARKS[d.kind];
    marks.push(el("span", { class: `badge ${tone}`, "data-decision": d.kind, title: d.reason }, text));
  }
  return el("section", { class: "attempt", id: `attempt-${a.index}`, "data-attempt": a.index },
    el("header", {}, el("h2", {}, `Attempt ${a.index}`), el("span", { class: "badge" }, a.origin),
      testBadge("hidden tests", a.hidden), a.visible ? testBadge("visible tests", a.visible) : null,
      a.critic ? verdictBadge(a) : null, ...marks,
      el("a", { class: "permalink", href: link, title: "a link to this attempt (with the full run id)" }, "link")),
    el("div", { class: "body" }, codePane(a), el("div", {}, thinkingPanel(a), criticPanel(a), testsPanel(a), feedbackPanel(a), actorPanel(a))));
}

// The actor's thinking, folded, beside its code (the code was read from the answer only).
function thinkingPanel(a) {
  if (!a.reasoning && !a.reasoning_tokens) return null;
  const said = `${thousands(a.reasoning_tokens)} thinking tokens`;
  return el("div", { class: "panel thinking" }, el("h3", {}, "Thinking"),
    a.reasoning ? el("details", {}, el("summary", {}, `show the actor's thinking (${said})`), el("pre", { class: "raw reasoning" }, a.reasoning))
      : el("p", { class: "muted" }, `${said}; the server does not return the thinking itself`));
}

function notSentList(items) {
  if (!items || !items.length) return null;
  return el("ul", { class: "not-sent" }, items.map((n) => el("li", {}, el("span", { class: "badge warn" }, `${n.setting}=${n.value} not sent`), " ", el("span", { class: "muted" }, n.reason))));
}

// --- selecting strategies (codet, verified): why they refined, discarded and chose ---------------

const DECISION_MARKS = {
  refine: ["refined next", "warn"], keep: ["kept by the regression guard", "pass"],
  discard: ["discarded by the regression guard", "fail"], choose: ["chosen", "pass"],
};
const DECISION_VERBS = {
  tests: "", group: "", refine: "refined because it", keep: "kept by the regression guard:",
  discard: "discarded by the regression guard:", critic: "the critic settled a tie:", choose: "chosen:",
};

function selectionPanel(t, linkTo) {
  const decisions = t.decisions || [], generations = t.generations || [];
  if (!decisions.length && !generations.length) return null;
  return el("section", { class: "selection", id: "why" },
    decisions.length ? [el("h2", {}, "Why this answer: the decisions, in order"),
      el("ol", { class: "decisions" }, decisions.map((d) => decisionItem(d, linkTo)))] : null,
    generations.length ? [el("h2", {}, "Generated tests"), generations.map(generationPanel)] : null);
}

function decisionItem(d, linkTo) {
  const ref = (i) => el("a", { href: linkTo(i), class: "attempt-ref", "data-attempt": i }, `attempt ${i}`);
  const tone = (DECISION_MARKS[d.kind] || ["", ""])[1];
  const members = d.members.length ? [" (", d.members.flatMap((m, i) => (i ? [", ", ref(m)] : [ref(m)])), ")"] : null;
  const reason = d.kind === "refine" ? d.reason.replace(/^round \d+: /, "") : d.reason;
  return el("li", { class: "decision", "data-kind": d.kind, "data-attempt": d.attempt },
    el("span", { class: `badge ${tone}` }, d.kind),
    d.attempt !== null ? [" ", ref(d.attempt)] : null,
    d.parent !== null ? [" (refined from ", ref(d.parent), ")"] : null,
    " ", DECISION_VERBS[d.kind] || d.kind, " ", el("span", { class: "reason" }, reason), members,
    d.kind === "refine" && /^round \d+/.test(d.reason) ? el("span", { class: "muted" }, ` · ${d.reason.split(":")[0]}`) : null);
}

function generationPanel(g) {
  const verdict = (v) => (v === null ? ["no reference", "unknown"] : v ? ["reference passes", "pass"] : ["reference fails", "fail"]);
  return el("div", { class: "panel generation", "data-generation": g.index },
    el("h3", {}, `Test-writing call ${g.index}`, el("span", { class: "badge" }, `${g.tests.length} test${g.tests.length === 1 ? "" : "s"}`)),
    el("ul", { class: "generated-tests" }, g.tests.map((test, i) => {
      const [text, tone] = verdict(test.reference_passed);
      return el("li", { "data-test": i, "data-reference": tone }, el("span", { class: `badge ${tone === "unknown" ? "" : tone}` }, text), " ",
        el("code", {}, test.text));
    })),
    g.rejected.length ? el("details", { class: "rejected" }, el("summary", {}, `${g.rejected.length} rejected piece${g.rejected.length === 1 ? "" : "s"}`),
      el("ul", {}, g.rejected.map((why) => el("li", {}, why)))) : null,
    el("p", { class: "numbers" }, `${thousands(g.prompt_tokens)} prompt + ${thousands(g.completion_tokens)} completion tokens · ${seconds(g.latency_seconds)} · ${money(g.cost_usd)}` +
      (g.cached ? " · cached reply" : "")),
    el("details", {}, el("summary", {}, "raw reply"), el("pre", { class: "raw" }, g.raw)));
}

function testBadge(name, run) {
  return el("span", { class: `badge ${run.passed ? "pass" : "fail"}` }, `${name} ${run.pass_count}/${run.total}`);
}

function verdictBadge(a) {
  const verdict = a.critic.verdict;
  const call = CALL_TEXT[a.call];
  return el("span", { class: `badge ${call ? call[1] : "warn"}`, "data-verdict": verdict || "unreadable" },
    `critic: ${verdict || "unreadable"}${call ? ` — ${call[0]}` : ""}`);
}

function codePane(a) {
  const code = el("pre", { class: "code" }, a.code ?? `(no code could be extracted${a.parse_error ? `: ${a.parse_error}` : ""})`);
  if (!a.diff) return el("div", { class: "code-pane" }, el("div", { class: "tabs" }, el("button", { class: "on", type: "button" }, "code")), code);
  const diff = el("pre", { class: "diff", hidden: true }, a.diff.length ? a.diff.map(([kind, line]) => el("span", {
    class: { "+": "add", "-": "del", "@": "hunk", " ": "same" }[kind] || "same" }, `${kind === "@" ? "@" : kind}${line}`)) : "(same code as the previous attempt)");
  const codeButton = el("button", { type: "button", class: "on" }, "code");
  const diffButton = el("button", { type: "button" }, `diff from attempt ${a.index - 1}`);
  const pick = (showDiff) => { diff.hidden = !showDiff; code.hidden = showDiff; codeButton.classList.toggle("on", !showDiff); diffButton.classList.toggle("on", showDiff); };
  codeButton.addEventListener("click", () => pick(false));
  diffButton.addEventListener("click", () => pick(true));
  return el("div", { class: "code-pane" }, el("div", { class: "tabs" }, codeButton, diffButton), code, diff);
}

function criticPanel(a) {
  if (!a.critic) return null;
  const c = a.critic;
  const call = CALL_TEXT[a.call];
  const truth = a.hidden.passed ? "the code passes the hidden tests" : "the code fails the hidden tests";
  return el("div", { class: "panel critic" },
    el("h3", {}, "Critic", verdictBadge(a)),
    el("p", { class: "muted" }, call ? `${call[0]}: ${truth}.` : `no readable verdict; ${truth}.`),
    c.critique ? el("p", { class: "critique" }, c.critique) : el("p", { class: "muted" }, "(no critique text)"),
    c.parse_error ? el("p", { class: "error" }, `could not read the reply: ${c.parse_error}`) : null,
    el("p", { class: "numbers" }, `${thousands(c.prompt_tokens)} prompt + ${thousands(c.completion_tokens)} completion tokens` +
      (c.reasoning_tokens ? ` (${thousands(c.reasoning_tokens)} thinking)` : "") + ` · ${seconds(c.latency_seconds)} · ${money(c.cost_usd)}` +
      (c.confidence !== null ? ` · confidence ${c.confidence}` : "") + (c.cached ? " · cached reply" : "")),
    notSentList(c.not_sent),
    c.reasoning ? el("details", {}, el("summary", {}, "critic's thinking"), el("pre", { class: "raw reasoning" }, c.reasoning)) : null,
    el("details", {}, el("summary", {}, "critic's raw reply"), el("pre", { class: "raw" }, c.raw)));
}

function testsPanel(a) {
  return el("div", { class: "panel tests-panel" },
    el("h3", {}, "Hidden tests (the truth)", testBadge("", a.hidden)),
    outcomes(a.hidden.outcomes),
    a.visible ? [el("h3", {}, "Visible tests (what the strategy saw)", testBadge("", a.visible)), outcomes(a.visible.outcomes)] : null);
}

const SHOWN_FAILURES = 20;

function outcomes(list) {
  if (!list) return el("p", { class: "muted" }, "per-test outcomes not recorded");
  const failing = list.map((o, i) => [o, i]).filter(([o]) => o.verdict !== "pass");
  return [
    el("div", { class: "tests" }, list.map((o, i) => el("span", { class: `test ${o.verdict}`, title: `test ${i}: ${o.verdict}${o.message ? ` — ${o.message}` : ""}` }))),
    failing.length ? el("div", { class: "failures" }, failing.slice(0, SHOWN_FAILURES).map(([o, i]) => failure(o, i)),
      failing.length > SHOWN_FAILURES ? el("p", { class: "muted" }, `and ${failing.length - SHOWN_FAILURES} more failing tests`) : null) : null,
  ];
}

// One failing test: what went wrong, the expected against the actual output, and the traceback.
function failure(o, i) {
  const what = [o.error_type, o.message].filter(Boolean).join(": ");
  const recorded = (v) => v !== null && v !== undefined;
  return el("div", { class: "failure", "data-test": i },
    el("div", { class: "failure-head" }, el("span", { class: `badge ${o.verdict === "fail" ? "fail" : "warn"}` }, `test ${i}: ${o.verdict}`),
      what ? el("span", { class: "message" }, what) : null),
    recorded(o.expected) || recorded(o.actual) ? el("div", { class: "expected-actual" },
      el("div", {}, el("div", { class: "muted" }, "expected"), el("pre", { class: "out expected" }, recorded(o.expected) ? o.expected : "(not recorded)")),
      el("div", {}, el("div", { class: "muted" }, "actual"), el("pre", { class: "out actual" }, recorded(o.actual) ? o.actual : "(no output)"))) : null,
    o.traceback ? el("details", {}, el("summary", {}, "traceback"), el("pre", { class: "raw traceback" }, o.traceback)) : null);
}

function feedbackPanel(a) {
  if (!a.feedback) return null;
  return el("div", { class: "panel" }, el("h3", {}, "Feedback the actor was given"),
    el("details", { open: true }, el("summary", {}, "show"), el("pre", { class: "raw" }, a.feedback)));
}

function actorPanel(a) {
  return el("div", { class: "panel" }, el("h3", {}, "Actor"),
    el("p", { class: "numbers" }, `${thousands(a.prompt_tokens)} prompt + ${thousands(a.completion_tokens)} completion tokens` +
      (a.reasoning_tokens ? ` (${thousands(a.reasoning_tokens)} thinking)` : "") +
      (a.estimated ? " (estimated)" : "") + ` · ${seconds(a.latency_seconds)} · ${money(a.cost_usd)}` +
      (a.confidence !== null ? ` · stated confidence ${a.confidence}` : "") + (a.cached ? " · cached reply" : "")),
    a.parse_error ? el("p", { class: "error" }, `no code: ${a.parse_error}`) : null,
    notSentList(a.not_sent),
    el("details", {}, el("summary", {}, "actor's raw reply"), el("pre", { class: "raw" }, a.response)));
}

// --- compare --------------------------------------------------------------------------------------

async function comparePage(query) {
  const index = await load("data/runs.js", LIVE);
  const sides = index.sides;
  const find = (value) => sides.findIndex((s) => `${s.run}:${s.config}` === value);
  const defaultRun = query.get("a") && !query.get("a").includes(":") ? query.get("a") : index.runs[index.runs.length - 1].id;
  const inRun = sides.map((s, i) => [s, i]).filter(([s]) => s.run === defaultRun).map(([, i]) => i);
  let a = find(query.get("a") || ""), b = find(query.get("b") || "");
  if (a < 0) a = inRun[0] ?? 0;
  if (b < 0) b = inRun.find((i) => i !== a) ?? (a === 0 ? 1 : 0);
  setNav(sides[a]?.run, "compare");
  setStatus(null);
  const go = (which, value) => { const next = { a: `${sides[a].run}:${sides[a].config}`, b: `${sides[b].run}:${sides[b].config}` }; next[which] = value; location.hash = hash("compare", next); };
  // grouped by run, so an option is the configuration's label alone and fits the closed select whole
  const option = (s, current) => el("option", { value: `${s.run}:${s.config}`, selected: s === sides[current] }, s.label);
  const picker = (which, current) => el("select", { id: `compare-${which}`, onchange: (e) => go(which, e.target.value) },
    index.runs.map((run) => el("optgroup", { label: `run ${run.id}` },
      sides.filter((s) => s.run === run.id).map((s) => option(s, current)))));
  const head = [el("h1", {}, "Compare two configurations"),
    el("div", { class: "compare-pick" }, el("label", {}, "A"), picker("a", a), el("label", {}, "B"), picker("b", b))];
  if (sides.length < 2 || a === b) { show(...head, el("p", { class: "muted" }, "Choose two different configurations.")); return; }
  let result;
  try {
    result = await load(`data/compare/${sides[a].file}--${sides[b].file}.js`, LIVE);
  } catch (error) {
    show(...head, el("p", { class: "muted" }, "This pair was not compared ahead of time in this static site; serve the store with refinelab view to compare any pair."));
    return;
  }
  show(...head, ...compareBody(result));
}

// Which run a side is from, when the two sides come from different runs (one label can be in both).
const side = (mine, other) => (mine.run === other.run ? "" : ` (run ${mine.run})`);

// Every number and its text come computed by refinelab (refinelab.metrics, as refinelab report shows them).
function compareBody(r) {
  const A = r.a, B = r.b, shown = r.shown;
  const row = (name, field, text) => el("tr", {}, el("th", {}, name), el("td", { class: "num", "data-field": field }, text));
  return [
    el("table", { class: "list", id: "compare-summary" },
      el("tbody", {},
        row("problems both ran (× repeats)", "pairs", shown.pairs),
        row(`A passes${side(A, B)}: ${A.label}`, "pass-a", shown.pass_a),
        row(`B passes${side(B, A)}: ${B.label}`, "pass-b", shown.pass_b),
        row("both solve", "both", shown.both),
        row("neither solves", "neither", shown.neither),
        row("only A solves", "only-a", shown.only_a),
        row("only B solves", "only-b", shown.only_b),
        row("McNemar exact p (two-sided)", "p", shown.p_value),
        row("B − A pass rate (points), 95% paired bootstrap interval", "difference", shown.difference),
        row("problems only A ran (not paired, left out above)", "unpaired-a", shown.unpaired_a),
        row("problems only B ran (not paired, left out above)", "unpaired-b", shown.unpaired_b))),
    el("div", { class: "sidebyside" }, onlyList("Only A solved", r.only_a_keys, A, B, "only-a"), onlyList("Only B solved", r.only_b_keys, A, B, "only-b")),
    ...unpairedLists(r, A, B),
  ];
}

// The problems only one side ran, when there are any (runs over different problem sets).
function unpairedLists(r, A, B) {
  const list = (title, keys, S, id) => el("div", {}, el("h2", {}, `${title} (${keys.length})`),
    keys.length ? el("table", { class: "list", id }, el("thead", {}, el("tr", {}, el("th", {}, "problem"), el("th", {}, "repeat"), el("th", {}, "trajectory"))),
      el("tbody", {}, keys.map(([problem, repeat]) => el("tr", {}, el("td", {}, problem), el("td", { class: "num" }, repeat),
        el("td", {}, el("a", { href: trajectoryLink(S.run, S.config, problem, repeat) }, "trajectory"))))))
      : el("p", { class: "muted" }, "none"));
  if (!r.unpaired_a_keys.length && !r.unpaired_b_keys.length) return [];
  return [el("div", { class: "sidebyside" }, list("Only A ran", r.unpaired_a_keys, A, "unpaired-a-list"), list("Only B ran", r.unpaired_b_keys, B, "unpaired-b-list"))];
}

function onlyList(title, keys, A, B, id) {
  return el("div", {}, el("h2", {}, `${title} (${keys.length})`),
    keys.length ? el("table", { class: "list", id }, el("thead", {}, el("tr", {}, el("th", {}, "problem"), el("th", {}, "repeat"), el("th", {}, "A"), el("th", {}, "B"))),
      el("tbody", {}, keys.map(([problem, repeat]) => el("tr", {}, el("td", {}, problem), el("td", { class: "num" }, repeat),
        el("td", {}, el("a", { href: trajectoryLink(A.run, A.config, problem, repeat) }, "trajectory")),
        el("td", {}, el("a", { href: trajectoryLink(B.run, B.config, problem, repeat) }, "trajectory"))))))
      : el("p", { class: "muted" }, "none"));
}

window.addEventListener("hashchange", () => route(false));
route(false);
