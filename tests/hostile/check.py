#!/usr/bin/env python3
"""Every text output of every command over the hostile-names traces (tests/hostile/gen.py).

usage: KPROF=build/kprof [XMLCHECK=build/tests/xmlcheck] tests/hostile/check.py

analyze in each --format (table, csv, json, markdown, html, svg and its charts), with
--color=always, --stats, -g op, -g module, -g source, --breakdown --launches and --warnings=all,
--memory, folded stacks, a capture --results file of hostile backends/shapes/ops; diff in each
format with a gate that trips, by module and source, and --memory with its gate; analyze --ranks and merge in each of theirs; augment; stdout and
stderr of each, from a trace whose file name holds ESC and a newline.  Asserts: no raw control
byte but LF (and CRLF ending csv records, tab in html/svg), no ESC unless --color=always (and
then only kprof's SGR colour codes), no C1 control or bidi mark raw; markdown tables keep
their column count on every row and nothing but the title starts with '**'; csv parses with
the header's width on every row and no cell starts with = + @ tab CR, or '-' not a number
(kprof writes those quoted with a leading "'"); html/svg hold kprof's one <script> and no tag
from a name, and are well-formed (xmlcheck); json parses and keeps names exactly.
"""
import csv
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402

KPROF = os.path.abspath(os.environ.get("KPROF", os.path.join(HERE, "../../build/kprof")))
XMLCHECK = os.environ.get("XMLCHECK", "") and os.path.abspath(os.environ["XMLCHECK"])
ENV = dict(os.environ, LC_ALL="C", NO_COLOR="1", TZ="UTC")
ENV.pop("KPROF_DEVICE_DB", None)
# C1 controls, bidi marks and overrides, line/paragraph separators, as UTF-8
HIDDEN = re.compile("[\u0080-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
SGR = re.compile(rb"\x1b\[(3[0-9])?m")

failures = []
checked = 0


def fail(what, why):
    failures.append("FAIL %s: %s" % (what, why))


def run(args, stdin=None):
    p = subprocess.run([KPROF] + args, env=ENV, stdin=stdin, capture_output=True)
    return p.returncode, p.stdout, p.stderr


def check_bytes(what, data, allow=b"\n", color=False):
    """No raw control byte but those in @allow; ESC only as SGR when @color."""
    if color:
        data = SGR.sub(b"", data)
    for i, c in enumerate(data):
        if (c < 0x20 or c == 0x7F) and bytes([c]) not in allow:
            fail(what, "raw control byte 0x%02x at %d: %r" % (c, i, data[max(0, i - 30):i + 10]))
            return False
    m = HIDDEN.search(data.decode("utf-8", "replace"))
    if m:
        fail(what, "raw U+%04X (C1 control or bidi mark)" % ord(m.group()))
        return False
    return True


def check_text(what, out, err, color=False):
    global checked
    checked += 1
    check_bytes(what + " stdout", out, color=color)
    check_bytes(what + " stderr", err)


def check_markdown(what, out):
    text = out.decode()
    width = None
    for k, line in enumerate(text.split("\n")):
        if line.startswith("**") and k > 0:
            fail(what, "line %d starts with '**': %r" % (k + 1, line[:80]))
        if not line.startswith("|"):
            width = None
            continue
        raw_pipes = len(re.findall(r"(?<!\\)\|", line))
        if width is None:
            width = raw_pipes
        elif raw_pipes != width:
            fail(what, "table row %d has %d cell separators, the header %d: %r"
                 % (k + 1, raw_pipes, width, line[:120]))
            return


def check_csv(what, out):
    rows = list(csv.reader(io.StringIO(out.decode(), newline="")))
    if not rows:
        fail(what, "no rows")
        return
    for k, row in enumerate(rows[1:], 2):
        if len(row) != len(rows[0]):
            fail(what, "row %d has %d cells, the header %d" % (k, len(row), len(rows[0])))
            return
        for cell in row:
            if cell[:1] in ("=", "+", "@", "\t", "\r"):
                fail(what, "row %d: formula cell %r" % (k, cell[:60]))
                return
            if cell[:1] == "-" and len(cell) > 1:
                try:
                    float(cell)
                except ValueError:
                    fail(what, "row %d: formula cell %r" % (k, cell[:60]))
                    return


def check_xml(what, out, path):
    text = out.decode()
    if text.count("<script") > 1 or text.count("</script>") > 1:
        fail(what, "a name's <script> or </script> written raw")
    for tag in ("<b>", "</b>", "<script>alert"):
        if tag in text:
            fail(what, "a name's %s written raw" % tag)
    # a tooltip's lines are kprof's: a name's LF is escaped, so no line of a <title> starts
    # with what follows a LF in a hostile name (a forged "**kprof: no regressions**" line)
    # (the text after the LF, printable ASCII only: kprof escapes the rest, "\u202e")
    forged = ["".join(c for c in n.split("\n", 1)[1] if " " <= c <= "~")[:16]
              for n in gen.NAMES + [gen.DEVICE] if "\n" in n]
    tips = re.findall(r"<title>(.*?)</title>", text, re.S) + \
        re.findall(r' title="([^"]*)"', text)
    for tip in tips:
        for f in forged:
            if "\n" + html.escape(f, quote=True).replace("&#x27;", "&#39;") in tip:
                fail(what, "a name's LF starts a tooltip line: %r" % tip[:80])
    if XMLCHECK:
        with open(path, "wb") as f:
            f.write(out)
        if subprocess.run([XMLCHECK, path], capture_output=True).returncode:
            fail(what, "not well-formed xml (%s)" % XMLCHECK)


def json_names(doc, acc):
    if isinstance(doc, dict):
        for v in doc.values():
            json_names(v, acc)
    elif isinstance(doc, list):
        for v in doc:
            json_names(v, acc)
    elif isinstance(doc, str):
        acc.add(doc)
    return acc


def check_json(what, out, names=()):
    try:
        doc = json.loads(out)
    except ValueError as e:
        fail(what, "json does not parse: %s" % e)
        return None
    strings = json_names(doc, set())
    for n in names:
        if n not in strings:
            fail(what, "the name %r is not kept exactly" % n[:40])
    return doc


def one(what, args, kind, tmp, color=False, stdin=None, names=(), status=(0, 1)):
    rc, out, err = run(args, stdin)
    if rc not in status:
        fail(what, "exit %d: %r" % (rc, err[-300:]))
    if kind in ("html", "svg"):
        check_bytes(what + " stdout", out, allow=b"\n\t")
        check_bytes(what + " stderr", err)
        check_xml(what, out, os.path.join(tmp, "out." + kind))
        global checked
        checked += 1
        return out
    if kind == "csv":
        # CRLF ends each record (RFC 4180): a CR anywhere else is raw
        if re.search(rb"\r(?!\n)", out):
            fail(what + " stdout", "a CR not ending a record")
        out = out.replace(b"\r\n", b"\n")
    check_text(what, out, err, color=color)
    if kind == "markdown":
        check_markdown(what, out)
    elif kind == "csv":
        check_csv(what, out)
    elif kind == "json":
        check_json(what, out, names)
    return out


def main():
    tmp = tempfile.mkdtemp(prefix="kprof-hostile-")
    try:
        for name, scale in (("base.json", 1.0), ("new.json", 2.0)):
            with open(os.path.join(tmp, name), "w") as f:
                json.dump(gen.trace(scale), f, ensure_ascii=False)
        # the file name itself is hostile: ESC, a newline, a bidi override
        bad = os.path.join(tmp, "trace\x1b[2J\nname\u202e.json")
        shutil.copy(os.path.join(tmp, "base.json"), bad)
        new = os.path.join(tmp, "new.json")
        names = [n.replace("\x00", "\ufffd") for n in gen.NAMES if len(n) < 200]
        for fmt in ("table", "csv", "json", "markdown", "html", "svg"):
            one("analyze -f " + fmt, ["analyze", "-n", "0", "-f", fmt, bad], fmt, tmp,
                names=names)
            one("diff -f " + fmt, ["diff", "-n", "0", "--fail-above", "5", "-f", fmt, bad, new],
                fmt, tmp, names=names)
            one("analyze --memory -f " + fmt, ["analyze", "--memory", "-n", "0", "-f", fmt, bad],
                fmt, tmp, names=names)
        for c in ("roofline", "timeline", "top", "flame", "memory"):
            one("analyze -f svg --chart " + c, ["analyze", "-f", "svg", "--chart", c, bad], "svg",
                tmp)
        for c in ("waterfall", "dumbbell"):
            one("diff -f svg --chart " + c, ["diff", "-f", "svg", "--chart", c, bad, new], "svg",
                tmp)
        one("analyze --color=always", ["analyze", "--color=always", bad], "table", tmp,
            color=True)
        one("diff --color=always", ["diff", "--color=always", bad, new], "table", tmp,
            color=True)
        for extra in (["--stats", "--warnings=all"], ["-g", "op"], ["-g", "op-shape"], ["-g", "module"],
                      ["-g", "source"], ["--breakdown", "--launches"], ["--name", "full"]):
            for fmt in ("table", "markdown", "csv"):
                one("analyze %s -f %s" % (" ".join(extra), fmt),
                    ["analyze", "-f", fmt] + extra + [bad], fmt, tmp)
        # folded stacks: one "frame;frame NS" line each, a name's ';' and controls escaped
        for g in ("module", "source"):
            out = one("analyze -g %s -f folded" % g, ["analyze", "-g", g, "-f", "folded", bad],
                      "folded", tmp)
            for line in out.decode("utf-8", "replace").splitlines():
                if not re.fullmatch(r"\S.* [0-9]+", line):
                    fail("analyze -g %s -f folded" % g, "not a folded line: %r" % line[:80])
        for key in ("module", "source"):
            for fmt in ("table", "csv", "json", "markdown"):
                one("diff --key %s -f %s" % (key, fmt),
                    ["diff", "-n", "0", "--key", key, "-f", fmt, bad, new], fmt, tmp)
        for fmt in ("table", "csv", "json", "markdown", "html"):
            one("diff --memory -f " + fmt,
                ["diff", "--memory", "--fail-above-mem", "5", "-f", fmt, bad, new], fmt, tmp)
        # capture's results file (analyze --results): backends, shapes and ops named hostile
        res = os.path.join(tmp, "results.json")
        with open(res, "w") as f:
            json.dump(gen.results(), f, ensure_ascii=False)
        for fmt in ("table", "csv", "json", "markdown", "html", "svg"):
            one("analyze --results -f " + fmt, ["analyze", "--results", res, "-f", fmt], fmt,
                tmp, status=(0,))
        with open(bad, "rb") as f:
            one("analyze - (stdin)", ["analyze", "-"], "table", tmp, stdin=f)
        # the per-rank view, and merge of its summaries
        summ = os.path.join(tmp, "s\x1b[2J.json")
        rc, out, err = run(["analyze", "--ranks", "-f", "json", "-o", summ, bad])
        check_text("analyze --ranks -o", out, err)
        for fmt in ("table", "csv", "json", "markdown"):
            one("analyze --ranks -f " + fmt, ["analyze", "--ranks", "-f", fmt, bad, new], fmt,
                tmp)
            one("merge -f " + fmt, ["merge", "-f", fmt, summ, summ], fmt, tmp)
        # a summary whose ranks carry warnings of hostile kinds and messages (kprof merge
        # prints them on stderr and lists them in json)
        with open(summ, encoding="utf-8") as f:
            sj = json.load(f)
        for r in sj.get("ranks", []):
            r["warnings"] = [{"kind": n, "count": 3,
                              "messages": ["at: warning: m" + n, "m" + n]} for n in gen.NAMES]
        wsumm = os.path.join(tmp, "warned.json")
        with open(wsumm, "w", encoding="utf-8") as f:
            json.dump(sj, f, ensure_ascii=True)
        # kinds and messages come back whole in json (C strings: a NUL ends them)
        kept = [p + n for n in gen.NAMES if "\x00" not in n for p in ("", "m")]
        for fmt in ("table", "csv", "json", "markdown"):
            one("merge (hostile warnings) -f " + fmt, ["merge", "-f", fmt, wsumm], fmt, tmp,
                names=kept if fmt == "json" else ())
        rc, out, err = run(["merge", wsumm])
        # a line per kind, as analyze prints them (a long one cut, a NUL ending a text)
        if err.count(b"\nkprof: ") + err.startswith(b"kprof: ") < len(gen.NAMES) or \
                b"owned title" not in err:
            fail("merge (hostile warnings)", "the ranks' warnings are not all on stderr")
        # augment: the output is the trace again, names as the input wrote them
        aug = os.path.join(tmp, "aug\x1b[2J.json")
        rc, out, err = run(["augment", "-o", aug, bad])
        check_text("augment", out, err)
        if rc != 0:
            fail("augment", "exit %d: %r" % (rc, err[-300:]))
        else:
            with open(aug, "rb") as f:
                check_json("augment output", f.read())
        # errors name the file: a missing one, and -o onto the input
        one("analyze missing", ["analyze", bad + ".missing"], "table", tmp, status=(4,))
        one("analyze -o input", ["analyze", "-o", bad, bad], "table", tmp, status=(2,))
        one("diff -o input", ["diff", "-o", bad, new, bad], "table", tmp, status=(2,))
        one("devices NAME", ["devices", gen.DEVICE], "table", tmp, status=(0,))
        one("devices no match", ["devices", "\x1b[2Jnone\u202e\n"], "table", tmp, status=(3,))
        # errors that quote what was typed: a command, an option, an option's value
        esc = "\x1b]0;title\x07\x1b[2J\u202e\n"
        one("unknown command", [esc], "table", tmp, status=(2,))
        one("unknown option", ["analyze", "--" + esc, bad], "table", tmp, status=(2,))
        for opt in ("--sort", "--group-by", "--format", "--chart", "--top", "--min-pct"):
            one("analyze %s VALUE" % opt, ["analyze", opt, esc, bad], "table", tmp, status=(2,))
        for opt in ("--key", "--fail-above"):
            one("diff %s VALUE" % opt, ["diff", opt, esc, bad, new], "table", tmp, status=(2,))
        one("capture argument", ["capture", "-w", esc], "table", tmp, status=(2, 4))
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print(f)
    if failures:
        print("  hostile: %d of %d outputs failed" % (len(failures), checked))
        return 1
    print("  hostile: %d outputs of every command, hostile names escaped" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
