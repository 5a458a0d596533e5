#!/usr/bin/env python3
"""Reads a results directory written by run.sh (or ttf.sh) and prints the
table; draws one coverage-over-time PNG per harness with gnuplot.
Everything it writes goes into RESULTS_DIR (run.sh's default,
bench/real/results/, is ignored by git); summary.md and summary.png are
what a published report copies to bench/results/<run>/.

usage: bench/real/report.py RESULTS_DIR

Per harness and fuzzer: exec/s per core (median of the trials, min-max in
brackets), the ratios snapfuzz/libFuzzer and snapfuzz/AFL++ (of the medians,
and the median of the per-trial ratios: trial n of every fuzzer ran back to
back, so that ratio sees the least drift in machine load), snapfuzz against
the bare loop, and branch/line coverage measured by the independent
llvm-cov build at the end of the run (median, min-max).
"""
import os, re, statistics, subprocess, sys

FUZZERS = ['snapfuzz', 'libfuzzer', 'afl']
LABEL = {'snapfuzz': 'snapfuzz', 'libfuzzer': 'libFuzzer', 'afl': 'AFL++'}


def med(xs):
    return statistics.median(xs) if xs else float('nan')


def rng(xs):
    return '[%s-%s]' % (fmt(min(xs)), fmt(max(xs))) if xs else ''


def fmt(x):
    if x != x:
        return '-'
    return '%.0f' % x if abs(x) >= 100 else '%.2f' % x


def read_runs(hdir, f):
    """{trial: {'eps': float, 'cov': [(t, branches, lines)]}}"""
    runs = {}
    fdir = os.path.join(hdir, f)
    if not os.path.isdir(fdir):
        return runs
    for n in sorted(os.listdir(fdir)):
        d = os.path.join(fdir, n)
        try:
            kv = dict(x.split('=') for x in open(os.path.join(d, 'execs')).read().split())
        except OSError:
            continue
        r = {'eps': float(kv['execs']) / float(kv['duration']), 'cov': []}
        try:
            # One line per snapshot time; should a time appear twice (a
            # periodic snapshot at the very end next to the final one), the
            # larger one is the complete corpus.
            best = {}
            for line in open(os.path.join(d, 'coverage')):
                t, br, ln = (int(x) for x in line.split()[:3])
                best[t] = max(best.get(t, (0, 0)), (br, ln))
            r['cov'] = [(t,) + best[t] for t in sorted(best)]
        except OSError:
            pass
        runs[n] = r
    return runs


def ratio_per_trial(a, b, key):
    xs = [key(a[n]) / key(b[n]) for n in a if n in b and key(b[n]) > 0]
    return med(xs)


def write_dat(hdir, data):
    """data: {fuzzer: {t: [branches...]}} -> {fuzzer: cov_<fuzzer>.dat}, each
    line "t median min max" over the trials."""
    paths = {}
    for f in FUZZERS:
        if f not in data:
            continue
        path = os.path.join(hdir, 'cov_%s.dat' % f)
        with open(path, 'w') as out:
            for t in sorted(data[f]):
                xs = data[f][t]
                out.write('%d %g %g %g\n' % (t, med(xs), min(xs), max(xs)))
        paths[f] = path
    return paths


COLOR = {'snapfuzz': '#d62728', 'libfuzzer': '#1f77b4', 'afl': '#2ca02c'}


def plot_cmds(paths, keys=True):
    cmds = []
    for f in FUZZERS:
        if f not in paths:
            continue
        cmds.append("'%s' u ($1/60):3:4 w filledcurves lc rgb '%s' fs transparent solid 0.2 noborder notitle"
                    % (paths[f], COLOR[f]))
        cmds.append("'%s' u ($1/60):2 w linespoints lw 2 pt 7 ps 0.6 lc rgb '%s' %s"
                    % (paths[f], COLOR[f],
                       "title '%s median, band min-max'" % LABEL[f] if keys else 'notitle'))
    return cmds


