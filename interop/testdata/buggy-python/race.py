"""Race twins: a greeting tool that looks the caller up and greets them.

The buggy twin keeps "the current request" in a module-level dict, as code ported from a
single-threaded script does: the handler stores the name, fetches the profile (slow), then
reads the name back, by which time another worker may have overwritten it. The healthy twin
keeps the request in a local variable. stock_report has the same bug class with identical
arguments: the buggy twin tallies into a module-level counter it resets per call, so concurrent
calls count each other's items; its JSON text also carries a timestamp, which varies by design.
Both also have new_session, whose answer carries a fresh
id and a timestamp on every call: it varies by design, and is no race.
"""

import json
import time
import uuid

import mcpfw

BUGGY = mcpfw.variant() == "buggy"

_current = {}  # the request being served (buggy twin only)

PROFILES = {"ada": "mathematician", "grace": "admiral"}


def lookup_profile(name):
    time.sleep(0.02)  # a database round trip
    return PROFILES.get(name.lower(), "guest")


server = mcpfw.Server("race-py", "1.0.0")


@server.tool("greet", "greets a user by name",
             {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
def greet(args):
    if BUGGY:
        _current["name"] = args["name"]
        role = lookup_profile(_current["name"])
        return f"Hello, {_current['name']} the {role}!"
    req = {"name": args["name"]}
    role = lookup_profile(req["name"])
    return f"Hello, {req['name']} the {role}!"


_tally = {"items": 0}  # the running count (buggy twin only)

STOCK = {"north": ["bolt", "nut", "gear"], "south": ["cog", "axle"]}


@server.tool("stock_report", "counts the items in stock across warehouses",
             {"type": "object", "properties": {"warehouse": {"type": "string", "enum": ["all", "north", "south"]}},
              "required": ["warehouse"]})
def stock_report(args):
    names = [n for w, items in STOCK.items() if args["warehouse"] in ("all", w) for n in items]
    if BUGGY:
        _tally["items"] = 0
        for _ in names:
            time.sleep(0.005)  # reading the item's row
            _tally["items"] += 1
        count = _tally["items"]
    else:
        count = 0
        for _ in names:
            time.sleep(0.005)  # reading the item's row
            count += 1
    return json.dumps({"warehouse": args["warehouse"], "items": count,
                       "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S") + "%.6f" % (time.time() % 1)})


@server.tool("new_session", "opens a session for a user",
             {"type": "object", "properties": {"user": {"type": "string"}}, "required": ["user"]})
def new_session(args):
    return {"user": args["user"], "session_id": str(uuid.uuid4()), "created": time.time()}


if __name__ == "__main__":
    server.serve()
