#!/usr/bin/env python3
"""tests/func/ctf_check.py - CTF traces of grb (grb/ctf.h), read back by
babeltrace2 and babeltrace 1.5.

usage: ctf_check.py MODE TEST_CTF [--xfail duplicate-id-30] [--keep]

MODE is one of
  events             per-CPU buffers, discard mode (test_ctf events)
  events-perchannel  one buffer, overwrite mode
  events-ids         per-CPU, more than 30 event classes (ids from 30 up)
  discard, overwrite a consumer too slow for its writers

The script runs TEST_CTF in that mode, which writes a trace and a file of
what it committed (one JSON object a line: event classes, events with
the clock read around each emit, counters), then prints the trace with
each reader and compares:

  events: every event printed, field by field, equals one the test
  committed, of the same thread in the same order (threads are told
  apart by the clock bounds and the values), its timestamp inside the
  bounds read around its emit and its stream the CPU it ran on; none is
  missing; the global order is non-decreasing in time; the discarded
  events each stream reports are the events grb refused on that buffer.

  discard, overwrite: the discarded events each stream reports equal the
  buffer's refusals (grb_buf_get_stats lost_*), their sum and the
  discarded packets equal grb_ctf_get_stats(); the events printed are
  those committed less those overwritten; each writer's sequence numbers
  increase; there were losses to compare.

  Both: the stream files' gaps in packet_seq_num add up to
  packets_discarded, and each stream's last packet carries its buffer's
  refusals (what a reader counts from).

Two readers' own bugs are allowed for, no more: babeltrace2 2.0 prints
an empty string as an earlier value of the same field (empty strings are
then compared by babeltrace 1.5 only), and babeltrace 1.5 reports no
lost packets at a packet that also discarded events.

Exit status: 0 passed, 1 failed, 77 skipped (babeltrace2 not installed).
With --xfail, a failure that is the named known bug is expected (0); if
the readers accept the trace and everything compares, the bug is fixed
and the marker must go (1).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections import defaultdict

SKIP = 77
TEST_TIMEOUT = 120

# The readers, with the options that make their lines comparable: the
# timestamp in clock cycles (nanoseconds of CLOCK_MONOTONIC here, the
# values the test read), no delta, and the log level.
READERS = [
    ("babeltrace2", ["babeltrace2", "--clock-cycles", "--no-delta",
                     "-f", "loglevel"]),
    ("babeltrace", ["babeltrace", "--clock-cycles", "--no-delta",
                    "-f", "loglevel"]),
]

KNOWN_BUGS = {
    # clients/ctf/ctf.c gives the 31st class id 30, which the metadata
    # also gives "grb:padding": both readers refuse the whole trace.
    "duplicate-id-30": [
        "Duplicate event class (same ID) in the same stream class: id=30",
        "event ID 30 used more than once",
    ],
}

EVENT_LINE = re.compile(
    r"^\[(\d+)\] (?:(\w+) \((\d+)\) )?(.*?): \{ cpu_id = (\d+) \}, "
    r"\{ ?(.*?) ?\}$")
ENUM_VALUE = re.compile(
    r'\( (<unknown>|"[^"]*"(?:, "[^"]*")*) : container = (-?\d+) \)')
# babeltrace2 on stderr; "may have discarded" when it cannot count.
BT2_DISCARDED = re.compile(
    r"Tracer (?:discarded (\d+)|(may have) discarded) (event|packet)s? "
    r".*within stream \"([^\"]+)\"")
BT1_DISCARDED = re.compile(
    r"Tracer (?:discarded (\d+) (event)s|lost (\d+) trace (packet)s) "
    r".*at relative path: \"([^\"]+)\"")


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


# ---- reading the readers' output ----------------------------------------

def split_top(s):
    """Split "a = 1, b = [ 2, 3 ]" at the commas outside brackets and
    strings."""
    parts, cur, depth, instr, i = [], [], 0, False, 0
    while i < len(s):
        c = s[i]
        if instr:
            if c == "\\":
                cur.append(s[i:i + 2])
                i += 2
                continue
            if c == '"':
                instr = False
        elif c == '"':
            instr = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0 and s[i + 1:i + 2] == " ":
            parts.append("".join(cur))
            cur = []
            i += 2
            continue
        cur.append(c)
        i += 1
    if cur or parts:
        parts.append("".join(cur))
    return parts


def parse_fields(text, where):
    fields = []
    for part in split_top(text):
        name, sep, value = part.partition(" = ")
        if not sep:
            fail("%s: cannot read field %r" % (where, part))
        fields.append((name, value))
    return fields


def parse_events(reader, out):
    """Each event line as a dict: ts, loglevel, name, cpu, fields."""
    events = []
    for n, line in enumerate(out.splitlines(), 1):
        m = EVENT_LINE.match(line)
        if not m:
            fail("%s: line %d is not an event line:\n  %s" % (reader, n, line))
        where = "%s line %d" % (reader, n)
        events.append({
            "ts": int(m.group(1)),
            "loglevel": None if m.group(3) is None else int(m.group(3)),
            "name": m.group(4),
            "cpu": int(m.group(5)),
            "fields": parse_fields(m.group(6), where),
            "line": n,
            "text": line,
        })
    return events


def parse_discarded(reader, err):
    """Discarded events and packets, per stream file name."""
    events, packets, unknown = defaultdict(int), defaultdict(int), []
    for line in err.splitlines():
        if reader == "babeltrace2":
            m = BT2_DISCARDED.search(line)
            if not m:
                continue
            count, maybe, what, path = m.groups()
            stream = os.path.basename(path)
            if maybe:
                unknown.append(line.strip())
                continue
        else:
            m = BT1_DISCARDED.search(line)
            if not m:
                continue
            ne, _, np_, _, stream = m.groups()
            what, count = ("event", ne) if ne is not None else ("packet", np_)
        (events if what == "event" else packets)[stream] += int(count)
    return events, packets, unknown


def run_reader(reader, cmd, trace):
    p = subprocess.run(cmd + [trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TEST_TIMEOUT)
    return (p.returncode, p.stdout.decode("utf-8", "surrogateescape"),
            p.stderr.decode("utf-8", "surrogateescape"))


# ---- what babeltrace prints for a value ---------------------------------

def render_int(v, size, signed, base):
    bits = size * 8
    if base == 10:
        return str(v)
    if base == 16:
        return "0x%X" % (v & ((1 << bits) - 1))
    if base == 2:
        return "0b" + format(v & ((1 << bits) - 1), "0%db" % bits)
    # Octal: a signed value is shown sign-extended to whole digits
    # (at most 64 bits).
    width = min((bits + 2) // 3 * 3, 64) if signed else bits
    return "0%o" % (v & ((1 << width) - 1))


def render_scalar(fd, v):
    kind = fd["kind"]
    if kind == "int":
        return render_int(v, fd["size"], fd["signed"], fd["base"])
    if kind == "float":
        return "%g" % v
    if kind == "string":
        # The test's strings hold nothing a reader escapes.
        return '"%s"' % v
    labels = [lab for lab, val in fd["labels"] if val == v]
    names = ", ".join('"%s"' % lab for lab in labels) or "<unknown>"
    return "( %s : container = %d )" % (names, v)


def render(fd, v):
    if fd["length"]:
        return "[ %s ]" % ", ".join("[%d] = %s" % (i, render_scalar(fd, e))
                                   for i, e in enumerate(v))
    return render_scalar(fd, v)


def canon(text):
    """Labels of one enumeration value in a fixed order: a value with
    several labels lists them in an order the readers do not promise."""
    def sort_labels(m):
        if m.group(1) == "<unknown>":
            return m.group(0)
        labels = sorted(re.findall(r'"([^"]*)"', m.group(1)))
        return "( %s : container = %s )" % (
            ", ".join('"%s"' % lab for lab in labels), m.group(2))
    return ENUM_VALUE.sub(sort_labels, text)


# ---- the expected file ----------------------------------------------------

def load_expected(path):
    classes, events, stats = {}, [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            obj = json.loads(line)
            if "class" in obj:
                classes[obj["class"]] = obj
            elif "event" in obj:
                events.append(obj)
            else:
                stats = obj
    if stats is None:
        fail("%s: no counters" % path)
    return classes, events, stats


def expected_fields(classes, ev):
    cls = classes[ev["event"]]
    return [(fd["name"], canon(render(fd, v)))
            for fd, v in zip(cls["fields"], ev["values"])]


def describe(ev):
    return "thread %d seq %d %s" % (ev["thread"], ev["seq"], ev["event"])


def differences(classes, exp, got, stale=None):
    """Why printed event @got is not expected event @exp, in words.
    @stale: the strings a reader may print for an empty one (see
    stale_empty_strings()), or None."""
    diffs = []
    cls = classes[exp["event"]]
    if got["name"] != exp["event"]:
        return ["event %r, expected %r" % (got["name"], exp["event"])]
    want_ll = None if cls["loglevel"] < 0 else cls["loglevel"]
    if got["loglevel"] != want_ll:
        diffs.append("log level %s, expected %s" % (got["loglevel"], want_ll))
    if got["cpu"] != exp["cpu"]:
        diffs.append("cpu_id %d, expected %d" % (got["cpu"], exp["cpu"]))
    if not exp["lo"] <= got["ts"] <= exp["hi"]:
        diffs.append("timestamp %d outside [%d, %d] read around the emit"
                     " (%+d ns)" % (got["ts"], exp["lo"], exp["hi"],
                                    got["ts"] - (exp["lo"] if got["ts"] <
                                                 exp["lo"] else exp["hi"])))
    want = expected_fields(classes, exp)
    have = [(n, canon(v)) for n, v in got["fields"]]
    if [n for n, _ in have] != [n for n, _ in want]:
        diffs.append("fields %s, expected %s" % ([n for n, _ in have],
                                                 [n for n, _ in want]))
    else:
        for (name, hv), (_, wv) in zip(have, want):
            if hv != wv and not (stale and wv == '""' and hv in stale):
                diffs.append("field %s: printed %s, expected %s" %
                             (name, hv, wv))
    return diffs


def stale_empty_strings(reader, expected, classes):
    """babeltrace2 2.0 prints an empty string field as the value the
    same field had in an earlier event (a bug of its CTF reader; the fix,
    review.lttng.org/c/babeltrace/+/4528, is not in 2.0.4).  With it, an
    empty string may be printed as any string the test wrote; babeltrace
    1.5 still compares it exactly.  None for a reader without the bug."""
    if reader != "babeltrace2":
        return None
    p = subprocess.run(["babeltrace2", "--version"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    m = re.search(rb"Babeltrace (\d+)\.(\d+)", p.stdout)
    if not m or (int(m.group(1)), int(m.group(2))) != (2, 0):
        return None
    texts = set()
    for ev in expected:
        for fd, v in zip(classes[ev["event"]]["fields"], ev["values"]):
            if fd["kind"] == "string":
                texts.add('"%s"' % v)
    return texts


# ---- the stream files -------------------------------------------------------

# struct packet_context after the packet header, as the metadata declares
# it: magic, uuid, stream_id, stream_instance_id, then timestamp_begin,
# timestamp_end, content_size, packet_size, packet_seq_num,
# events_discarded, cpu_id.
PACKET = struct.Struct("<I16sIQQQQQQQI")


def read_packets(path):
    """(seq, events_discarded, bytes) of each packet of a stream file."""
    with open(path, "rb") as f:
        data = f.read()
    packets, off = [], 0
    while off < len(data):
        if len(data) - off < PACKET.size:
            fail("%s: %d bytes left at %d, less than a packet header" %
                 (path, len(data) - off, off))
        (magic, _, _, _, _, _, _, size, seq, discarded,
         _) = PACKET.unpack_from(data, off)
        if magic != 0xC1FC1FC1 or size % 8 or size // 8 < PACKET.size:
            fail("%s: no packet header at %d" % (path, off))
        packets.append((seq, discarded, size // 8))
        off += size // 8
    return packets


def check_streams(trace, stats):
    """What the stream files hold against grb's counters: each file's
    gaps in packet_seq_num add up to packets_discarded, and its last
    packet carries the buffer's refusals.  Returns the gaps babeltrace
    1.5 reports: it prints one warning per packet, the discarded events
    when their count grew, else the lost packets
    (ctf_print_discarded_lost()), so a gap at a packet whose
    events_discarded grew goes unreported."""
    gaps = bt1_gaps = 0
    for buf in stats["buffers"]:
        packets = read_packets(os.path.join(trace, buf["stream"]))
        if not packets:
            fail("stream %s has no packet" % buf["stream"])
        for a, b in zip(packets, packets[1:]):
            if b[0] <= a[0] or b[1] < a[1]:
                fail("stream %s: packet_seq_num %d, events_discarded %d "
                     "after %d, %d" % (buf["stream"], b[0], b[1], a[0],
                                       a[1]))
            gaps += b[0] - a[0] - 1
            if b[1] == a[1]:
                bt1_gaps += b[0] - a[0] - 1
        if packets[-1][1] != buf["lost"]:
            fail("stream %s ends with events_discarded %d; grb refused %d "
                 "on that buffer" % (buf["stream"], packets[-1][1],
                                     buf["lost"]))
    if gaps != stats["stats"]["packets_discarded"]:
        fail("the stream files have %d packets missing from their "
             "packet_seq_num; grb_ctf_get_stats() packets_discarded is %d" %
             (gaps, stats["stats"]["packets_discarded"]))
    return bt1_gaps


# ---- the comparisons --------------------------------------------------------

def check_order(reader, events):
    for a, b in zip(events, events[1:]):
        if b["ts"] < a["ts"]:
            fail("%s: line %d goes back in time (%d after %d):\n  %s" %
                 (reader, b["line"], b["ts"], a["ts"], b["text"]))


def check_events(reader, printed, classes, expected, stale):
    queues = defaultdict(list)
    for ev in sorted(expected, key=lambda e: (e["thread"], e["seq"])):
        queues[ev["thread"]].append(ev)
    heads = {t: 0 for t in queues}
    for got in printed:
        cands = [q[heads[t]] for t, q in queues.items() if heads[t] < len(q)
                 and not differences(classes, q[heads[t]], got, stale)]
        if not cands:
            report_unmatched(reader, got, classes, queues, heads, stale)
        # Events alike in two threads: the one whose bounds end first.
        best = min(cands, key=lambda e: e["hi"])
        heads[best["thread"]] += 1
    missing = [q[heads[t]] for t, q in queues.items() if heads[t] < len(q)]
    if missing:
        fail("%s: %d events committed were not printed, first: %s" %
             (reader, sum(len(q) - heads[t] for t, q in queues.items()),
              "; ".join(describe(e) for e in missing)))


def report_unmatched(reader, got, classes, queues, heads, stale):
    msg = ["%s: line %d matches no thread's next event:\n  %s" %
           (reader, got["line"], got["text"][:400])]
    for t, q in sorted(queues.items()):
        if heads[t] >= len(q):
            continue
        exp = q[heads[t]]
        msg.append("  thread %d next: %s: %s" % (
            t, describe(exp),
            "; ".join(differences(classes, exp, got, stale))))
    # The same event further on: an event missing before it, or the
    # order changed.
    for t, q in sorted(queues.items()):
        for exp in q[heads[t] + 1:]:
            if not differences(classes, exp, got, stale):
                msg.append("  it is %s: %d events of thread %d before it "
                           "were not printed before it" %
                           (describe(exp), exp["seq"] - q[heads[t]]["seq"],
                            t))
                break
    fail("\n".join(msg))


def check_losses(reader, err, stats, bt1_gaps):
    events, packets, unknown = parse_discarded(reader, err)
    if unknown:
        fail("%s reports losses it cannot count (a stream's first packet "
             "has a non-zero events_discarded):\n  %s" %
             (reader, "\n  ".join(unknown[:5])))
    for buf in stats["buffers"]:
        if events.get(buf["stream"], 0) != buf["lost"]:
            fail("%s reports %d discarded events in stream %s; grb refused "
                 "%d on that buffer (full %d, wrap %d, big %d, nesting %d)" %
                 (reader, events.get(buf["stream"], 0), buf["stream"],
                  buf["lost"], buf["lost_full"], buf["lost_wrap"],
                  buf["lost_big"], buf["lost_nesting"]))
    others = set(events) - {b["stream"] for b in stats["buffers"]}
    if others:
        fail("%s reports discarded events in unknown streams %s" %
             (reader, sorted(others)))
    st = stats["stats"]
    if sum(events.values()) != st["events_discarded"]:
        fail("%s reports %d discarded events in all; grb_ctf_get_stats() "
             "events_discarded is %d" %
             (reader, sum(events.values()), st["events_discarded"]))
    want, note = st["packets_discarded"], ""
    if reader == "babeltrace":
        want = bt1_gaps
        note = (" less %d at packets that also discarded events, which "
                "babeltrace 1.5 does not report" %
                (st["packets_discarded"] - want))
    if sum(packets.values()) != want:
        fail("%s reports %d discarded packets (%s); grb_ctf_get_stats() "
             "packets_discarded is %d%s" %
             (reader, sum(packets.values()), dict(packets),
              st["packets_discarded"], note))
    return sum(events.values()), sum(packets.values())


def compare_events(reader, out, err, classes, expected, stats, bt1_gaps):
    printed = parse_events(reader, out)
    stale = stale_empty_strings(reader, expected, classes)
    if stale:
        print("ctf_check: %s 2.0 prints a previous value for an empty "
              "string (its bug): empty strings are compared by babeltrace "
              "1.5 only" % reader)
    check_events(reader, printed, classes, expected, stale)
    check_order(reader, printed)
    if len(printed) != stats["stats"]["events"]:
        fail("%s printed %d events; grb_ctf_get_stats() events is %d" %
             (reader, len(printed), stats["stats"]["events"]))
    return summarize(reader, len(printed),
                     check_losses(reader, err, stats, bt1_gaps), stats)


def summarize(reader, n, losses, stats):
    ne, np_ = losses
    st = stats["stats"]
    extra = ""
    if np_ != st["packets_discarded"]:
        extra = " (of %d: not those at packets that also discarded events)" % (
            st["packets_discarded"])
    return ("%d events, %d discarded events, %d discarded packets%s, as grb "
            "counted" % (n, ne, np_, extra))


def compare_losses(reader, out, err, stats, bt1_gaps):
    printed = parse_events(reader, out)
    last = {}
    for ev in printed:
        f = dict(ev["fields"])
        if ev["name"] != "grb_test:load" or "seq" not in f:
            fail("%s: line %d is not a load event:\n  %s" %
                 (reader, ev["line"], ev["text"]))
        thr, seq = int(f["thread"]), int(f["seq"])
        if thr in last and seq <= last[thr]:
            fail("%s: line %d: thread %d seq %d after seq %d" %
                 (reader, ev["line"], thr, seq, last[thr]))
        last[thr] = seq
    check_order(reader, printed)
    st = stats["stats"]
    want = st["events"] - st["events_overwritten"]
    if len(printed) != want:
        fail("%s printed %d events; grb committed %d, of which %d were "
             "overwritten: %d expected" % (reader, len(printed), st["events"],
                                           st["events_overwritten"], want))
    return summarize(reader, len(printed),
                     check_losses(reader, err, stats, bt1_gaps), stats)


# ---- main -------------------------------------------------------------------

MODES = {
    "events": ["events"],
    "events-perchannel": ["events", "--per-channel"],
    "events-ids": ["events", "--all-ids"],
    "discard": ["discard"],
    "overwrite": ["overwrite"],
}


def run_test(test, mode, work):
    """TEST_CTF in @mode: WORK/trace and WORK/expected.txt."""
    args = MODES[mode]
    cmd = [test, args[0], os.path.join(work, "trace"),
           os.path.join(work, "expected.txt")] + args[1:]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=TEST_TIMEOUT)
    sys.stdout.write(p.stdout.decode("utf-8", "replace"))
    if p.returncode != 0:
        fail("%s exited with %d:\n%s" % (" ".join(cmd), p.returncode,
                                         p.stderr.decode("utf-8", "replace")))


def compare(mode, work, xfail):
    """The trace in WORK/trace against WORK/expected.txt."""
    trace = os.path.join(work, "trace")
    classes, expected, stats = load_expected(os.path.join(work,
                                                          "expected.txt"))
    st = stats["stats"]
    if mode in ("discard", "overwrite"):
        if st["events_discarded"] == 0 and mode == "discard":
            fail("no event was discarded: nothing to compare")
        if st["packets_discarded"] == 0 and mode == "overwrite":
            fail("no packet was overwritten: nothing to compare")
    bt1_gaps = check_streams(trace, stats)
    refused = []
    for reader, cmd in READERS:
        if shutil.which(cmd[0]) is None:
            print("ctf_check: %s is not installed: not compared" % reader)
            continue
        rc, out, err = run_reader(reader, cmd, trace)
        if rc != 0:
            if xfail and any(s in err for s in KNOWN_BUGS[xfail]):
                refused.append(reader)
                continue
            fail("%s %s failed (%d):\n%s" %
                 (reader, trace, rc, "\n".join(err.splitlines()[-15:])))
        if mode in ("discard", "overwrite"):
            summary = compare_losses(reader, out, err, stats, bt1_gaps)
        else:
            summary = compare_events(reader, out, err, classes, expected,
                                     stats, bt1_gaps)
        print("ctf_check: %s: %s: %s" % (mode, reader, summary))
    if xfail and refused:
        print("ctf_check: XFAIL (known bug %s): %s refused the trace" %
              (xfail, ", ".join(refused)))
    elif xfail:
        fail("XPASS: the readers accept the trace and it compares: the bug "
             "%s is fixed, remove --xfail %s (tests/CMakeLists.txt)" %
             (xfail, xfail))


def main(argv):
    args = argv[1:]
    keep = "--keep" in args
    if keep:
        args.remove("--keep")
    xfail = None
    if "--xfail" in args:
        i = args.index("--xfail")
        xfail = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
        if xfail not in KNOWN_BUGS:
            print("ctf_check: unknown bug %r" % xfail, file=sys.stderr)
            return 2
    if len(args) != 2 or args[0] not in MODES:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if shutil.which("babeltrace2") is None:
        print("ctf_check: SKIP: babeltrace2 is not installed "
              "(scripts/install-deps installs it)")
        return SKIP
    work = tempfile.mkdtemp(prefix="grb-ctf-check-")
    try:
        run_test(args[1], args[0], work)
        compare(args[0], work, xfail)
    except Failure as e:
        print("ctf_check: FAIL: %s\n(the trace and expected.txt are kept "
              "in %s)" % (e, work), file=sys.stderr)
        return 1
    if keep:
        print("ctf_check: kept %s" % work)
    else:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