def gnuplot(script):
    try:
        subprocess.run(['gnuplot'], input=script.encode(), check=True,
                       stderr=subprocess.PIPE)
        return True
    except (OSError, subprocess.CalledProcessError) as e:
        print('report: gnuplot failed: %s' % (getattr(e, 'stderr', b'') or e), file=sys.stderr)
        return False


TERMS = {'png': "pngcairo size 900,560 font 'sans,11'",
         'svg': "svg size 900,560 dynamic font 'sans,11'"}


def plot(hdir, h, paths):
    """coverage.png and coverage.svg: branches over minutes, per fuzzer."""
    cmds = plot_cmds(paths)
    if not cmds:
        return []
    out = []
    for ext, term in TERMS.items():
        f = os.path.join(hdir, 'coverage.' + ext)
        if gnuplot('\n'.join([
                'set terminal ' + term, "set output '%s'" % f,
                'set title "%s: branches covered (llvm-cov over each corpus snapshot)" noenhanced' % h,
                "set xlabel 'minutes'", "set ylabel 'branches covered'",
                'set key bottom right noenhanced', 'set grid',
                'plot ' + ', '.join(cmds)])):
            out.append(f)
    return out


def plot_all(res, panels):
    """summary.png/svg: one panel per harness, side by side."""
    if not panels:
        return []
    cols = 2 if len(panels) > 1 else 1
    rows = (len(panels) + cols - 1) // cols
    out = []
    for ext, term in TERMS.items():
        term = term.replace('900,560', '%d,%d' % (620 * cols, 400 * rows + 40))
        f = os.path.join(res, 'summary.' + ext)
        lines = ['set terminal ' + term, "set output '%s'" % f,
                 'set multiplot layout %d,%d title "branches covered (llvm-cov) against minutes: median of the trials, band from worst to best; t = 0 is the seeds"'
                 % (rows, cols),
                 'set grid', 'set key bottom right noenhanced font ",9"', "set xlabel 'minutes'"]
        for h, paths in panels:
            lines += ['set title "%s" noenhanced' % h, 'plot ' + ', '.join(plot_cmds(paths))]
        lines.append('unset multiplot')
        if gnuplot('\n'.join(lines)):
            out.append(f)
    return out


def ttf_table(res):
    """The table ttf.sh wrote, as markdown rows, if RES has one."""
    path = os.path.join(res, 'table')
    cfg = os.path.join(res, 'config')
    if not os.path.exists(path) or not os.path.exists(cfg) or not open(cfg).read().startswith('cap='):
        return None
    rows = []
    for line in open(path).read().splitlines()[1:]:
        m = re.match(r'(.{14}) (.{13}) +(\S+) +(\d+/\d+) +(.*)', line)
        if m:
            rows.append('| %s | %s | %s | %s | %s |' % tuple(x.strip() for x in m.groups()))
    return rows


