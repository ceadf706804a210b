// A password-hashing server. BUG: hash_password derives the key with pbkdf2Sync, which holds
// the event loop for the whole derivation, so every other request (a status check included)
// waits behind it.
import { pbkdf2, pbkdf2Sync } from "node:crypto";
import { promisify } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve } from "./serve.mjs";

const pbkdf2Async = promisify(pbkdf2);

async function deriveKey(password, salt, iterations) {
  return pbkdf2Sync(password, salt, iterations, 32, "sha256");
}

function createServer() {
  const server = new McpServer({ name: "hasher", version: "1.0.0" });
  server.registerTool(
    "hash_password",
    {
      description: "Hash a password with PBKDF2-SHA256",
      inputSchema: { password: z.string(), salt: z.string().default("mcp"), iterations: z.number().int().min(1000).max(5_000_000).default(600_000) },
      annotations: { readOnlyHint: true },
    },
    async ({ password, salt, iterations }) => {
      const key = await deriveKey(password, salt, iterations);
      return { content: [{ type: "text", text: `pbkdf2-sha256$${iterations}$${salt}$${key.toString("hex")}` }] };
    },
  );
  server.registerTool("status", { description: "Is the service up", annotations: { readOnlyHint: true } }, async () => ({
    content: [{ type: "text", text: "ok" }],
  }));
  return server;
}

await serve(createServer);
