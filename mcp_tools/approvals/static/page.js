// The approvals page: keep the list live, and answer without leaving the page.
// No framework, no third-party code; the server escapes everything it renders.
"use strict";
(function () {
  const live = document.getElementById("live");
  const status = document.querySelector(".live");
  if (!live) return;
  const fragmentUrl = live.dataset.fragment;
  let last = live.innerHTML;
  let busy = false;

  function say(text) {
    if (status) status.textContent = text;
  }

  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(fragmentUrl, { credentials: "same-origin", cache: "no-store" });
      if (response.status === 401) {
        say("Signed out: open a new sign-in link from `mcp-tools approvals login`.");
        return;
      }
      if (!response.ok) return;
      const html = await response.text();
      if (html !== last) {
        live.innerHTML = html;
        last = html;
      }
    } catch (error) {
      say("Connection lost; retrying…");
    } finally {
      busy = false;
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
        say((answer.status === "approved" ? "Approved " : "Denied ") + answer.id + ".");
      } else {
        say("Not done: " + (answer.error || response.status));
      }
    } catch (error) {
      say("Not done: the server could not be reached.");
    }
    await refresh();
  });

  setInterval(refresh, 1000);
})();
