// An order-history server. BUG: the report is built in a buffer shared by every request, and
// the loop awaits the database between rows, so concurrent calls clear and append to each
// other's report. A new_order_id tool answers differently every time, by design.
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { serve } from "./serve.mjs";

const orders = [
  { id: 1, item: "keyboard", cents: 4999 },
  { id: 2, item: "mouse", cents: 1999 },
  { id: 3, item: "monitor", cents: 18999 },
  { id: 4, item: "cable", cents: 599 },
];

// Stands for a query per row.
async function fetchStatus(order) {
  await new Promise((resolve) => setTimeout(resolve, 2));
  return order.cents > 2000 ? "shipped" : "pending";
}

const lines = [];

async function orderReport(customer) {
  lines.length = 0;
  lines.push(`Orders of ${customer}`);
  for (const order of orders) {
    const status = await fetchStatus(order);
    lines.push(`#${order.id} ${order.item} ${(order.cents / 100).toFixed(2)} ${status}`);
  }
  lines.push(`${lines.length - 1} orders`);
  return lines.join("\n");
}

function createServer() {
  const server = new McpServer({ name: "orders", version: "1.0.0" });
  server.registerTool(
    "order_history",
    { description: "List a customer's orders", inputSchema: { customer: z.string() }, annotations: { readOnlyHint: true } },
    async ({ customer }) => ({ content: [{ type: "text", text: await orderReport(customer) }] }),
  );
  server.registerTool("new_order_id", { description: "Reserve a new order id" }, async () => ({
    content: [{ type: "text", text: JSON.stringify({ orderId: randomUUID(), reservedAt: new Date().toISOString() }) }],
  }));
  return server;
}

await serve(createServer);
