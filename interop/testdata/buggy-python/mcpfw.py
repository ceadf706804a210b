"""A small MCP server framework over stdio, written the way threaded Python servers are.

A reader thread (the main thread) reads one JSON-RPC message per line from stdin; cheap
requests (initialize, ping, tools/list) are answered inline, tool calls are handed to a
ThreadPoolExecutor, and every write to stdout is serialised by a lock. Tool arguments are
checked against the tool's inputSchema (types, required, enums) before the handler runs.

Python 3.11 standard library only. Used by the buggy/healthy twin servers next to it; the
twins differ only in their bug, never in this module.
"""

import json
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor

SUPPORTED_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ToolError(Exception):
    """A failure the tool reports to the model: a result with isError set."""


class RPCError(Exception):
    """A protocol error: the request is answered with a JSON-RPC error."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Tool:
    def __init__(self, name, description, schema, fn, annotations=None):
        self.name = name
        self.description = description
        self.schema = schema
        self.fn = fn
        self.annotations = annotations

    def describe(self):
        d = {"name": self.name, "description": self.description, "inputSchema": self.schema}
        if self.annotations:
            d["annotations"] = self.annotations
        return d


_JSON_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def check_arguments(schema, args):
    """Returns what is wrong with args under schema (top-level properties only), or None."""
    if not isinstance(args, dict):
        return "arguments must be an object"
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in args:
            return f"missing required argument {name!r}"
    for name, value in args.items():
        p = props.get(name)
        if p is None:
            if schema.get("additionalProperties") is False:
                return f"unknown argument {name!r}"
            continue
        t = p.get("type")
        if t and not _JSON_TYPES[t](value):
            return f"argument {name!r} must be of type {t}"
        if "enum" in p and value not in p["enum"]:
            return f"argument {name!r} must be one of {p['enum']}"
        if t in ("integer", "number"):
            if "minimum" in p and value < p["minimum"]:
                return f"argument {name!r} must be >= {p['minimum']}"
            if "maximum" in p and value > p["maximum"]:
                return f"argument {name!r} must be <= {p['maximum']}"
    return None


class Server:
    def __init__(self, name, version, max_workers=8):
        self.name = name
        self.version = version
        self.tools = {}
        self.pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="tool")
        self._out = sys.stdout.buffer
        self._out_lock = threading.Lock()
        self._cancelled = set()
        self._cancel_lock = threading.Lock()

    def tool(self, name, description, schema, annotations=None):
        """Registers the decorated function fn(args) -> str | dict as a tool."""

        def register(fn):
            self.tools[name] = Tool(name, description, schema, fn, annotations)
            return fn

        return register

    # --- output -------------------------------------------------------------------------

    def send(self, msg):
        data = json.dumps(msg, separators=(",", ":")).encode("ascii")
        with self._out_lock:
            self._out.write(data + b"\n")
            self._out.flush()

    def reply(self, rid, result):
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def error(self, rid, code, message):
        self.send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

    # --- input --------------------------------------------------------------------------

    def route(self, msg):
        """Hook run on the reader thread for every tools/call before it is queued."""

    def serve(self):
        for raw in sys.stdin.buffer:
            if not raw.strip():
                continue
            try:
                msg = json.loads(raw)
            except (ValueError, RecursionError):
                self.error(None, PARSE_ERROR, "parse error")
                continue
            self.handle(msg)
        self.pool.shutdown(wait=False, cancel_futures=True)

    def handle(self, msg):
        if not isinstance(msg, dict):
            self.error(None, INVALID_REQUEST, "invalid request: not a JSON object")
            return
        rid = msg.get("id")
        has_id = "id" in msg
        if has_id and (isinstance(rid, bool) or not isinstance(rid, (str, int))):
            self.error(None, INVALID_REQUEST, "invalid request: id must be a string or an integer")
            return
        if "method" not in msg:
            return  # a response to a request we never sent: ignored
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str):
            if has_id:
                self.error(rid, INVALID_REQUEST, "invalid request")
            return
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            if has_id:
                self.error(rid, INVALID_PARAMS, "params must be an object")
            return
        if not has_id:
            self.notification(method, params)
            return
        try:
            if method == "tools/call":
                self.route(msg)
                self.pool.submit(self.call, rid, params)
                return
            self.reply(rid, self.request(method, params))
        except RPCError as e:
            self.error(rid, e.code, e.message)

    def notification(self, method, params):
        if method == "notifications/cancelled":
            rid = params.get("requestId")
            if isinstance(rid, (str, int)):
                with self._cancel_lock:
                    self._cancelled.add(rid)

    def request(self, method, params):
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[0]
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": self.name, "version": self.version},
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            if params.get("cursor") is not None:
                raise RPCError(INVALID_PARAMS, "invalid cursor")
            return {"tools": [t.describe() for t in self.tools.values()]}
        raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")

    def call(self, rid, params):
        """Runs one tools/call on a worker thread and answers it, unless it was cancelled."""
        try:
            result = self.run_tool(params)
        except RPCError as e:
            result = e
        except Exception as e:  # a bug in a tool must not take the server down
            traceback.print_exc(file=sys.stderr)
            result = {"content": [{"type": "text", "text": f"internal error: {e}"}], "isError": True}
        with self._cancel_lock:
            if rid in self._cancelled:
                self._cancelled.discard(rid)
                return
        if isinstance(result, RPCError):
            self.error(rid, result.code, result.message)
        else:
            self.reply(rid, result)

    def run_tool(self, params):
        name = params.get("name")
        if not isinstance(name, str):
            raise RPCError(INVALID_PARAMS, "tools/call needs a string name")
        tool = self.tools.get(name)
        if tool is None:
            raise RPCError(INVALID_PARAMS, f"unknown tool: {name}")
        args = params.get("arguments")
        if args is None:
            args = {}
        problem = check_arguments(tool.schema, args)
        if problem:
            return {"content": [{"type": "text", "text": "invalid arguments: " + problem}], "isError": True}
        try:
            out = tool.fn(args)
        except ToolError as e:
            return {"content": [{"type": "text", "text": str(e)}], "isError": True}
        if isinstance(out, dict):
            return {"content": [{"type": "text", "text": json.dumps(out, sort_keys=True)}], "structuredContent": out}
        return {"content": [{"type": "text", "text": str(out)}]}


def variant():
    """The --variant argument: "buggy" or "healthy"."""
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--variant" and args[1] in ("buggy", "healthy"):
        return args[1]
    sys.stderr.write("usage: %s --variant buggy|healthy\n" % sys.argv[0])
    sys.exit(64)
