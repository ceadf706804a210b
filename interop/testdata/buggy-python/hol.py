"""Head-of-line twins: a slow report and a fast lookup over one database.

The buggy twin shares one connection between the worker threads and guards it with a global
lock held for the whole query, so a lookup waits for any report in progress. The healthy twin
gives each worker thread its own connection and needs no lock.
"""

import threading
import time

import mcpfw

BUGGY = mcpfw.variant() == "buggy"


class Connection:
    """A stand-in for a database connection: queries take time."""

    ROWS = {"ada": 1815, "grace": 1906, "alan": 1912}

    def query(self, key, seconds):
        time.sleep(seconds)
        return self.ROWS.get(key)


_shared = Connection()
_db_lock = threading.Lock()
_local = threading.local()


def run_query(key, seconds):
    if BUGGY:
        with _db_lock:  # the connection is not thread-safe
            return _shared.query(key, seconds)
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = Connection()
    return conn.query(key, seconds)


server = mcpfw.Server("hol-py", "1.0.0")


@server.tool("yearly_report", "builds the yearly report (takes a while)",
             {"type": "object", "properties": {"year": {"type": "integer"}}, "required": ["year"]})
def yearly_report(args):
    run_query("ada", 0.5)
    return f"report {args['year']}: 3 people"


@server.tool("lookup", "the birth year of a person",
             {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
def lookup(args):
    year = run_query(args["name"], 0.001)
    return f"{args['name']}: {year}"


if __name__ == "__main__":
    server.serve()
