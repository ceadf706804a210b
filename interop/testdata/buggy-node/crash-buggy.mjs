// A team-chat notifier: notify queues a message for a channel and delivers it in the
// background so the caller does not wait. BUG: the delivery builds the webhook path with
// encodeURIComponent, which throws on a lone surrogate; it runs in a timer, outside the
// SDK's try/catch, so one bad channel name kills the process.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve } from "./serve.mjs";

const outbox = [];

function deliver(channel, text) {
  const path = `/hooks/${encodeURIComponent(channel)}`;
  // Stands for a POST to the chat service.
  outbox.push({ path, text, at: Date.now() });
  if (outbox.length > 100) outbox.shift();
}

function createServer() {
  const server = new McpServer({ name: "notifier", version: "1.0.0" });
  server.registerTool(
    "notify",
    {
      description: "Post a message to a team channel",
      inputSchema: { channel: z.string().describe("channel name, e.g. ops"), text: z.string() },
    },
    async ({ channel, text }) => {
      setTimeout(() => deliver(channel, text), 0);
      return { content: [{ type: "text", text: `queued for #${channel}` }] };
    },
  );
  return server;
}

await serve(createServer);
