// The sandbox page: a small Slack-like client for the stand-in. No framework, no CDN.
"use strict";

const $ = (selector) => document.querySelector(selector);
const EMOJI = {
  white_check_mark: "✅", x: "❌", warning: "⚠️", hourglass: "⌛", hourglass_flowing_sand: "⏳", lock: "🔒",
  speech_balloon: "💬", bell: "🔔", rotating_light: "🚨", robot_face: "🤖", no_entry: "⛔", clock1: "🕐",
  heavy_check_mark: "✔️", thumbsup: "👍", thumbsdown: "👎", arrows_counterclockwise: "🔄", rocket: "🚀",
};
const COLORS = ["#4a154b", "#1264a3", "#2bac76", "#e8912d", "#cd2553", "#5b7ec4"];

let me = new URLSearchParams(location.search).get("as") || localStorage.getItem("signoff-sandbox-user") || "";
let state = null;
let view = { kind: "channel", id: null };
let openThread = null;
let pollAbort = null;
let clockBase = null;
let renderedModalKey = null;

// ------------------------------------------------------------------ server

async function call(name, body) {
  const response = await fetch(`/sandbox/${name}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ user: me, ...body }),
  });
  const data = await response.json().catch(() => ({ ok: false, error: `HTTP ${response.status}` }));
  if (!data.ok) toast(data.error || "failed");
  return data;
}

async function poll() {
  let since = -1;
  for (;;) {
    const controller = new AbortController();
    pollAbort = controller;
    try {
      const response = await fetch(`/sandbox/state?user=${encodeURIComponent(me)}&since=${since}`, {
        signal: controller.signal,
        cache: "no-store",
      });
      const data = await response.json();
      if (data.ok) {
        since = data.version;
        receive(data);
      } else {
        if (String(data.error).includes("unknown sandbox user")) me = "";
        await sleep(1000);
      }
    } catch (error) {
      if (controller.signal.aborted) since = -1;
      else await sleep(1000);
    }
  }
}

function refreshNow() {
  if (pollAbort) pollAbort.abort();
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function receive(data) {
  state = data;
  if (!me || !state.people.some((p) => p.user_id === me)) {
    me = state.people[0].user_id;
  }
  if (!view.id && view.kind === "channel") view.id = state.channels[0].id;
  clockBase = { now: state.clock.now_ms, offset: state.clock.offset_ms, at: Date.now() };
  render();
}

// ------------------------------------------------------------------ text

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function unescapeSlack(text) {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function userName(id) {
  const user = state && state.users[id];
  return user ? user.real_name : id;
}

// Now on the sandbox's clock (moved forward by the page's buttons), not the browser's.
function sandboxNow() {
  return clockBase ? new Date(clockBase.now + (Date.now() - clockBase.at)) : new Date();
}

function formatDate(seconds, format) {
  const date = new Date(seconds * 1000);
  const today = sandboxNow();
  const yesterday = new Date(today.getTime() - 86400000);
  const sameDay = (a, b) => a.toDateString() === b.toDateString();
  const pretty = sameDay(date, today) ? "Today" : sameDay(date, yesterday) ? "Yesterday"
    : date.toLocaleDateString(undefined, { month: "short", day: "numeric" });
  const time = date.toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" });
  return format.replace(/\{date_short_pretty\}|\{date_pretty\}|\{date_short\}|\{date\}/g, pretty)
    .replace(/\{time\}/g, time).replace(/\{time_secs\}/g, date.toLocaleTimeString());
}

function token(inner) {
  const [target, label] = splitOnce(inner, "|");
  if (target.startsWith("@")) return `<span class="mention">@${escapeHtml(label || userName(target.slice(1)))}</span>`;
  if (target.startsWith("#")) {
    const known = state && state.channels.find((c) => c.id === target.slice(1));
    return `<span class="mention">#${escapeHtml(label || (known ? known.name : target.slice(1)))}</span>`;
  }
  if (target.startsWith("!subteam^")) return `<span class="mention">${escapeHtml(label || "@" + target.slice(9))}</span>`;
  if (target.startsWith("!date^")) {
    const [, seconds, format] = target.split("^");
    return escapeHtml(formatDate(Number(seconds), format || "{date_short_pretty} {time}"));
  }
  if (target.startsWith("!")) return `<span class="mention">@${escapeHtml(label || target.slice(1))}</span>`;
  if (/^(https?|mailto):/.test(target)) {
    return `<a href="${escapeHtml(target)}" target="_blank" rel="noopener">${escapeHtml(unescapeSlack(label || target))}</a>`;
  }
  return escapeHtml(unescapeSlack(inner));
}