def main():
    res = sys.argv[1]
    cfgp = os.path.join(res, 'config')
    cfg = open(cfgp).read() if os.path.exists(cfgp) else ''
    print('results: %s' % res)
    print(cfg.strip())
    print()
    md = ['# bench/real results: %s' % os.path.basename(os.path.normpath(res)), '',
          '```', cfg.strip(), '```', '']
    ttf = ttf_table(res)
    if ttf is not None:
        md += ['Time to find (seconds to the first crash; median over the trials, a trial',
               'that did not find it counts as the cap):', '',
               '| guard | fuzzer | median s | found | times (s) |', '|---|---|---|---|---|'] + ttf
        with open(os.path.join(res, 'summary.md'), 'w') as out:
            out.write('\n'.join(md) + '\n')
        print(open(os.path.join(res, 'table')).read())
        return
    hdr = '%-14s %-9s %22s %9s %9s %8s %22s %20s' % (
        'harness', 'fuzzer', 'exec/s [min-max]', 'x libFuz', 'x AFL++', 'x bare',
        'branches [min-max]', 'lines [min-max]')
    print(hdr)
    print('-' * len(hdr))
    md += ['| harness | fuzzer | exec/s (median) | [min-max] | x libFuz | x AFL++ | x bare '
           '| branches (median) | [min-max] | lines (median) | [min-max] |',
           '|---|---|--:|---|--:|--:|--:|--:|---|--:|---|']
    plots, panels = [], []
    for h in sorted(os.listdir(res)):
        hdir = os.path.join(res, h)
        if not os.path.isdir(hdir):
            continue
        runs = {f: read_runs(hdir, f) for f in FUZZERS}
        if not any(runs.values()):
            continue
        bare = []
        if os.path.exists(os.path.join(hdir, 'bare')):
            for line in open(os.path.join(hdir, 'bare')):
                m = re.search(r'= (\d+) exec/s', line)
                if m:
                    bare.append(float(m.group(1)))
        eps = {f: [r['eps'] for r in runs[f].values()] for f in FUZZERS}
        final = {f: [r['cov'][-1] for r in runs[f].values() if r['cov']] for f in FUZZERS}
        sf = runs['snapfuzz']
        for f in FUZZERS:
            if not runs[f]:
                continue
            xl = xa = xb = ''
            if f == 'snapfuzz':
                xl, xa = (('%.2f/%.2f' % (med(eps['snapfuzz']) / med(eps[p]),
                                          ratio_per_trial(sf, runs[p], lambda r: r['eps'])))
                          if eps[p] and med(eps[p]) > 0 else '-' for p in ('libfuzzer', 'afl'))
                xb = '%.2f' % (med(eps['snapfuzz']) / med(bare)) if bare and med(bare) > 0 else '-'
            br = [c[1] for c in final[f]]
            ln = [c[2] for c in final[f]]
            print('%-14s %-9s %9s %12s %9s %9s %8s %8s %13s %7s %12s' % (
                h, LABEL[f], fmt(med(eps[f])), rng(eps[f]), xl, xa, xb,
                fmt(med(br)), rng(br), fmt(med(ln)), rng(ln)))
            md.append('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                h, LABEL[f], fmt(med(eps[f])), rng(eps[f]), xl, xa, xb,
                fmt(med(br)), rng(br), fmt(med(ln)), rng(ln)))
        if bare:
            print('%-14s %-9s %9s %12s' % (h, 'bare loop', fmt(med(bare)), rng(bare)))
            md.append('| %s | bare loop | %s | %s | | | | | | | |' % (h, fmt(med(bare)), rng(bare)))
        # coverage over time, per fuzzer: {t: [branches of each trial]}
        data = {}
        for f in FUZZERS:
            for r in runs[f].values():
                for t, b, _ in r['cov']:
                    data.setdefault(f, {}).setdefault(t, []).append(b)
        paths = write_dat(hdir, data)
        panels.append((h, paths))
        plots += plot(hdir, h, paths)
    plots = plot_all(res, panels) + plots
    notes = ["x libFuz, x AFL++: snapfuzz exec/s over the peer's, as ratio of medians / median of per-trial ratios;",
             "x bare: snapfuzz exec/s over the bare loop calling the same .so over snapfuzz's final corpus;",
             'branches, lines: llvm-cov over the seeds plus the final corpus, at the end of the run.']
    print()
    for n in notes:
        print(n)
    md += [''] + notes + ['']
    # summary.md embeds summary.png only: a published report
    # (bench/results/<run>/) keeps summary.md and summary.png, nothing else.
    for p in plots:
        print('plot: %s' % p)
        if os.path.relpath(p, res) == 'summary.png':
            md.append('![all harnesses](summary.png)')
    with open(os.path.join(res, 'summary.md'), 'w') as out:
        out.write('\n'.join(md) + '\n')
    print('summary: %s' % os.path.join(res, 'summary.md'))


main()
