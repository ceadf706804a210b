"""Crash twins: a server that writes an access log line for every tool call.

The log line is written on the reader thread, before the call is queued, with each argument
cut to 40 characters. The buggy twin slices the values as strings: an argument of another
type (a number where a string is expected) raises on the reader thread, which nothing catches,
so the process dies with a traceback. The healthy twin formats each value first.
"""

import sys

import mcpfw

BUGGY = mcpfw.variant() == "buggy"


class LoggingServer(mcpfw.Server):
    def route(self, msg):
        params = msg.get("params") or {}
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            return
        if BUGGY:
            shown = {k: v[:40] for k, v in args.items()}
        else:
            shown = {k: str(v)[:40] for k, v in args.items()}
        sys.stderr.write(f"call {params.get('name')} {shown}\n")


server = LoggingServer("crash-py", "1.0.0")


@server.tool("translate", "translates a phrase",
             {"type": "object", "properties": {"text": {"type": "string"}, "to": {"type": "string", "enum": ["fr", "de"]}},
              "required": ["text", "to"]})
def translate(args):
    words = {"fr": {"hello": "bonjour"}, "de": {"hello": "hallo"}}[args["to"]]
    return " ".join(words.get(w, w) for w in args["text"].split())


if __name__ == "__main__":
    server.serve()
