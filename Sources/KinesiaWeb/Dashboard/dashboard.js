// The live dashboard of kinesia web: every camera's sessions as the seeds' HUD, a trace of each
// session's value, and the processes. Plain JavaScript, no library; it follows /api/v1/live
// (server-sent events: each session's newest state as it changes, the processes every second)
// with the cookie /login set, and reads the voice's texts (/api/v1/texts/LANG) for the names of
// faults, setup issues, joints and sides.
"use strict";

const ui = {
  en: { language: "Language", processes: "Processes", process: "Process", role: "Role", state: "State",
        uptime: "Uptime", value: "degrees", best: "best", clean: "clean", rejected: "rejected",
        hold: "hold", missing: "Out of view", setup: "Setup", lastFault: "Last fault", live: "live",
        stale: "STALE", connecting: "connecting…", connected: "live", lost: "no connection",
        signIn: "Not signed in: open /login?token=YOUR_TOKEN", empty: "No session yet.", camera: "Camera",
        stop: "Stop", reset: "Reset", baseline: "Baseline", sent: "Sent…", startTitle: "Start a session",
        session: "Session", exercise: "Exercise", side: "Side", patient: "Patient", start: "Start", runs: "Runs",
        run: "Run", report: "report", running: "running" },
  "pt-BR": { language: "Idioma", processes: "Processos", process: "Processo", role: "Papel", state: "Estado",
        uptime: "Tempo ativo", value: "graus", best: "melhor", clean: "corretas", rejected: "rejeitadas",
        hold: "sustentação", missing: "Fora de vista", setup: "Posição", lastFault: "Última falha", live: "ativo",
        stale: "SEM SINAL", connecting: "conectando…", connected: "ao vivo", lost: "sem conexão",
        signIn: "Sem sessão: abra /login?token=SEU_TOKEN", empty: "Nenhuma sessão ainda.", camera: "Câmera",
        stop: "Parar", reset: "Reiniciar", baseline: "Linha de base", sent: "Enviado…",
        startTitle: "Iniciar uma sessão", session: "Sessão", exercise: "Exercício", side: "Lado", patient: "Paciente",
        start: "Iniciar", runs: "Execuções", run: "Execução", report: "relatório", running: "em curso" },
  es: { language: "Idioma", processes: "Procesos", process: "Proceso", role: "Rol", state: "Estado",
        uptime: "Tiempo activo", value: "grados", best: "mejor", clean: "correctas", rejected: "rechazadas",
        hold: "mantener", missing: "Fuera de vista", setup: "Posición", lastFault: "Último fallo", live: "activo",
        stale: "SIN SEÑAL", connecting: "conectando…", connected: "en vivo", lost: "sin conexión",
        signIn: "Sin sesión: abra /login?token=SU_TOKEN", empty: "Todavía no hay sesiones.", camera: "Cámara",
        stop: "Detener", reset: "Reiniciar", baseline: "Línea base", sent: "Enviado…",
        startTitle: "Iniciar una sesión", session: "Sesión", exercise: "Ejercicio", side: "Lado", patient: "Paciente",
        start: "Iniciar", runs: "Series", run: "Serie", report: "informe", running: "en curso" },
};

const state = { language: "en", texts: null, traces: new Map(), sessions: new Map(), processes: [], role: null,
                answers: new Map(), drawing: false, arrived: [], runs: null };

// When each session's state was drawn (pose time and the page's wall clock), the newest 5,000:
// what the latency benchmark reads.
window.kinesiaShown = [];

function chooseLanguage() {
  const asked = new URLSearchParams(location.search).get("lang") || localStorage.getItem("kinesia.language")
    || navigator.language || "en";
  if (ui[asked]) return asked;
  if (asked.toLowerCase().startsWith("pt")) return "pt-BR";
  if (asked.toLowerCase().startsWith("es")) return "es";
  return "en";
}

function t(key) { return (ui[state.language] || ui.en)[key] || key; }

function named(group, name) {
  const texts = state.texts && state.texts[group];
  return (texts && texts[name]) || name;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

async function loadTexts() {
  try {
    const response = await fetch("/api/v1/texts/" + encodeURIComponent(state.language), { credentials: "same-origin" });
    state.texts = response.ok ? await response.json() : null;
  } catch (error) {
    state.texts = null;
  }
}

function number(value, digits) {
  return value === null || value === undefined ? "–" : value.toFixed(digits);
}

function trace(key, snapshot) {
  let points = state.traces.get(key);
  if (!points) { points = []; state.traces.set(key, points); }
  const last = points[points.length - 1];
  if (snapshot && snapshot.value !== null && (!last || last.t !== snapshot.t)) {
    if (last && snapshot.t < last.t) points.length = 0;
    points.push({ t: snapshot.t, value: snapshot.value });
    if (points.length > 300) points.shift();
  }
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("class", "trace");
  svg.setAttribute("viewBox", "0 0 300 100");
  svg.setAttribute("preserveAspectRatio", "none");
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", points.map((point, index) =>
    `${index},${(100 - Math.max(0, Math.min(180, point.value)) / 1.8).toFixed(1)}`).join(" "));
  svg.appendChild(line);
  return svg;
}

