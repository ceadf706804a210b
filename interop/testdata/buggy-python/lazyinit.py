"""Lazy-init twins: a search tool whose index client is created on first use.

Creating the client is slow (it "connects"), so it is done outside the lock, and callers that
arrive meanwhile wait for the first one to finish. The buggy twin waits while still holding the
lock the initializing thread needs to publish the client: one call at a time never waits, so
it passes every sequential test, and two first calls at once deadlock for good. The healthy
twin releases the lock before waiting.
"""

import threading
import time

import mcpfw

BUGGY = mcpfw.variant() == "buggy"

_lock = threading.Lock()
_ready = threading.Event()
_client = None
_connecting = False


class IndexClient:
    def __init__(self):
        time.sleep(0.2)  # connecting to the index
        self.docs = {"mcp": 3, "json": 5, "python": 8}

    def count(self, term):
        return self.docs.get(term.lower(), 0)


def get_client():
    global _client, _connecting
    if BUGGY:
        with _lock:
            if _client is not None:
                return _client
            if _connecting:
                _ready.wait()  # another call is connecting: wait for it (holding _lock)
                return _client
            _connecting = True
    else:
        with _lock:
            if _client is not None:
                return _client
            first = not _connecting
            _connecting = True
        if not first:
            _ready.wait()  # another call is connecting: wait for it
            return _client
    client = IndexClient()
    with _lock:
        _client = client
    _ready.set()
    return client


server = mcpfw.Server("lazyinit-py", "1.0.0")


@server.tool("search", "counts the documents matching a term",
             {"type": "object", "properties": {"term": {"type": "string"}}, "required": ["term"]})
def search(args):
    return f"{get_client().count(args['term'])} documents match {args['term']!r}"


@server.tool("version", "the server's version", {"type": "object", "properties": {}})
def version(args):
    return "lazyinit-py 1.0.0"


if __name__ == "__main__":
    server.serve()