function splitOnce(text, separator) {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}

// Slack mrkdwn to HTML: everything escaped first, then *bold*, _italic_, ~strike~, `code`, ```fences```, <tokens>,
// > quotes.
function mrkdwn(text) {
  const parts = String(text || "").split("```");
  return parts.map((part, index) => {
    if (index % 2 === 1 && index < parts.length - 1) {
      return `<pre>${escapeHtml(unescapeSlack(part.replace(/^\n/, "").replace(/\n$/, "")))}</pre>`;
    }
    return inline(part);
  }).join("");
}

function inline(text) {
  const saved = [];
  const keep = (html) => `\u0000${saved.push(html) - 1}\u0000`;
  let out = text.replace(/<([^<>]+)>/g, (_, inner) => keep(token(inner)));
  out = out.replace(/`([^`\n]+)`/g, (_, code) => keep(`<code>${escapeHtml(unescapeSlack(code))}</code>`));
  out = escapeHtml(unescapeSlack(out));
  out = out.replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,!?:;])/g, "$1<b>$2</b>");
  out = out.replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s).,!?:;])/g, "$1<i>$2</i>");
  out = out.replace(/(^|[\s(])~([^~\n]+)~(?=$|[\s).,!?:;])/g, "$1<s>$2</s>");
  out = out.replace(/:([a-z0-9_+-]+):/g, (whole, name) => EMOJI[name] || whole);
  // A line starting with "> " is a quote, as Slack shows it (a question, its answer).
  out = out.split("\n").map((line) => (line.startsWith("&gt; ") ? `<span class="quote">${line.slice(5)}</span>` : line)).join("\n");
  out = out.replace(/<\/span>\n/g, "</span>").replace(/\n/g, "<br>");
  return out.replace(/\u0000(\d+)\u0000/g, (_, n) => saved[Number(n)]);
}

function textObject(object) {
  if (!object) return "";
  if (object.type === "mrkdwn") return mrkdwn(object.text);
  const plain = escapeHtml(object.text || "");
  return object.emoji === false ? plain : plain.replace(/:([a-z0-9_+-]+):/g, (w, n) => EMOJI[n] || w);
}

// ------------------------------------------------------------------ Block Kit

function el(tag, attributes = {}, html = "") {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) node.setAttribute(name, value);
  }
  if (html) node.innerHTML = html;
  return node;
}

function renderBlocks(blocks, context) {
  const container = el("div", { class: "blocks" });
  for (const block of blocks || []) container.appendChild(renderBlock(block, context));
  return container;
}

function renderBlock(block, context) {
  const id = block.block_id;
  switch (block.type) {
    case "header":
      return el("div", { class: "block header", "data-block-id": id }, textObject(block.text));
    case "divider":
      return el("hr", { class: "block divider" });
    case "context": {
      const node = el("div", { class: "block context", "data-block-id": id });
      for (const element of block.elements || []) {
        if (element.type === "image") node.appendChild(el("span", {}, "🖼"));
        else node.appendChild(el("span", { class: "mrkdwn" }, textObject(element)));
      }
      return node;
    }
    case "section": {
      const node = el("div", { class: "block section", "data-block-id": id });
      const main = el("div", { class: "mrkdwn" }, block.text ? textObject(block.text) : "");
      if (block.fields) {
        const fields = el("div", { class: "fields" });
        for (const field of block.fields) fields.appendChild(el("div", { class: "mrkdwn" }, textObject(field)));
        main.appendChild(fields);
      }
      if (block.accessory && block.accessory.type === "button") {
        node.classList.add("section-with-accessory");
        node.appendChild(main);
        node.appendChild(renderButton(block.accessory, context, block.block_id));
      } else {
        node.appendChild(main);
      }
      return node;
    }
    case "actions": {
      const node = el("div", { class: "block actions", "data-block-id": id });
      for (const element of block.elements || []) {
        node.appendChild(element.type === "button" ? renderButton(element, context, id)
          : el("span", { class: "unsupported" }, `[${escapeHtml(element.type)}]`));
      }
      return node;
    }
    case "input":
      return renderInput(block, context);
    case "image":
      return el("div", { class: "block" }, `🖼 ${escapeHtml(block.alt_text || "")}`);
    default:
      return el("div", { class: "block unsupported" }, `[${escapeHtml(block.type || "unknown")} block]`);
  }
}

function renderButton(element, context, blockId) {
  const button = el("button", {
    type: "button",
    class: `btn ${element.style || ""}`,
    "data-action-id": element.action_id,
    "data-testid": `button-${element.action_id}`,
  }, textObject(element.text));
  if (!context || !context.onAction) {
    button.disabled = true;
    return button;
  }
  button.addEventListener("click", async () => {
    if (element.confirm && !(await confirmDialog(element.confirm))) return;
    button.disabled = true;
    await context.onAction(element, blockId);
    button.disabled = false;
  });
  return button;
}

function renderInput(block, context) {
  const node = el("div", { class: "input-block", "data-block-id": block.block_id });
  const element = block.element || {};
  const optional = block.optional ? ' <span class="optional">(optional)</span>' : "";
  node.appendChild(el("label", {}, textObject(block.label) + optional));
  const field = inputField(element);
  if (!field) {
    node.appendChild(el("div", { class: "unsupported" }, `[${escapeHtml(element.type || "input")}]`));
    return node;
  }
  field.setAttribute("data-action-id", element.action_id);
  field.setAttribute("data-kind", element.type);
  field.setAttribute("data-testid", `input-${block.block_id}`);
  node.appendChild(field);
  if (block.hint) node.appendChild(el("div", { class: "hint" }, textObject(block.hint)));
  const error = context && context.errors && context.errors[block.block_id];
  if (error) {
    node.classList.add("has-error");
    node.appendChild(el("div", { class: "input-error", "data-testid": "input-error" }, escapeHtml(error)));
  }
  return node;
}

// One form control per element type; readField and writeField know each control's value.
function inputField(element) {
  switch (element.type) {
    case "plain_text_input": {
      const field = element.multiline ? el("textarea", { rows: 4 }) : el("input", { type: "text" });
      if (element.placeholder) field.placeholder = element.placeholder.text;
      if (element.max_length) field.maxLength = element.max_length;
      if (element.initial_value) field.value = element.initial_value;
      return field;
    }
    case "number_input": {
      const field = el("input", {
        type: "number",
        step: element.is_decimal_allowed ? "any" : "1",
        min: element.min_value,
        max: element.max_value,
      });
      if (element.placeholder) field.placeholder = element.placeholder.text;
      if (element.initial_value !== undefined) field.value = element.initial_value;
      return field;
    }
    case "static_select": {
      const field = el("select");
      const placeholder = element.placeholder || { type: "plain_text", text: "Select an option" };
      field.appendChild(el("option", { value: "" }, textObject(placeholder)));
      const groups = element.option_groups || [{ options: element.options || [] }];
      for (const group of groups) {
        const parent = group.label ? field.appendChild(el("optgroup", { label: group.label.text })) : field;
        for (const option of group.options || []) {
          parent.appendChild(el("option", { value: option.value }, textObject(option.text)));
        }
      }
      field.value = element.initial_option ? element.initial_option.value : "";
      return field;
    }
    case "checkboxes": {
      const field = el("div", { class: "checkboxes" });
      const initial = new Set((element.initial_options || []).map((option) => option.value));
      for (const option of element.options || []) {
        const label = el("label", { class: "checkbox" });
        const box = el("input", { type: "checkbox", value: option.value });
        box.checked = initial.has(option.value);
        label.appendChild(box);
        label.appendChild(el("span", {}, textObject(option.text)));
        if (option.description) label.appendChild(el("div", { class: "hint" }, textObject(option.description)));
        field.appendChild(label);
      }
      return field;
    }
    default:
      return null;
  }
}

// What the page sends for a control: its text, the chosen option's value (null for none), the ticked values.
function readField(field) {
  if (field.dataset.kind === "checkboxes") {
    return [...field.querySelectorAll("input[type=checkbox]:checked")].map((box) => box.value);
  }
  if (field.dataset.kind === "static_select") return field.value || null;
  return field.value;
}

function writeField(field, value) {
  if (field.dataset.kind === "checkboxes") {
    for (const box of field.querySelectorAll("input[type=checkbox]")) box.checked = value.includes(box.value);
  } else {
    field.value = value === null ? "" : value;
  }
}

function confirmDialog(confirm) {
  return new Promise((resolve) => {
    const backdrop = $("#confirm-backdrop");
    const box = $("#confirm");
    box.innerHTML = "";
    box.appendChild(el("div", { class: "modal-title" }, textObject(confirm.title || { type: "plain_text", text: "Are you sure?" })));
    box.appendChild(el("div", { class: "modal-body mrkdwn" }, textObject(confirm.text)));
    const footer = el("div", { class: "modal-footer" });
    const no = el("button", { type: "button", class: "btn", "data-testid": "confirm-deny" },
      textObject(confirm.deny || { type: "plain_text", text: "Cancel" }));
    const yes = el("button", { type: "button", class: `btn ${confirm.style || "primary"}`, "data-testid": "confirm-ok" },
      textObject(confirm.confirm || { type: "plain_text", text: "Yes" }));
    footer.append(no, yes);
    box.appendChild(footer);
    backdrop.hidden = false;
    const done = (answer) => { backdrop.hidden = true; resolve(answer); };
    no.onclick = () => done(false);
    yes.onclick = () => done(true);
  });
}

// ------------------------------------------------------------------ messages

function avatar(userId) {
  const isBot = state && userId === state.bot.id;
  const color = isBot ? "#611f69" : COLORS[[...userId].reduce((a, c) => a + c.charCodeAt(0), 0) % COLORS.length];
  return el("div", { class: "avatar", style: `background:${color}` }, isBot ? "✔" : escapeHtml(userName(userId)[0] || "?"));
}

function timeOf(ts) {
  return new Date(Number(ts) * 1000).toLocaleTimeString(undefined, { hour: "numeric", minute: "2-digit" });
}

function renderMessage(message, channel, { inThread = false, ephemeral = false } = {}) {
  const ts = ephemeral ? message.message_ts : message.ts;
  const userId = ephemeral ? state.bot.id : message.user;
  const node = el("div", {
    class: `message${ephemeral ? " ephemeral" : ""}`,
    "data-ts": ts,
    "data-user": userId,
    "data-testid": ephemeral ? "ephemeral" : "message",
  });
  node.appendChild(avatar(userId));
  const body = el("div", { class: "body" });
  const meta = el("div", { class: "meta" });
  meta.appendChild(el("span", { class: "name" }, escapeHtml(userId === state.bot.id ? "Signoff" : userName(userId))));
  if (userId === state.bot.id) meta.appendChild(el("span", { class: "app-badge", style: "background:#ddd;color:#555" }, "APP"));
  meta.appendChild(el("span", { class: "time" }, timeOf(ts)));
  body.appendChild(meta);
  if (ephemeral) body.appendChild(el("div", { class: "ephemeral-note" }, "👁 Only visible to you"));
  const context = {
    onAction: (element) => call("action", { channel, ts, action_id: element.action_id, value: element.value }),
  };
  if (message.blocks && message.blocks.length && !message.blocks.every((b) => b.type === "rich_text")) {
    body.appendChild(renderBlocks(message.blocks, context));
  } else {
    body.appendChild(el("div", { class: "mrkdwn" }, mrkdwn(message.text)));
  }
  if (message.edited) body.appendChild(el("span", { class: "edited" }, "(edited)"));
  if (!inThread && message.reply_count) {
    const replies = el("div", { class: "replies" });
    const link = el("a", { href: "#", "data-testid": "replies-link" },
      `${message.reply_count} ${message.reply_count === 1 ? "reply" : "replies"}`);
    link.onclick = (event) => { event.preventDefault(); openThread = message.ts; render(); };
    replies.appendChild(link);
    body.appendChild(replies);
  }
  node.appendChild(body);
  return node;
}

function fillMessages(container, items, channel, options) {
  const atBottom = container.scrollHeight - container.scrollTop - container.clientHeight < 40;
  container.innerHTML = "";
  items.sort((a, b) => Number(a.sortTs) - Number(b.sortTs));
  for (const item of items) {
    container.appendChild(renderMessage(item.message, channel, { ...options, ephemeral: item.ephemeral }));
  }
  if (!items.length) container.appendChild(el("div", { class: "empty" }, "No messages yet."));
  if (atBottom || options.forceBottom) container.scrollTop = container.scrollHeight;
}

// ------------------------------------------------------------------ render

function currentChannel() {
  if (view.kind === "dm") return state.dm;
  return state.channels.find((c) => c.id === view.id) || state.channels[0];
}

function render() {
  if (!state) return;
  $("#workspace-name").textContent = state.team;
  renderSwitcher();
  renderSidebar();
  renderClock();
  const main = $("#messages");
  const composer = $("#composer");
  if (view.kind === "home") {
    $("#pane-title").textContent = "Signoff · Home";
    composer.hidden = true;
    main.innerHTML = "";
    const home = el("div", { class: "home", "data-testid": "home" });
    const homeContext = {
      onAction: (element, blockId) =>
        call("home_action", { block_id: blockId, action_id: element.action_id, value: element.value }),
    };
    if (state.home) home.appendChild(renderBlocks(state.home.blocks, homeContext));
    else home.appendChild(el("div", { class: "empty" }, "Signoff has not published a Home tab for you yet."));
    main.appendChild(home);
    $("#thread").hidden = true;
  } else {
    const channel = currentChannel();
    const title = view.kind === "dm" ? "Signoff (direct message)" : `# ${channel.name}`;
    $("#pane-title").textContent = title;
    composer.hidden = false;
    $("#composer-input").placeholder = view.kind === "dm" ? "Message Signoff" : `Message #${channel.name} — mention @signoff`;
    const top = channel.messages.filter((m) => !m.thread_ts || m.thread_ts === m.ts)
      .map((m) => ({ message: m, sortTs: m.ts, ephemeral: false }));
    const ephemerals = state.ephemerals.filter((e) => e.channel === channel.id && !e.thread_ts)
      .map((e) => ({ message: e, sortTs: e.message_ts, ephemeral: true }));
    fillMessages(main, top.concat(ephemerals), channel.id, {});
    renderThread(channel);
  }
  renderModal();
}

