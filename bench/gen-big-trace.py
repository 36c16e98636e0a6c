#!/usr/bin/env python3
"""Write a large Kineto trace by replicating a real one.

usage: bench/gen-big-trace.py [-s SOURCE] [-m MB | -c COPIES] [--gap-us US] [OUT]

Reads SOURCE (default: the shared torch211-h100/block_bf16.json; a .gz is
inflated) and writes OUT (default /tmp/kprof-bench/big.json), a valid
Chrome/Kineto trace of at least MB megabytes (10^6 bytes; default 600), or of
exactly COPIES copies of the source's events (-c: bench/parse-floor.sh's
linearity runs, 1x against 8x of the same trace).

The source's bytes are kept verbatim (same whitespace, key order and number
spelling); only these numbers are rewritten.  In copy k (k = 0, 1, ...):

  - every event's "ts" is shifted by k * (span of the source + gap), in whole
    microseconds, so the digits after the decimal point are unchanged;
  - "External id", "correlation", "Python id", "Python parent id" in args and
    the "id" of flow events (ph s/t/f) are offset by k * (largest such id + 1),
    so links stay unique, and ids that were equal stay equal (2022 traces use
    External id == correlation == flow id).

Copy 0 is the source's traceEvents byte for byte, metadata (ph "M") included;
later copies leave metadata out, as a real long trace has it once.  The text
before and after the traceEvents array (deviceProperties,
baseTimeNanoseconds, traceName, ...) is kept as is.  The output is streamed
one copy at a time; only the source is held in memory.
"""

import argparse
import gzip
import json
import os
import re
import sys
import time

DEFAULT_SOURCE = os.path.normpath(os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..", "..", "shared", "testdata", "torch211-h100", "block_bf16.json"))
DEFAULT_OUT = "/tmp/kprof-bench/big.json"

EVENT_KEYS = (b'"ts"', b'"id"')
ARG_ID_KEYS = (b'"External id"', b'"correlation"', b'"Python id"',
               b'"Python parent id"')

# Strings and structural characters; numbers and literals lie between them.
TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\],:]')
INT = re.compile(rb'-?(?:0|[1-9][0-9]*)')
NUMBER = re.compile(rb'(-?(?:0|[1-9][0-9]*))(\.[0-9]+)?')


class Event:
    __slots__ = ("start", "end", "ph", "slots")

    def __init__(self, start):
        self.start = start
        self.end = None
        self.ph = None
        self.slots = []  # (start, end, kind, base, suffix)


def fail(msg):
    sys.exit("gen-big-trace: error: " + msg)


def scan(raw):
    """Find the traceEvents array, its events and their numeric slots.

    Returns (array_open, array_close, events): array_open is the offset just
    after '[', array_close the offset of ']'.
    """
    # Per container on the stack: [is_object, key, expect_key, value_start].
    stack = []
    arr_open = arr_close = None
    events = []
    ev = None
    ev_depth = None  # len(stack) inside an event object
    for m in TOKEN.finditer(raw):
        t = m.group()
        c = t[0]
        top = stack[-1] if stack else None
        if c == 0x22:  # '"'
            if top is not None and top[0] and top[2]:
                top[1] = t
            elif top is not None:
                top[3] = None  # a string value: not a number
            continue
        if c == 0x3A:  # ':'
            top[2] = False
            top[3] = m.end()
            continue
        if c in (0x2C, 0x7D, 0x5D):  # ',' '}' ']'
            if top is not None and top[0] and top[3] is not None \
                    and ev is not None:
                depth = len(stack)
                key = top[1]
                vs, ve = top[3], m.start()
                val = raw[vs:ve].strip()
                if depth == ev_depth and key in EVENT_KEYS:
                    n = NUMBER.fullmatch(val)
                    if n and (key == b'"ts"' or n.group(2) is None):
                        lead = len(raw[vs:ve]) - len(raw[vs:ve].lstrip())
                        ev.slots.append(
                            (vs + lead, vs + lead + len(val),
                             "ts" if key == b'"ts"' else "flowid",
                             int(n.group(1)), n.group(2) or b""))
                elif depth == ev_depth + 1 and key in ARG_ID_KEYS \
                        and stack[-2][1] == b'"args"' and INT.fullmatch(val):
                    lead = len(raw[vs:ve]) - len(raw[vs:ve].lstrip())
                    ev.slots.append((vs + lead, vs + lead + len(val), "id",
                                     int(val), b""))
            if c == 0x2C:
                if top[0]:
                    top[2] = True
                top[3] = None
                continue
            stack.pop()
            if ev is not None and len(stack) == ev_depth - 1:
                ev.end = m.end()
                events.append(ev)
                ev = None
            if arr_open is not None and arr_close is None \
                    and len(stack) == 1 and c == 0x5D:
                arr_close = m.start()
            continue
        # '{' or '['
        if top is not None:
            top[3] = None
        if arr_open is not None and arr_close is None and len(stack) == 2 \
                and c == 0x7B:
            ev = Event(m.start())
            ev_depth = 3
        if len(stack) == 1 and c == 0x5B and top[1] == b'"traceEvents"' \
                and arr_open is None:
            arr_open = m.end()
        stack.append([c == 0x7B, None, c == 0x7B, None])
    if arr_open is None or arr_close is None:
        fail("no top-level traceEvents array")
    return arr_open, arr_close, events


