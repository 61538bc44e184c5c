"use strict";
// The approval card. Text is only ever set with textContent; buttons act on trusted clicks only;
// the only peer is the host (window.parent), through the MCP Apps postMessage protocol.
(() => {
  const PROTOCOL = "2026-01-26";
  const META_KEY = "mcp-tools/approval";
  const el = (id) => document.getElementById(id);
  const pending = new Map();
  let nextId = 1;
  let opened = null; // {approvalId, ticket, show, decide}
  let busy = false;

  const say = (text) => { el("status").textContent = text; };
  const post = (message) => window.parent.postMessage(message, "*");

  function request(method, params) {
    const id = nextId++;
    post({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  function reply(id, result) { post({ jsonrpc: "2.0", id, result }); }

  async function callTool(name, args) {
    const result = await request("tools/call", { name, arguments: args });
    if (!result || result.isError) {
      const text = result && result.content && result.content[0] ? String(result.content[0].text) : "";
      let message = "the server refused";
      try { message = JSON.parse(text).error.message || message; } catch (_) { /* not JSON */ }
      throw new Error(message);
    }
    return result.structuredContent || {};
  }

  async function showApproval() {
    try {
      const shown = await callTool(opened.show, { approval_id: opened.approvalId, ticket: opened.ticket });
      el("title").textContent = "Approve this action?";
      el("summary").textContent = String(shown.message);
      el("summary").hidden = false;
      el("actions").hidden = false;
      say("Nothing runs until you choose. Approval " + String(shown.approval_id) + ", expires " + String(shown.expires) + ".");
    } catch (error) {
      say("This approval cannot be shown here (" + error.message + ").");
    }
  }

  async function answer(decision) {
    if (busy || !opened) return;
    busy = true;
    el("approve").disabled = true;
    el("deny").disabled = true;
    say(decision === "approve" ? "Approving…" : "Denying…");
    try {
      const decided = await callTool(opened.decide, {
        approval_id: opened.approvalId, ticket: opened.ticket, decision,
      });
      el("actions").hidden = true;
      el("title").textContent = decided.status === "approved" ? "Approved" : "Denied";
      say(String(decided.next));
    } catch (error) {
      say("Your answer was not recorded (" + error.message + ").");
    }
  }

  function onToolResult(result) {
    const meta = result && result._meta ? result._meta[META_KEY] : null;
    if (!meta || typeof meta.approvalId !== "string" || typeof meta.ticket !== "string") {
      el("title").textContent = "No approval needed";
      say("This call did not wait for an approval.");
      el("fallback").hidden = true;
      return;
    }
    opened = {
      approvalId: meta.approvalId, ticket: meta.ticket, show: String(meta.show), decide: String(meta.decide),
    };
    showApproval();
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && !message.method) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(String(message.error.message)));
      else waiting.resolve(message.result);
      return;
    }
    if (message.method === "ui/notifications/tool-result") onToolResult(message.params);
    else if (message.method === "ui/resource-teardown" || message.method === "ping") reply(message.id, {});
    else if (message.id !== undefined) {
      post({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "not supported by this card" } });
    }
  });

  for (const [id, decision] of [["approve", "approve"], ["deny", "deny"]]) {
    el(id).addEventListener("click", (event) => {
      if (!event.isTrusted) return; // a click made by script is not the person's
      answer(decision);
    });
  }

  request("ui/initialize", {
    appInfo: { name: "mcp-tools approval card", version: "1" },
    appCapabilities: {},
    protocolVersion: PROTOCOL,
  }).then(() => {
    post({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  }, () => say("The host did not start this card; answer on the approvals page instead."));
})();
