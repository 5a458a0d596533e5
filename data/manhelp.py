#!/usr/bin/env python3
"""The text help2man turns into snapfuzz(1): `snapfuzz --help` and every
command's --help, rewritten into the conventions help2man reads.

    help2man ... 'python3 data/manhelp.py build/app/snapfuzz'

help2man runs this with --help and --version. The commands are the ones
`snapfuzz --help` lists in its usage lines, so a new command gets its
section without an edit here. What help2man expects and our help text
writes differently:
  - the usage block: "Usage: prog ..." then "  or: prog ..." lines, one
    line each (ours wraps long usage lines with indented "[...]" lines);
  - an option is "  --opt ARG  description" with continuation lines at
    the description's column (ours wrap at varying columns): each option
    becomes one line;
  - examples are indented lines starting with "$ ", shown verbatim;
  - a section is a line "*Name*": one per command ("SNAPFUZZ RUN").
"""
import re
import subprocess
import sys


def run(sf, *args):
    p = subprocess.run([sf, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    return p.stdout


def join_usage(lines):
    """Usage lines: a continuation ("   [--x]") is joined to its line."""
    out = []
    for line in lines:
        s = line.strip()
        if s.startswith("usage:"):
            s = s[len("usage:"):].strip()
        if out and not s.startswith("snapfuzz"):
            out[-1] += " " + s
        else:
            out.append(s)
    return out


LABEL = re.compile(r"^[a-z][a-z ]*: ")
OPTION = re.compile(r"^ {1,10}(-\S.*?)(?: {2,}(\S.*))?$")


def body(lines, options=True):
    """The help text after its usage block, as help2man paragraphs (the
    main help has no option lines: an indented "--x" there continues a
    sentence)."""
    items = []  # (kind, text): 'para', 'opt', 'ex', 'head'
    examples = False
    for line in lines:
        if not line.strip():
            examples = False
            items.append(("blank", ""))
            continue
        m = re.match(r"^examples?:\s*(.*)$", line)
        if m:
            examples = True
            items.append(("head", "examples:"))
            if m.group(1):
                items.append(("ex", m.group(1)))
            continue
        if examples and line.startswith(" "):
            items.append(("ex", line.strip()))
            continue
        examples = False
        m = OPTION.match(line) if options else None
        if m:
            items.append(("opt", [m.group(1).strip(), (m.group(2) or "").strip()]))
            continue
        last = items[-1][0] if items else None
        if line.startswith(" ") and last == "opt":
            items[-1][1][1] = (items[-1][1][1] + " " + line.strip()).strip()
            continue
        # A paragraph goes on over wrapped lines, indented or not, until a
        # line that starts with a label ("run: ...", "exit status: ...").
        if last == "para" and (line.startswith(" ") or not LABEL.match(line)):
            items[-1] = ("para", items[-1][1] + " " + line.strip())
            continue
        items.append(("para", line.strip()))
    out = []
    for kind, text in items:
        if kind == "blank":
            if out and out[-1] != "":
                out.append("")
        elif kind == "head":
            if out and out[-1] != "":
                out.append("")
            out.append(text)
        elif kind == "ex":
            out.append("  $ " + text)
        elif kind == "opt":
            if out and out[-1] != "" and not out[-1].startswith("  -"):
                out.append("")
            spec, desc = text
            out.append("  %-22s  %s" % (spec, desc) if desc else "  " + spec)
        else:
            if out and out[-1] != "":
                out.append("")
            out.append(text)
    return out


def split_usage(text):
    lines = text.rstrip("\n").split("\n")
    n = 0
    while n < len(lines) and lines[n].strip() and (
            n == 0 or lines[n].startswith(" ")):
        n += 1
    return lines[:n], lines[n:]


def commands(main_help):
    found = []
    for line in main_help.split("\n"):
        m = re.match(r"^(?:usage:)?\s+snapfuzz ([a-z][a-z-]*)\b", line)
        if m and m.group(1) not in found:
            found.append(m.group(1))
    return found


def main():
    sf = sys.argv[1]
    # help2man runs the command it is given with --help, then --version.
    if len(sys.argv) > 2 and sys.argv[2] == "--version":
        print(run(sf, "--version").strip())
        return
    main_help = run(sf, "--help")
    usage, rest = split_usage(main_help)
    syn = join_usage(usage)
    print("Usage: " + syn[0])
    for s in syn[1:]:
        print("  or: " + s)
    print()
    print("\n".join(body(rest, options=False)))
    for cmd in commands(main_help):
        print()
        print("*snapfuzz %s*" % cmd)
        usage, rest = split_usage(run(sf, cmd, "--help"))
        for s in join_usage(usage):
            print(s)
        print()
        print("\n".join(body(rest)))


if __name__ == "__main__":
    main()
