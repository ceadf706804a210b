// A Markdown renderer that remembers its latest renders, for a recent_renders tool: the history
// keeps the last 50 and drops the oldest.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve } from "./serve.mjs";

const history = [];
const historySize = 50;

function remember(entry) {
  history.push(entry);
  if (history.length > historySize) history.shift();
}

function escapeHtml(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function render(markdown) {
  return markdown
    .split(/\n{2,}/)
    .map((block) => (block.startsWith("# ") ? `<h1>${escapeHtml(block.slice(2))}</h1>` : `<p>${escapeHtml(block)}</p>`))
    .join("\n");
}

function createServer() {
  const server = new McpServer({ name: "markdown", version: "1.0.0" });
  server.registerTool(
    "render_markdown",
    { description: "Render Markdown to HTML", inputSchema: { markdown: z.string() }, annotations: { readOnlyHint: true } },
    async ({ markdown }) => {
      const html = render(markdown);
      remember({ at: Date.now(), markdown, html });
      return { content: [{ type: "text", text: `${html.length} characters of HTML` }] };
    },
  );
  server.registerTool("recent_renders", { description: "The latest renders", annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: "text", text: history.slice(-5).map((h) => `${new Date(h.at).toISOString()} ${h.html.length}`).join("\n") }],
  }));
  return server;
}

await serve(createServer);
