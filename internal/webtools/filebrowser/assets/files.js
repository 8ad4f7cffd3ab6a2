// The file browser's page. It only calls the gateway's files endpoints
// (spec/gateway-api.md, Files) at relative URLs, so it works behind the
// platform's edge at any host. File names are untrusted: they are only
// ever set as text, never as HTML.

const $ = (id) => document.getElementById(id);
const state = { listing: null, showHidden: localStorage.getItem("svc-files-hidden") === "1" };

function filesURL(sub, params) {
  return `v1/files${sub}?${new URLSearchParams(params)}`;
}

// call sends one request and returns the parsed JSON body, or throws an
// Error with the gateway's message.
async function call(method, url, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(url, init);
  return parse(resp.status, await resp.text());
}

function parse(status, text) {
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (status >= 200 && status < 300) return data;
  const err = new Error(data?.error?.message || data?.error || `HTTP ${status}`);
  err.code = data?.error?.code;
  throw err;
}

// The folder shown lives in the URL's fragment, readable as a path
// (#/home/user/project), so reloads and the back button work.
function hashOf(path) {
  return `#${encodeURI(path)}`;
}

function pathFromHash() {
  try {
    return decodeURI(location.hash.slice(1));
  } catch {
    return ""; // a fragment typed by hand that is not valid encoding
  }
}

function join(dir, name) {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

// resolve reads what the user typed: absolute and ~ paths as they are,
// anything else relative to the folder shown.
function resolve(input) {
  const v = input.trim();
  if (v.startsWith("/") || v === "~" || v.startsWith("~/")) return v;
  return join(state.listing.path, v);
}

function status(text, isError) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

function fail(err) {
  status(err.message || String(err), true);
}

// ---- listing

async function load(path) {
  try {
    const listing = await call("GET", filesURL("", { path }));
    state.listing = listing;
    if (pathFromHash() !== listing.path) {
      history.replaceState(null, "", hashOf(listing.path));
    }
    render();
  } catch (err) {
    fail(err);
  }
}

function reload() {
  return load(state.listing ? state.listing.path : "~");
}

function render() {
  const l = state.listing;
  document.title = `Files: ${l.path}`;
  renderCrumbs(l.path);
  $("up").disabled = l.parentPath === null;
  $("archive").href = filesURL("/archive", { path: l.path });
  const body = document.querySelector("#listing tbody");
  body.replaceChildren();
  const shown = l.entries.filter((e) => state.showHidden || !e.hidden);
  for (const e of shown) body.append(row(e));
  $("empty").hidden = shown.length > 0;
  const hiddenCount = l.entries.length - shown.length;
  let note = `${shown.length} item${shown.length === 1 ? "" : "s"}`;
  if (hiddenCount) note += `, ${hiddenCount} hidden`;
  if (l.truncated) note += ` (only the first ${l.entries.length} entries are listed)`;
  status(note);
}

function renderCrumbs(path) {
  const nav = $("crumbs");
  nav.replaceChildren();
  const parts = path.split("/").filter(Boolean);
  const link = (label, target) => {
    const a = document.createElement("a");
    a.href = hashOf(target);
    a.textContent = label;
    return a;
  };
  nav.append(link("/", "/"));
  let acc = "";
  parts.forEach((p, i) => {
    acc += `/${p}`;
    if (i > 0) {
      const sep = document.createElement("span");
      sep.className = "sep";
      sep.textContent = "/";
      nav.append(sep);
    }
    nav.append(link(p, acc));
  });
}

function row(e) {
  const tr = document.createElement("tr");
  tr.className = e.type + (e.hidden ? " hidden" : "");
  tr.dataset.name = e.name;

  const name = document.createElement("td");
  name.className = "name";
  const a = document.createElement("a");
  a.textContent = e.type === "directory" ? `${e.name}/` : e.name;
  if (e.type === "directory") {
    a.href = hashOf(e.path);
  } else {
    a.href = filesURL("/content", { path: e.path, disposition: "inline" });
    a.target = "_blank";
    a.rel = "noopener";
  }
  name.append(a);

  const size = document.createElement("td");
  size.className = "num";
  size.textContent = e.size === null ? "" : humanSize(e.size);
  const mod = document.createElement("td");
  mod.textContent = new Date(e.modified).toLocaleString();

  const actions = document.createElement("td");
  actions.className = "actions";
  const dl = document.createElement("a");
  dl.className = "button";
  dl.textContent = e.type === "directory" ? "Download .tar.gz" : "Download";
  dl.href = e.type === "directory" ? filesURL("/archive", { path: e.path }) : filesURL("/content", { path: e.path });
  dl.setAttribute("download", "");
  actions.append(dl, button("Rename", () => rename(e)), button("Delete", () => remove(e)));
  tr.append(name, size, mod, actions);
  return tr;
}

function button(label, onclick) {
  const b = document.createElement("button");
  b.textContent = label;
  b.addEventListener("click", onclick);
  return b;
}

function humanSize(n) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}

