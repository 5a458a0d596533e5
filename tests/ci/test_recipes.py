#!/usr/bin/python3
"""Runs the CI recipes of docs/ci/ locally and checks what a CI user sees.

Each recipe (docs/ci/github-actions.yml, docs/ci/gitlab-ci.yml) is read
with a real YAML parser (PyYAML, Debian's python3-yaml) and its shell
steps are run in order, in a temporary directory, with this build's
snapfuzz on PATH, through four pipelines:

  A  a push to main: the harness builds, fuzzing finds the planted crash in
     docs/ci/example/kvparse.c, the job fails, and the cache holds the
     corpus and the crash store;
  B  a pull request that changes nothing: from A's cache, the regression
     check fails on the crash that is still there;
  C  a pull request with the fix: the regression check passes (the crash is
     reported fixed) and fuzzing finds nothing;
  D  a pull request that quarantines the crash (the list written by
     `snapfuzz crashes --quarantine ID`, committed as
     .snapfuzz/quarantine.json): the check and the fuzzing pass.

What only exists on the hosted CI is substituted, and said so: steps that
install packages and build snapfuzz (GitHub: the steps with id
install-deps and install-snapfuzz; GitLab: before_script) are replaced by
this build on PATH; GitHub `uses:` steps are checked for being well
formed and emulated (checkout copies the example, the cache actions copy
the cached paths, upload-sarif checks the file is SARIF 2.1.0,
upload-artifact checks the path); the fuzzing budget FUZZ_SECONDS is
shortened (SF_CI_FUZZ_SECONDS, default 6). Options of `snapfuzz run` the
binary under test does not have yet (--sarif, --junit, --source-root:
another branch adds them) are taken out of the commands, and the test says
which.

Environment: SNAPFUZZ_BIN (the binary), SF_SOURCE_ROOT (the repository).
Exit status 0 when every check passed, 1 otherwise.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import yaml

SRC = os.environ["SF_SOURCE_ROOT"]
BIN = os.environ["SNAPFUZZ_BIN"]
FUZZ_SECONDS = os.environ.get("SF_CI_FUZZ_SECONDS", "6")
FAILURES = []

# The line of kvparse.c the fix replaces, and the fix (docs/ci.md).
BUG = ("        if (ref == 1) {\n"
       "                /* The bug: n is not checked against doc->count. */\n")
FIX = ("        if (ref == 1 && n >= doc->count)\n"
       "                ref = -1; /* the fix: only entries parsed so far */\n"
       "        if (ref == 1) {\n")


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


def run_help():
    out = subprocess.run([BIN, "run", "--help"], capture_output=True, text=True).stdout
    return {opt for opt in ("--sarif", "--junit", "--source-root") if opt in out}


SUPPORTED = run_help()


def adapt(script):
    """Takes out of @script's `snapfuzz run` commands the options the binary
    does not have yet (`regress` has --junit of its own)."""
    if "snapfuzz run" not in script:
        return script
    for opt in ("--sarif", "--junit", "--source-root"):
        if opt not in SUPPORTED and opt in script:
            script = re.sub(r"\s+" + opt + r"\s+\S+", "", script)
            print(f"note  {opt} is not in this snapfuzz run yet: taken out of the command")
    return script


def make_repo(root, fixed=False, quarantine=None):
    """The repository a pipeline checks out: the example, maybe fixed,
    maybe with a committed quarantine list."""
    shutil.copytree(os.path.join(SRC, "docs", "ci", "example"),
                    os.path.join(root, "docs", "ci", "example"))
    if fixed:
        path = os.path.join(root, "docs", "ci", "example", "kvparse.c")
        text = open(path).read()
        assert BUG in text, "kvparse.c no longer has the line the fix replaces"
        open(path, "w").write(text.replace(BUG, FIX))
    if quarantine:
        os.makedirs(os.path.join(root, ".snapfuzz"))
        shutil.copy(quarantine, os.path.join(root, ".snapfuzz", "quarantine.json"))
    return root


def shell(script, cwd, env, label):
    """Runs @script as the CI runners do (bash, -e, pipefail); prints it."""
    script = adapt(script)
    p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                       cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    print(f"----  {label}: exit {p.returncode}")
    for line in (p.stdout + p.stderr).splitlines()[-25:]:
        print("      | " + line)
    return p.returncode, p.stdout + p.stderr


def base_env(workdir, extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_"))}
    env["PATH"] = os.path.dirname(BIN) + ":" + env.get("PATH", "/usr/bin:/bin")
    env["CI"] = "true"
    env.update({k: str(v) for k, v in extra.items()})
    env["FUZZ_SECONDS"] = FUZZ_SECONDS
    return env


def copy_paths(paths, src_root, dst_root):
    for p in paths:
        p = p.rstrip("/")
        src = os.path.join(src_root, p)
        if not os.path.isdir(src):
            continue
        dst = os.path.join(dst_root, p)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst)


def crash_dirs(root):
    return [d for d in glob.glob(os.path.join(root, "fuzz-out", "crashes", "*"))
            if os.path.isfile(os.path.join(d, "crash.json"))]


# --- GitHub Actions ---------------------------------------------------------

USES = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@v\d+$")
GH_SUBSTITUTED = {"install-deps", "install-snapfuzz"}


def gh_if(expr, status, event, workdir):
    """The `if:` expressions the recipe uses; anything else is an error."""
    result = True
    for atom in (a.strip() for a in expr.split("&&")):
        m = re.fullmatch(r"github\.event_name\s*(==|!=)\s*'([a-z_]+)'", atom)
        h = re.fullmatch(r"hashFiles\('([^']+)'\)\s*!=\s*''", atom)
        if atom == "always()":
            ok = True
        elif atom == "success()":
            ok = status == "success"
        elif atom == "failure()":
            ok = status == "failure"
        elif m:
            ok = (event == m.group(2)) == (m.group(1) == "==")
        elif h:
            ok = bool(glob.glob(os.path.join(workdir, h.group(1))))
        else:
            raise ValueError(f"the test does not know the condition {atom!r}")
        result = result and ok
    return result


def gh_uses(step, ctx):
    """A `uses:` step: checked, then emulated."""
    uses, w = step["uses"], step.get("with", {}) or {}
    check(bool(USES.match(uses)), f"{uses} is a well-formed action reference")
    name = uses.split("@")[0]
    if name == "actions/checkout":
        shutil.copytree(ctx["repo"], ctx["workdir"], dirs_exist_ok=True)
    elif name in ("actions/cache/restore", "actions/cache/save"):
        paths = w.get("path", "").split()
        check(bool(paths) and "${{" in w.get("key", ""), f"{name} has paths and a key")
        if name.endswith("restore"):
            check(bool(w.get("restore-keys")), "the cache restore falls back to main's")
            src = ctx["cache"].get(ctx["scope"]) or ctx["cache"].get("main")
            if src:
                copy_paths(paths, src, ctx["workdir"])
        else:
            dst = tempfile.mkdtemp(prefix="sf-cache-")
            copy_paths(paths, ctx["workdir"], dst)
            ctx["cache"][ctx["scope"]] = dst
    elif name == "github/codeql-action/upload-sarif":
        path = os.path.join(ctx["workdir"], w.get("sarif_file", ""))
        if check(os.path.isfile(path), "upload-sarif's file exists"):
            doc = json.load(open(path))
            check(doc.get("version") == "2.1.0", "the SARIF file is SARIF 2.1.0")
            ctx["sarif"] = doc
    elif name == "actions/upload-artifact":
        check(bool(w.get("name")) and
              os.path.exists(os.path.join(ctx["workdir"], w.get("path", "-"))),
              "upload-artifact names an artifact and a path that exists")
    else:
        check(False, f"the test knows the action {uses}")


def gh_pipeline(wf, ctx, event):
    """Runs the workflow's job as GitHub would for @event; returns the job's
    status and each step's (label, exit status or 'skipped', output)."""
    job = wf["jobs"]["fuzz"]
    env = base_env(ctx["workdir"], {**wf.get("env", {}), **job.get("env", {}),
                                     "GITHUB_EVENT_NAME": event,
                                     "GITHUB_WORKSPACE": ctx["workdir"],
                                     "RUNNER_TEMP": tempfile.mkdtemp(prefix="sf-runner-")})
    status, steps = "success", []
    for step in job["steps"]:
        label = step.get("name") or step.get("uses")
        if not gh_if(step.get("if", "success()"), status, event, ctx["workdir"]):
            steps.append((label, "skipped", ""))
            continue
        if "uses" in step:
            gh_uses(step, ctx)
            steps.append((label, 0, ""))
            continue
        if step.get("id") in GH_SUBSTITUTED:
            print(f"note  step '{label}' substituted: this build's snapfuzz is on PATH")
            steps.append((label, "substituted", ""))
            continue
        rc, out = shell(step["run"], ctx["workdir"], {**env, **step.get("env", {})}, label)
        if rc != 0:
            status = "failure"
        steps.append((label, rc, out))
    return status, steps