function sessionCard(session) {
  const key = session.camera + "/" + session.name;
  const snapshot = session.snapshot;
  const card = element("article", "session");
  card.dataset.session = key;
  card.appendChild(element("h3", null, session.side ? `${session.name} · ${named("sides", session.side)}` : session.name));
  card.appendChild(element("p", "exercise", [session.exercise, session.patient].filter(Boolean).join(" · ")));
  const value = element("div", "value", number(snapshot && snapshot.value, 0) + "°");
  value.dataset.field = "value";
  card.appendChild(value);
  const counts = element("div", "counts");
  for (const [field, label, className] of [["repCount", "clean", "clean"], ["rejectedCount", "rejected", "rejected"],
                                           ["best", "best", "best"]]) {
    const cell = element("div", className);
    const figure = element("b", null, snapshot ? (field === "best" ? number(snapshot.best, 0) + "°" : String(snapshot[field])) : "–");
    figure.dataset.field = field;
    cell.appendChild(figure);
    cell.appendChild(element("span", "label", t(label)));
    counts.appendChild(cell);
  }
  card.appendChild(counts);
  if (snapshot && snapshot.holdProgress !== null) {
    const bar = element("div", "hold");
    bar.title = t("hold");
    const fill = element("div");
    fill.style.width = Math.round(Math.max(0, Math.min(1, snapshot.holdProgress)) * 100) + "%";
    bar.appendChild(fill);
    card.appendChild(bar);
  }
  const notes = element("div", "notes");
  if (snapshot) {
    if (snapshot.missingJoints.length > 0) {
      notes.appendChild(element("div", "warning",
        `${t("missing")}: ${snapshot.missingJoints.map((joint) => named("joints", joint)).join(", ")}`));
    }
    for (const issue of snapshot.setupIssues) notes.appendChild(element("div", "warning", named("setupIssues", issue)));
    const faults = snapshot.lastRep ? snapshot.lastRep.faults : [];
    if (faults.length > 0) {
      const fault = element("div", null, `${t("lastFault")}: ${named("formFeedback", faults[faults.length - 1])}`);
      fault.dataset.field = "lastFault";
      notes.appendChild(fault);
    }
  }
  card.appendChild(notes);
  card.appendChild(trace(key, snapshot));
  if (state.role === "therapist") {
    const actions = element("div", "actions");
    for (const action of ["stop", "reset", "baseline"]) {
      const button = element("button", null, t(action));
      button.type = "button";
      button.dataset.action = action;
      button.dataset.session = key;
      actions.appendChild(button);
    }
    const answer = element("p", "answer", state.answers.get(key) || "");
    answer.dataset.field = "answer";
    actions.appendChild(answer);
    card.appendChild(actions);
  }
  return card;
}

function render() {
  document.documentElement.lang = state.language;
  document.getElementById("language-label").textContent = t("language");
  document.getElementById("processes-title").textContent = t("processes");
  for (const cell of document.querySelectorAll("[data-text]")) cell.textContent = t(cell.dataset.text);
  const cameras = document.getElementById("cameras");
  cameras.replaceChildren();
  const byCamera = new Map();
  const sessions = [...state.sessions.values()].sort((a, b) =>
    (a.camera + "/" + a.name).localeCompare(b.camera + "/" + b.name));
  for (const session of sessions) {
    if (!byCamera.has(session.camera)) byCamera.set(session.camera, []);
    byCamera.get(session.camera).push(session);
  }
  for (const [camera, sessions] of byCamera) {
    const section = element("section", "camera");
    section.dataset.camera = camera;
    section.appendChild(element("h2", null, `${t("camera")} ${camera}`));
    const grid = element("div", "sessions");
    for (const session of sessions) grid.appendChild(sessionCard(session));
    section.appendChild(grid);
    cameras.appendChild(section);
  }
  document.getElementById("empty").textContent = state.sessions.size === 0 ? t("empty") : "";
  renderRuns();
  const body = document.querySelector("#processes tbody");
  body.replaceChildren();
  for (const process of state.processes) {
    const row = element("tr");
    row.dataset.process = process.name;
    const stale = process.ageSeconds > 3;
    row.appendChild(element("td", null, process.name));
    row.appendChild(element("td", null, process.role));
    row.appendChild(element("td", stale ? "stale" : "live", stale ? t("stale") : t("live")));
    row.appendChild(element("td", null, `${Math.round(process.uptime)} s`));
    body.appendChild(row);
  }
}

