// A glossary server that loads its dictionary on first use. BUG: while the dictionary loads,
// later callers park their resolver in a single slot, so each one overwrites the last; when
// the load finishes only the last parked caller is woken, the others wait forever. One call at
// a time never sees it.
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
  let onLoaded = null;

  async function getDictionary() {
    if (dictionary) return dictionary;
    if (loading) {
      return new Promise((resolve) => {
        onLoaded = resolve;
      });
    }
    loading = true;
    dictionary = await loadDictionary();
    loading = false;
    if (onLoaded) onLoaded(dictionary);
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
