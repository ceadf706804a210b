// A glossary server that loads its dictionary on first use. Callers that arrive while it
// loads wait in a list, and every one of them is woken when it is ready.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve } from "./serve.mjs";

async function loadDictionary() {
  // Stands for reading and parsing a file.
  await new Promise((resolve) => setTimeout(resolve, 150));
  return new Map([["mcp", "Model Context Protocol"], ["rpc", "remote procedure call"], ["sdk", "software development kit"]]);
}

function createServer() {
  const server = new McpServer({ name: "glossary", version: "1.0.0" });
  let dictionary = null;
  let loading = false;
  const waiting = [];

  async function getDictionary() {
    if (dictionary) return dictionary;
    if (loading) {
      return new Promise((resolve) => {
        waiting.push(resolve);
      });
    }
    loading = true;
    dictionary = await loadDictionary();
    loading = false;
    for (const wake of waiting.splice(0)) wake(dictionary);
    return dictionary;
  }

  server.registerTool(
    "define",
    { description: "Define an abbreviation", inputSchema: { term: z.string().describe("the abbreviation") }, annotations: { readOnlyHint: true } },
    async ({ term }) => {
      const dict = await getDictionary();
      const text = dict.get(term.toLowerCase()) ?? `no definition for ${term}`;
      return { content: [{ type: "text", text }] };
    },
  );
  server.registerTool("count_terms", { description: "How many terms the glossary holds", annotations: { readOnlyHint: true } }, async () => {
    const dict = await getDictionary();
    return { content: [{ type: "text", text: `${dict.size} terms` }] };
  });
  return server;
}

await serve(createServer);