def gh_validate(wf):
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    check(isinstance(on, dict) and "pull_request" in on and "push" in on,
          "github: runs on push and pull_request")
    check(wf.get("permissions", {}).get("security-events") == "write",
          "github: may upload SARIF (security-events: write)")
    ids = {s.get("id") for s in wf["jobs"]["fuzz"]["steps"]}
    check(GH_SUBSTITUTED <= ids, "github: the substituted steps are there")


# --- GitLab CI --------------------------------------------------------------

def gl_validate(doc):
    job = doc["fuzz"]
    check(all("if" in r for r in job.get("rules", [])) and len(job["rules"]) == 2,
          "gitlab: rules for merge requests and the default branch")
    cache = job["cache"]
    check(cache.get("when") == "always" and cache.get("paths") and cache.get("key")
          and cache.get("fallback_keys"), "gitlab: a cache kept even when the job fails")
    check(job["artifacts"]["reports"].get("junit") and job["artifacts"].get("when") == "always",
          "gitlab: JUnit reports, kept when the job fails")
    check(all(isinstance(s, str) for s in job["script"]), "gitlab: script is a list of commands")


def gl_pipeline(doc, ctx, event):
    """Runs the job's script as a GitLab runner would (lines in order, the
    first failure ends it), with its cache restored before and saved after
    (when: always). before_script is substituted."""
    job = doc["fuzz"]
    shutil.copytree(ctx["repo"], ctx["workdir"], dirs_exist_ok=True)
    paths = job["cache"]["paths"]
    src = ctx["cache"].get(ctx["scope"]) or ctx["cache"].get("main")
    if src:
        copy_paths(paths, src, ctx["workdir"])
    print("note  before_script substituted: this build's snapfuzz is on PATH")
    env = base_env(ctx["workdir"], {**doc.get("variables", {}),
                                     "CI_PIPELINE_SOURCE": event,
                                     "CI_DEFAULT_BRANCH": "main",
                                     "CI_COMMIT_REF_SLUG": ctx["scope"]})
    status, steps = "success", []
    for line in job["script"]:
        label = line.strip().splitlines()[0][:60]
        rc, out = shell(line, ctx["workdir"], env, label)
        steps.append((label, rc, out))
        if rc != 0:
            status = "failure"
            break
    dst = tempfile.mkdtemp(prefix="sf-cache-")
    copy_paths(paths, ctx["workdir"], dst)
    ctx["cache"][ctx["scope"]] = dst
    ctx["junit"] = {}
    for name in job["artifacts"]["reports"]["junit"]:
        path = os.path.join(ctx["workdir"], name)
        if os.path.isfile(path):
            root = ET.parse(path).getroot()
            check(root.tag in ("testsuites", "testsuite"), f"gitlab: {name} is JUnit XML")
            ctx["junit"][name] = root
    if "--junit" in SUPPORTED and status == "success":
        check("snapfuzz-junit.xml" in ctx["junit"], "gitlab: the fuzzing's JUnit report exists")
    return status, steps


