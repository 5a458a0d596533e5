#!/usr/bin/env python3
"""Reads a results directory written by run.sh (or ttf.sh) and prints the
table; draws one coverage-over-time PNG per harness with gnuplot.

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


def plot(hdir, h, data):
    """data: {fuzzer: {t: [branches...]}} -> coverage.png via gnuplot."""
    cmds = []
    for i, f in enumerate(FUZZERS):
        if f not in data:
            continue
        path = os.path.join(hdir, 'cov_%s.dat' % f)
        with open(path, 'w') as out:
            for t in sorted(data[f]):
                xs = data[f][t]
                out.write('%d %g %g %g\n' % (t, med(xs), min(xs), max(xs)))
        color = ['#d62728', '#1f77b4', '#2ca02c'][i]
        cmds.append("'%s' u ($1/60):3:4 w filledcurves lc rgb '%s' fs transparent solid 0.15 noborder notitle" % (path, color))
        cmds.append("'%s' u ($1/60):2 w linespoints lw 2 pt 7 ps 0.6 lc rgb '%s' title '%s (median, band: min-max)'" % (path, color, LABEL[f]))
    if not cmds:
        return None
    png = os.path.join(hdir, 'coverage.png')
    script = '\n'.join([
        "set terminal pngcairo size 900,560 font 'sans,11'" ,
        "set output '%s'" % png,
        'set title "%s: branches covered (llvm-cov on each fuzzer corpus), one core each" noenhanced' % h,
        "set xlabel 'minutes'", "set ylabel 'branches covered'",
        "set key bottom right noenhanced", "set grid",
        'plot ' + ', '.join(cmds)])
    try:
        subprocess.run(['gnuplot'], input=script.encode(), check=True,
                       stderr=subprocess.PIPE)
    except (OSError, subprocess.CalledProcessError) as e:
        script = script.replace('pngcairo', 'png').replace(" font 'sans,11'", '')
        try:
            subprocess.run(['gnuplot'], input=script.encode(), check=True)
        except (OSError, subprocess.CalledProcessError):
            print('report: gnuplot failed: %s' % e, file=sys.stderr)
            return None
    return png


def main():
    res = sys.argv[1]
    cfg = open(os.path.join(res, 'config')).read() if os.path.exists(os.path.join(res, 'config')) else ''
    print('results: %s' % res)
    print(cfg.strip())
    print()
    hdr = '%-12s %-9s %22s %9s %9s %8s %22s %20s' % (
        'harness', 'fuzzer', 'exec/s [min-max]', 'x libFuz', 'x AFL++', 'x bare',
        'branches [min-max]', 'lines [min-max]')
    print(hdr)
    print('-' * len(hdr))
    pngs = []
    for h in sorted(os.listdir(res)):
        hdir = os.path.join(res, h)
        if not os.path.isdir(hdir):
            continue
        runs = {f: read_runs(hdir, f) for f in FUZZERS}
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
                xl = '%.2f/%.2f' % (med(eps['snapfuzz']) / med(eps['libfuzzer']) if eps['libfuzzer'] else float('nan'),
                                    ratio_per_trial(sf, runs['libfuzzer'], lambda r: r['eps']))
                xa = '%.2f/%.2f' % (med(eps['snapfuzz']) / med(eps['afl']) if eps['afl'] else float('nan'),
                                    ratio_per_trial(sf, runs['afl'], lambda r: r['eps']))
                xb = '%.2f' % (med(eps['snapfuzz']) / med(bare)) if bare else '-'
            br = [c[1] for c in final[f]]
            ln = [c[2] for c in final[f]]
            print('%-12s %-9s %9s %12s %9s %9s %8s %8s %13s %7s %12s' % (
                h, LABEL[f], fmt(med(eps[f])), rng(eps[f]), xl, xa, xb,
                fmt(med(br)), rng(br), fmt(med(ln)), rng(ln)))
        if bare:
            print('%-12s %-9s %9s %12s' % (h, 'bare loop', fmt(med(bare)), rng(bare)))
        # coverage over time, per fuzzer: {t: [branches of each trial]}
        data = {}
        for f in FUZZERS:
            for r in runs[f].values():
                for t, b, _ in r['cov']:
                    data.setdefault(f, {}).setdefault(t, []).append(b)
        png = plot(hdir, h, data)
        if png:
            pngs.append(png)
    print()
    print('x libFuz, x AFL++: snapfuzz exec/s over the peer\'s, as ratio of medians / median of per-trial ratios;')
    print('x bare: snapfuzz exec/s over the bare loop calling the same .so over snapfuzz\'s final corpus.')
    for p in pngs:
        print('plot: %s' % p)


main()
