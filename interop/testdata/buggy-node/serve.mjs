// serve runs an McpServer the way most small servers do: over stdio, or, when PORT is
// set, over stateful Streamable HTTP on 127.0.0.1 with one McpServer per session (the SDK's
// own example). createServer makes a fresh server, with its own state, for each session.
import { randomUUID } from "node:crypto";
import http from "node:http";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

export async function serve(createServer) {
  const port = process.env.PORT;
  if (!port) {
    await createServer().connect(new StdioServerTransport());
    return;
  }
  const sessions = new Map();
  const httpServer = http.createServer(async (req, res) => {
    try {
      let body;
      if (req.method === "POST") {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      }
      const id = req.headers["mcp-session-id"];
      let transport = id ? sessions.get(id) : undefined;
      if (!transport) {
        if (id || !isInitializeRequest(body)) {
          res.writeHead(id ? 404 : 400, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "no valid session" } }));
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => sessions.delete(transport.sessionId);
        await createServer().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (err) {
      if (!res.headersSent) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: String(err) } }));
      }
    }
  });
  httpServer.listen(Number(port), "127.0.0.1", () => console.error(`listening on 127.0.0.1:${port}`));
}