function renderThread(channel) {
  const pane = $("#thread");
  const parent = openThread && channel.messages.find((m) => m.ts === openThread);
  if (!parent) { pane.hidden = true; return; }
  pane.hidden = false;
  const items = channel.messages.filter((m) => m.ts === openThread || m.thread_ts === openThread)
    .map((m) => ({ message: m, sortTs: m.ts, ephemeral: false }));
  const ephemerals = state.ephemerals.filter((e) => e.channel === channel.id && e.thread_ts === openThread)
    .map((e) => ({ message: e, sortTs: e.message_ts, ephemeral: true }));
  fillMessages($("#thread-messages"), items.concat(ephemerals), channel.id, { inThread: true });
}

function renderSwitcher() {
  const select = $("#user-switcher");
  if (select.options.length !== state.people.length) {
    select.innerHTML = "";
    for (const person of state.people) {
      select.appendChild(el("option", { value: person.user_id }, escapeHtml(`${person.real_name} (${person.role})`)));
    }
  }
  select.value = me;
}

function renderSidebar() {
  const list = $("#channel-list");
  list.innerHTML = "";
  for (const channel of state.channels) {
    const link = el("a", { href: "#", "data-channel": channel.id, class: view.kind === "channel" && view.id === channel.id ? "active" : "" },
      `# ${escapeHtml(channel.name)}`);
    link.onclick = (event) => { event.preventDefault(); view = { kind: "channel", id: channel.id }; openThread = null; render(); };
    const item = el("li");
    item.appendChild(link);
    list.appendChild(item);
  }
  $("#dm-link").classList.toggle("active", view.kind === "dm");
  $("#home-link").classList.toggle("active", view.kind === "home");
  const dmCount = state.dm.messages.filter((m) => m.user === state.bot.id).length;
  $("#dm-count").textContent = dmCount && view.kind !== "dm" ? String(dmCount) : "";
}

