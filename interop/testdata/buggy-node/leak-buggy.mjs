// A Markdown renderer that remembers what it rendered, for a recent_renders tool. BUG: the
// history is never trimmed, so every request's input and output stay in memory for good.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve } from "./serve.mjs";

const history = [];

function remember(entry) {
  history.push(entry);
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