// The runs kinesia record kept (when the gateway has its database), newest first, each with a
// link to its report.
function renderRuns() {
  const section = document.getElementById("runs-section");
  section.hidden = state.runs === null;
  if (state.runs === null) return;
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  for (const run of [...state.runs].reverse()) {
    const row = element("tr");
    row.dataset.run = run.run;
    row.appendChild(element("td", null, run.run));
    row.appendChild(element("td", null, `${run.camera}/${run.session}`));
    row.appendChild(element("td", null, [run.exercise, run.side].filter(Boolean).join(" ")));
    row.appendChild(element("td", null, run.patient || "–"));
    row.appendChild(element("td", null, run.reason || t("running")));
    row.appendChild(element("td", null, run.repCount === null ? "–" : String(run.repCount)));
    row.appendChild(element("td", null, run.rejectedCount === null ? "–" : String(run.rejectedCount)));
    const cell = element("td");
    const link = element("a", null, t("report"));
    link.href = `/api/v1/runs/${encodeURIComponent(run.run)}/report`;
    link.target = "_blank";
    link.rel = "noopener";
    cell.appendChild(link);
    row.appendChild(cell);
    body.appendChild(row);
  }
}

async function loadRuns() {
  try {
    const response = await fetch("/api/v1/runs", { credentials: "same-origin" });
    state.runs = response.ok ? (await response.json()).runs : null;
  } catch (error) {
    state.runs = null;
  }
  draw();
}

// A therapist's start: the form's session on its camera, with the exercise, side and patient.
async function startSession(form) {
  const answer = document.getElementById("start-answer");
  answer.textContent = t("sent");
  const data = new FormData(form);
  const body = { exercise: data.get("exercise"), side: data.get("side") };
  if (data.get("patient")) body.patient = data.get("patient");
  try {
    const response = await fetch(
      `/api/v1/sessions/${encodeURIComponent(data.get("camera"))}/${encodeURIComponent(data.get("session"))}/start`, {
        method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const result = await response.json();
    answer.textContent = result.message || result.outcome || String(response.status);
  } catch (error) {
    answer.textContent = t("lost");
  }
  loadRuns();
}

async function prepareStart() {
  const form = document.getElementById("start");
  try {
    const response = await fetch("/api/v1/exercises", { credentials: "same-origin" });
    const select = form.elements.exercise;
    for (const id of (await response.json()).exercises) {
      const option = element("option", null, id);
      option.value = id;
      select.appendChild(option);
    }
  } catch (error) {
    return;
  }
  form.addEventListener("submit", (submit) => {
    submit.preventDefault();
    startSession(form);
  });
  document.getElementById("start-section").hidden = false;
}

function connection(name) {
  const badge = document.getElementById("connection");
  badge.dataset.state = name;
  badge.textContent = t(name === "live" ? "connected" : name);
}

// Draws at most once per turn of the page's loop, however many states came.
function draw() {
  if (state.drawing) return;
  state.drawing = true;
  setTimeout(() => {
    state.drawing = false;
    render();
    const at = Date.now();
    for (const shown of state.arrived) window.kinesiaShown.push({ ...shown, at });
    state.arrived = [];
    if (window.kinesiaShown.length > 5000) window.kinesiaShown.splice(0, window.kinesiaShown.length - 5000);
  }, 0);
}

function follow() {
  const live = new EventSource("/api/v1/live");
  live.onopen = () => connection("live");
  live.onerror = () => connection("lost");
  live.addEventListener("session", (message) => {
    const session = JSON.parse(message.data);
    state.sessions.set(session.camera + "/" + session.name, session);
    if (session.snapshot) state.arrived.push({ session: session.camera + "/" + session.name, t: session.snapshot.t });
    draw();
  });
  live.addEventListener("processes", (message) => {
    state.processes = JSON.parse(message.data).processes;
    draw();
  });
}

// A therapist's command: POSTed as JSON (the only kind the gateway takes), its answer shown on
// the session's card.
async function command(action, session) {
  state.answers.set(session, t("sent"));
  render();
  try {
    const body = action === "baseline" ? { reps: 3 } : {};
    const response = await fetch(`/api/v1/sessions/${session}/${action}`, {
      method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    state.answers.set(session, answer.message || answer.outcome || String(response.status));
  } catch (error) {
    state.answers.set(session, t("lost"));
  }
  render();
}

async function start() {
  state.language = chooseLanguage();
  const select = document.getElementById("language");
  select.value = state.language;
  select.addEventListener("change", async () => {
    state.language = select.value;
    localStorage.setItem("kinesia.language", state.language);
    await loadTexts();
    render();
  });
  document.getElementById("cameras").addEventListener("click", (click) => {
    const button = click.target.closest("button[data-action]");
    if (button) command(button.dataset.action, button.dataset.session);
  });
  connection("connecting");
  try {
    const me = await fetch("/api/v1/me", { credentials: "same-origin" });
    if (me.ok) state.role = (await me.json()).role;
  } catch (error) {
    state.role = null;
  }
  await loadTexts();
  if (state.role === null) {
    connection("lost");
    document.getElementById("empty").textContent = t("signIn");
    return;
  }
  render();
  follow();
  if (state.role === "therapist") prepareStart();
  loadRuns();
  setInterval(loadRuns, 5000);
}

start();