function renderClock() {
  if (!clockBase) return;
  const now = sandboxNow();
  $("#clock-now").textContent = now.toLocaleString(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  const minutes = Math.round(clockBase.offset / 60000);
  const text = minutes <= 0 ? "" : minutes < 60 ? `+${minutes} min` : minutes < 1440
    ? `+${Math.floor(minutes / 60)} h ${minutes % 60} min` : `+${Math.floor(minutes / 1440)} d ${Math.floor((minutes % 1440) / 60)} h`;
  $("#clock-offset").textContent = text ? `(${text} ahead)` : "";
}

function renderModal() {
  const backdrop = $("#modal-backdrop");
  const modal = state.modal;
  if (!modal) {
    backdrop.hidden = true;
    renderedModalKey = null;
    return;
  }
  const key = `${modal.id}:${modal.hash}`;
  if (renderedModalKey === key) return; // keep what the person typed
  renderedModalKey = key;
  showModal(modal, {});
  backdrop.hidden = false;
}

function showModal(modal, errors) {
  const form = $("#modal");
  const values = readModal(form);
  form.innerHTML = "";
  form.setAttribute("data-view-id", modal.id);
  form.appendChild(el("div", { class: "modal-title" }, textObject(modal.title)));
  const body = el("div", { class: "modal-body" });
  body.appendChild(renderBlocks(modal.blocks, { errors }));
  form.appendChild(body);
  for (const [blockId, actions] of Object.entries(values)) {
    for (const [actionId, value] of Object.entries(actions)) {
      const field = form.querySelector(`[data-block-id="${CSS.escape(blockId)}"] [data-action-id="${CSS.escape(actionId)}"]`);
      if (field) writeField(field, value);
    }
  }
  const footer = el("div", { class: "modal-footer" });
  const close = el("button", { type: "button", class: "btn", "data-testid": "modal-close" }, textObject(modal.close || { type: "plain_text", text: "Cancel" }));
  close.onclick = () => call("close", { view_id: modal.id }).then(refreshNow);
  footer.appendChild(close);
  if (modal.submit) footer.appendChild(el("button", { type: "submit", class: "btn primary", "data-testid": "modal-submit" }, textObject(modal.submit)));
  form.appendChild(footer);
  form.onsubmit = async (event) => {
    event.preventDefault();
    const answer = await call("submit", { view_id: modal.id, values: readModal(form) });
    if (answer.ok && answer.errors && Object.keys(answer.errors).length) showModal(modal, answer.errors);
  };
  const first = form.querySelector("textarea, input, select");
  if (first) first.focus();
}

function readModal(form) {
  const values = {};
  for (const block of form.querySelectorAll(".input-block")) {
    for (const field of block.querySelectorAll("[data-action-id]")) {
      (values[block.dataset.blockId] ||= {})[field.dataset.actionId] = readField(field);
    }
  }
  return values;
}

function toast(text) {
  const node = $("#toast");
  node.textContent = text;
  node.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { node.hidden = true; }, 4000);
}