def main():
    ap = argparse.ArgumentParser(
        description="Write a >= MB trace by replicating a real Kineto trace.")
    ap.add_argument("out", nargs="?", default=DEFAULT_OUT,
                    help="output path (default %(default)s)")
    ap.add_argument("-s", "--source", default=DEFAULT_SOURCE,
                    help="trace to replicate, .json or .json.gz "
                         "(default %(default)s)")
    ap.add_argument("-m", "--mb", type=float, default=600,
                    help="minimum output size in MB of 10^6 bytes "
                         "(default %(default)s)")
    ap.add_argument("-c", "--copies", type=int, default=0,
                    help="exactly this many copies (instead of -m)")
    ap.add_argument("--gap-us", type=int, default=1000,
                    help="idle time between copies in us (default %(default)s)")
    a = ap.parse_args()

    t0 = time.monotonic()
    try:
        opener = gzip.open if a.source.endswith(".gz") else open
        with opener(a.source, "rb") as f:
            raw = f.read()
        doc = json.loads(raw)  # also proves the source is valid JSON
    except (OSError, ValueError) as e:
        fail("cannot read '%s': %s" % (a.source, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("'%s' has no traceEvents array" % a.source)
    parsed = [e for e in doc["traceEvents"]]
    del doc

    arr_open, arr_close, events = scan(raw)
    if len(events) != len(parsed):
        fail("scanner found %d events, json found %d" % (len(events), len(parsed)))

    # Check every slot against the parsed document; drop flow "id" slots on
    # events that are not flows; find the span and the largest id.
    lo = hi = None
    max_id = -1
    for e, p in zip(events, parsed):
        if not isinstance(p, dict):
            fail("traceEvents holds a non-object")
        e.ph = p.get("ph")
        # an event-level "id" is a link only on flow events
        e.slots = [(st, en, "id" if kind == "flowid" else kind, base, suf)
                   for st, en, kind, base, suf in e.slots
                   if kind != "flowid" or e.ph in ("s", "t", "f")]
        ts = p.get("ts")
        if isinstance(ts, (int, float)) and not isinstance(ts, bool):
            dur = p.get("dur", 0)
            end_ts = ts + (dur if isinstance(dur, (int, float)) else 0)
            lo = ts if lo is None or ts < lo else lo
            hi = end_ts if hi is None or end_ts > hi else hi
        for start, end, kind, base, suffix in e.slots:
            if kind == "id":
                max_id = max(max_id, base)
            elif base < 0 and suffix:
                fail("negative fractional ts %s: cannot shift its digits" %
                     raw[start:end].decode())
    if lo is None:
        fail("'%s' has no timestamps" % a.source)
    nmeta = sum(1 for e in events if e.ph == "M")
    nbody = len(events) - nmeta
    if nbody == 0:
        fail("'%s' has only metadata events" % a.source)

    period_us = int(hi - lo) + 1 + a.gap_us
    id_step = max_id + 1

    def template(evs):
        """Literal byte pieces around the numeric slots of evs."""
        pieces, slots = [], []
        pos = None
        for i, e in enumerate(evs):
            if i:
                pieces.append(b",\n  ")
            pos = e.start
            for start, end, kind, base, suffix in e.slots:
                pieces.append(raw[pos:start])
                slots.append((kind == "ts", base, suffix))
                pieces.append(None)
                pos = end
            pieces.append(raw[pos:e.end])
        # merge adjacent literals so pieces alternate literal/slot
        lits, cur = [], []
        for p in pieces:
            if p is None:
                lits.append(b"".join(cur))
                cur = []
            else:
                cur.append(p)
        lits.append(b"".join(cur))
        return lits, slots

    def render(tpl, k):
        lits, slots = tpl
        dts, did = k * period_us, k * id_step
        out = [None] * (2 * len(slots) + 1)
        out[0::2] = lits
        out[1::2] = [b"%d%s" % (base + (dts if is_ts else did), suffix)
                     for is_ts, base, suffix in slots]
        return b"".join(out)

    full = template(events)
    body = template([e for e in events if e.ph != "M"])
    head = raw[:events[0].start] if events else raw[:arr_open]
    tail = raw[events[-1].end:] if events else raw[arr_close:]
    sep = b",\n  "

    target = int(a.mb * 1e6)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    written = 0
    copies = 0
    with open(tmp, "wb") as f:
        def put(b):
            nonlocal written
            f.write(b)
            written += len(b)
        put(head)
        while True:
            put(render(full if copies == 0 else body, copies))
            copies += 1
            if (copies >= a.copies if a.copies > 0 else
                    written + len(tail) >= target):
                break
            put(sep)
        put(tail)
    os.replace(tmp, a.out)

    print("gen-big-trace: %s: %.1f MB, %d copies of %d events (+%d metadata "
          "once) from %s; ts step %d us, id step %d; %.1f s" %
          (a.out, written / 1e6, copies, nbody, nmeta,
           os.path.basename(a.source), period_us, id_step,
           time.monotonic() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
