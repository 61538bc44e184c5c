// The approvals page: keep the list live, and answer without leaving the page.
// No framework, no third-party code; the server escapes everything it renders.
"use strict";
(function () {
  const live = document.getElementById("live");
  const status = document.querySelector(".live");
  if (!live) return;
  const fragmentUrl = live.dataset.fragment;
  let last = live.innerHTML;

  function say(text) {
    if (status) status.textContent = text;
  }

  // Times arrive as UTC; show them relative ("2 min ago", "in 9 min") in words, and the exact
  // time in the person's own time zone on hover.
  function relative(then, now) {
    const seconds = Math.round((then - now) / 1000);
    const size = Math.abs(seconds);
    let words;
    if (size < 45) return seconds > 0 ? "in a moment" : "just now";
    if (size < 90 * 60) words = Math.max(1, Math.round(size / 60)) + " min";
    else if (size < 36 * 3600) words = Math.round(size / 3600) + " h";
    else words = Math.round(size / 86400) + " days";
    return seconds < 0 ? words + " ago" : "in " + words;
  }

  function localTimes() {
    const now = Date.now();
    live.querySelectorAll("time[datetime]").forEach(function (element) {
      const then = Date.parse(element.getAttribute("datetime"));
      if (isNaN(then)) return;
      element.textContent = relative(then, now);
      element.title = new Date(then).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "long" });
    });
  }

  let version = "";

  // Ask for the list; the server holds the request until it differs from `version`.
  async function refresh(wait) {
    const url = fragmentUrl + (fragmentUrl.includes("?") ? "&" : "?") + "since=" + (wait ? version : "");
    const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (response.status === 401) {
      say("Signed out: open a new sign-in link from `mcp-tools approvals login`.");
      return false;
    }
    if (!response.ok) throw new Error("HTTP " + response.status);
    const html = await response.text();
    version = response.headers.get("X-Version") || "";
    if (html !== last) {
      live.innerHTML = html;
      last = html;
      localTimes();
    }
    return true;
  }

  async function follow() {
    for (;;) {
      try {
        if (!(await refresh(true))) return;
        if (status && status.textContent.startsWith("Connection lost")) say("");
      } catch (error) {
        say("Connection lost; retrying…");
        await new Promise(function (resolve) { setTimeout(resolve, 2000); });
      }
    }
  }

  live.addEventListener("submit", async function (event) {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    event.preventDefault();
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    const body = new URLSearchParams(new FormData(form));
    try {
      const response = await fetch(form.action, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        body: body,
      });
      const answer = await response.json().catch(function () { return {}; });
      if (response.ok) {
        const done = (answer.status === "approved" ? "Approved " : "Denied ") + answer.id + ".";
        say(done);
        setTimeout(function () { if (status && status.textContent === done) say(""); }, 10000);
      } else {
        say("Not done: " + (answer.error || response.status));
      }
    } catch (error) {
      say("Not done: the server could not be reached.");
    }
    await refresh(false).catch(function () {});
  });

  localTimes();
  setInterval(localTimes, 30000);
  follow();
})();