// ------------------------------------------------------------------ wiring

async function sendFrom(input, threadTs) {
  const text = input.value.trim();
  if (!text || !state) return;
  input.value = "";
  const channel = currentChannel();
  const answer = await call("message", { channel: channel.id, text, thread_ts: threadTs || null });
  // The bot answers a request in its thread: open it, as a person would to follow along.
  if (answer.ok && answer.ts && !threadTs && text.includes("@signoff")) { openThread = answer.ts; render(); }
}

function wire() {
  $("#composer").addEventListener("submit", (event) => { event.preventDefault(); sendFrom($("#composer-input"), null); });
  $("#thread-composer").addEventListener("submit", (event) => { event.preventDefault(); sendFrom($("#thread-input"), openThread); });
  for (const input of [$("#composer-input"), $("#thread-input")]) {
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); input.form.requestSubmit(); }
    });
  }
  $("#thread-close").onclick = () => { openThread = null; render(); };
  $("#dm-link").onclick = (event) => { event.preventDefault(); view = { kind: "dm", id: null }; openThread = null; render(); };
  $("#home-link").onclick = (event) => {
    event.preventDefault();
    view = { kind: "home", id: null };
    openThread = null;
    render();
    call("home_opened", {});
  };
  $("#user-switcher").addEventListener("change", (event) => {
    me = event.target.value;
    localStorage.setItem("signoff-sandbox-user", me);
    renderedModalKey = null;
    refreshNow();
    if (view.kind === "home") call("home_opened", {});
  });
  for (const button of document.querySelectorAll("[data-advance]")) {
    button.addEventListener("click", async () => {
      const answer = await call("clock", { advance_ms: Number(button.dataset.advance) });
      if (answer.ok) {
        clockBase = { now: answer.clock.now_ms, offset: answer.clock.offset_ms, at: Date.now() };
        renderClock();
        if (state) render();  // "Today" and "Yesterday" follow the moved clock
      }
    });
  }
  setInterval(renderClock, 1000);
}

wire();
poll();