// ---- the dialog (prompt and confirm without blocking the page)

function ask(text, { value = null, ok = "OK" } = {}) {
  const d = $("dialog");
  const input = $("dialog-input");
  $("dialog-text").textContent = text;
  $("dialog-ok").textContent = ok;
  input.hidden = value === null;
  input.value = value ?? "";
  d.returnValue = "";
  d.showModal();
  if (value !== null) {
    input.focus();
    // Select the name without its extension, as file managers do.
    const dot = input.value.lastIndexOf(".");
    input.setSelectionRange(0, dot > 0 ? dot : input.value.length);
  }
  return new Promise((done) => {
    d.addEventListener("close", () => {
      if (d.returnValue !== "ok") done(null);
      else done(value === null ? "" : input.value);
    }, { once: true });
  });
}

// ---- actions

async function mkdir() {
  const name = await ask("New folder name:", { value: "", ok: "Create" });
  if (!name || !name.trim()) return;
  try {
    const e = await call("POST", filesURL("/dir", { path: resolve(name) }));
    status(`Created ${e.path}`);
    await reload();
  } catch (err) { fail(err); }
}

async function rename(e) {
  const to = await ask(`Rename or move ${e.name} to (a name, or a path to move it):`, { value: e.name, ok: "Rename" });
  if (!to || !to.trim() || to === e.name) return;
  try {
    const moved = await call("PATCH", filesURL("", {}), { from: e.path, to: resolve(to) });
    await reload();
    status(`Moved to ${moved.path}`);
  } catch (err) { fail(err); }
}

async function remove(e) {
  const what = e.type === "directory" ? `the folder ${e.name} and everything in it` : e.name;
  if ((await ask(`Delete ${what}? This cannot be undone.`, { ok: "Delete" })) === null) return;
  try {
    await call("DELETE", filesURL("", { path: e.path }));
    await reload();
    status(`Deleted ${e.path}`);
  } catch (err) { fail(err); }
}

// put uploads one file as the raw request body, reporting progress;
// XMLHttpRequest because fetch cannot report upload progress.
function put(file, path, overwrite) {
  return new Promise((done, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", filesURL("/content", { path, overwrite: String(overwrite) }));
    xhr.upload.onprogress = (ev) => {
      if (ev.lengthComputable) status(`Uploading ${file.name}: ${Math.floor((100 * ev.loaded) / ev.total)}%`);
    };
    xhr.onload = () => {
      try { done(parse(xhr.status, xhr.responseText)); } catch (err) { reject(err); }
    };
    xhr.onerror = () => reject(new Error(`upload of ${file.name} failed`));
    xhr.send(file);
  });
}

async function upload(files) {
  const dir = state.listing.path;
  let n = 0;
  for (const file of files) {
    const path = join(dir, file.name);
    try {
      try {
        await put(file, path, false);
      } catch (err) {
        if (err.code !== "file_exists") throw err;
        if ((await ask(`${file.name} exists. Replace it?`, { ok: "Replace" })) === null) continue;
        await put(file, path, true);
      }
      n++;
    } catch (err) {
      fail(err);
      await reload();
      return;
    }
  }
  await reload();
  status(`Uploaded ${n} file${n === 1 ? "" : "s"} to ${dir}`);
}

// ---- wiring

$("up").addEventListener("click", () => state.listing?.parentPath && load(state.listing.parentPath));
$("refresh").addEventListener("click", reload);
$("mkdir").addEventListener("click", mkdir);
$("upload").addEventListener("change", (ev) => {
  const files = [...ev.target.files];
  ev.target.value = "";
  if (files.length) upload(files);
});
$("hidden").checked = state.showHidden;
$("hidden").addEventListener("change", (ev) => {
  state.showHidden = ev.target.checked;
  localStorage.setItem("svc-files-hidden", state.showHidden ? "1" : "0");
  render();
});

const drop = $("drop");
drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("dragging"); });
drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
drop.addEventListener("drop", (ev) => {
  ev.preventDefault();
  drop.classList.remove("dragging");
  const files = [...ev.dataTransfer.files];
  if (files.length) upload(files);
});

window.addEventListener("hashchange", () => load(pathFromHash() || "~"));
load(pathFromHash() || "~");
