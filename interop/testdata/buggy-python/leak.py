"""Leak twins: a render tool that keeps each rendered page so job_status can return it.

Every call is a job with a fresh id; its rendered page (32 KiB) is kept in a dict keyed by
that id for later retrieval. The buggy twin never evicts anything, so memory grows with every
call. The healthy twin keeps the latest 64 jobs (an LRU).
"""

import collections
import threading
import uuid

import mcpfw

BUGGY = mcpfw.variant() == "buggy"
KEEP = 64

_jobs = {} if BUGGY else collections.OrderedDict()
_jobs_lock = threading.Lock()


def remember(job_id, page):
    with _jobs_lock:
        _jobs[job_id] = page
        if not BUGGY:
            while len(_jobs) > KEEP:
                _jobs.popitem(last=False)


server = mcpfw.Server("leak-py", "1.0.0")


@server.tool("render", "renders a page of text and keeps it for job_status",
             {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
def render(args):
    job_id = uuid.uuid4().hex
    page = (args["text"] + " ") * (32768 // (len(args["text"]) + 1) + 1)
    remember(job_id, bytearray(page[:32768].encode()))
    return f"job {job_id}: rendered {len(args['text'])} characters"


@server.tool("job_status", "returns a rendered page",
             {"type": "object", "properties": {"job": {"type": "string"}}, "required": ["job"]})
def job_status(args):
    with _jobs_lock:
        page = _jobs.get(args["job"])
    if page is None:
        raise mcpfw.ToolError("no such job")
    return page[:80].decode()


if __name__ == "__main__":
    server.serve()