def junit_count(ctx, name, tag):
    root = ctx.get("junit", {}).get(name)
    return None if root is None else len(root.findall(".//testcase/" + tag))


# --- the four pipelines -----------------------------------------------------

def step_out(steps, word):
    for label, rc, out in steps:
        if word in label:
            return rc, out
    return None, ""


def scenario(kind, doc, tmp):
    pipeline = gh_pipeline if kind == "github" else gl_pipeline
    push, pr = ("push", "pull_request") if kind == "github" else (
        "push", "merge_request_event")
    fuzz_word, regress_word = ("Fuzz", "Regression") if kind == "github" else (
        "snapfuzz run", "CI_PIPELINE_SOURCE")
    cache = {}

    def ctx(name, **repo):
        return {"workdir": os.path.join(tmp, kind, name),
                "repo": make_repo(os.path.join(tmp, kind, name + "-repo"), **repo),
                "cache": cache, "scope": "main" if name == "A" else "pr-" + name}

    print(f"\n== {kind}: A, a push to main")
    a = ctx("A")
    status, steps = pipeline(doc, a, push)
    rc, out = step_out(steps, fuzz_word)
    check(rc == 1 and "crash " in out, f"{kind} A: fuzzing finds the planted crash (exit 1)")
    check(status == "failure", f"{kind} A: the job fails")
    rc, _ = step_out(steps, regress_word)
    check(kind == "gitlab" or rc == "skipped", f"{kind} A: no regression check on a push")
    cached = cache.get("main")
    check(cached and os.listdir(os.path.join(cached, "fuzz-out", "corpus")),
          f"{kind} A: the cache holds the corpus")
    check(cached and len(crash_dirs(cached)) >= 1, f"{kind} A: the cache holds the crash")
    if "--sarif" in SUPPORTED:
        sarif = a.get("sarif") or json.load(open(os.path.join(a["workdir"], "snapfuzz.sarif")))
        check(sum(len(r.get("results", [])) for r in sarif.get("runs", [])) >= 1,
              f"{kind} A: the SARIF file has the crash")

    print(f"\n== {kind}: B, a pull request that changes nothing")
    b = ctx("B")
    status, steps = pipeline(doc, b, pr)
    rc, out = step_out(steps, regress_word)
    check(rc == 1 and "REPRODUCED" in out, f"{kind} B: regress fails on the crash still there")
    check(status == "failure", f"{kind} B: the job fails")
    if kind == "gitlab":
        check(junit_count(b, "regress-junit.xml", "failure") == 1,
              "gitlab B: the JUnit report has the crash as a failed test")
    rc, _ = step_out(steps, fuzz_word)
    check(rc in ("skipped", None), f"{kind} B: nothing runs after the failed check")

    print(f"\n== {kind}: C, a pull request with the fix")
    c = ctx("C", fixed=True)
    status, steps = pipeline(doc, c, pr)
    rc, out = step_out(steps, regress_word)
    check(rc == 0 and re.search(r"^fixed ", out, re.M), f"{kind} C: regress reports it fixed")
    rc, out = step_out(steps, fuzz_word)
    check(rc == 0 and "no crash found" in out, f"{kind} C: fuzzing finds nothing")
    check(status == "success", f"{kind} C: the job passes")
    if kind == "gitlab":
        check(junit_count(c, "regress-junit.xml", "failure") == 0,
              "gitlab C: the JUnit report has no failure")

    print(f"\n== {kind}: D, a pull request that quarantines the crash")
    dev = os.path.join(tmp, kind, "dev")
    copy_paths(["fuzz-out/crashes"], cached, dev)
    crash_id = os.path.basename(crash_dirs(dev)[0])
    p = subprocess.run([BIN, "crashes", "--out", os.path.join(dev, "fuzz-out"),
                        "--quarantine", crash_id, "--reason", "tracked in issue 42"],
                       capture_output=True, text=True)
    if not check(p.returncode == 0, f"{kind} D: snapfuzz crashes --quarantine {crash_id}"):
        return
    d = ctx("D", quarantine=os.path.join(dev, "fuzz-out", "quarantine.json"))
    status, steps = pipeline(doc, d, pr)
    rc, out = step_out(steps, regress_word)
    check(rc == 0 and "quarantined" in out and "tracked in issue 42" in out,
          f"{kind} D: regress passes, the crash quarantined")
    rc, out = step_out(steps, fuzz_word)
    check(rc == 0, f"{kind} D: fuzzing goes on past the known crash and passes")
    check(status == "success", f"{kind} D: the job passes")
    if kind == "gitlab":
        check(junit_count(d, "regress-junit.xml", "skipped") == 1,
              "gitlab D: the JUnit report has the crash as a skipped test")


def main():
    print(f"snapfuzz under test: {BIN} (has {', '.join(sorted(SUPPORTED)) or 'no --sarif/--junit'})")
    tmp = tempfile.mkdtemp(prefix="sf-ci-recipes-")
    wf = yaml.safe_load(open(os.path.join(SRC, "docs", "ci", "github-actions.yml")))
    gh_validate(wf)
    scenario("github", wf, tmp)
    gl = yaml.safe_load(open(os.path.join(SRC, "docs", "ci", "gitlab-ci.yml")))
    gl_validate(gl)
    scenario("gitlab", gl, tmp)
    if FAILURES:
        print(f"\n{len(FAILURES)} checks failed:\n  " + "\n  ".join(FAILURES))
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
