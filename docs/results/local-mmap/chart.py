# Bar chart (SVG) of steady gets/s at a 100% local cache budget: median of the rounds, whiskers
# min-max, from summary-style data computed by analyze.py's logic. Run from the repository root:
#   python3 docs/results/local-mmap/chart.py > docs/results/local-mmap/steady-gets.svg
import json, glob, statistics as st, re
runs = {}
for f in sorted(glob.glob('docs/results/local-mmap/mmap-*-r*.json')):
    mode, rnd = re.search(r'mmap-(on|off)-r(\d+)', f).groups()
    for r in json.load(open(f)):
        b = r['bucketGets']; tail = b[int(len(b) * 0.7):]
        name = 'rocksdb' if r['backend'] == 'rocksdb' else ('mapped' if mode == 'on' else 'pread')
        runs.setdefault((r['keys'], name), []).append(st.median(tail) * 1000.0 / r['bucketMillis'])
names = [('pread', 'ours, system calls', '#9ecae9'), ('mapped', 'ours, mapped (default)', '#1f77b4'),
         ('rocksdb', 'RocksDB, all local', '#59a14f')]
W, H, left, top, plot_h = 640, 360, 70, 40, 250
ymax = 500_000
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">Steady gets/s after a restore, local cache 100% of the state (5 rounds; median, min-max)</text>']
for i in range(0, 6):
    v = ymax * i / 5; y = top + plot_h - plot_h * v / ymax
    out.append(f'<line x1="{left}" y1="{y}" x2="{W-20}" y2="{y}" stroke="#ddd"/>')
    out.append(f'<text x="{left-6}" y="{y+4}" text-anchor="end">{int(v/1000)}k</text>')
group_w = (W - left - 40) / 2
for g, keys in enumerate(('uniform', 'zipf')):
    gx = left + 20 + g * group_w
    out.append(f'<text x="{gx + group_w/2 - 20}" y="{top+plot_h+20}" text-anchor="middle">{keys} keys</text>')
    for j, (n, label, colour) in enumerate(names):
        v = runs[(keys, n)]; med = st.median(v)
        x = gx + j * 70; h = plot_h * med / ymax; y = top + plot_h - h
        out.append(f'<rect x="{x}" y="{y}" width="55" height="{h}" fill="{colour}"/>')
        lo = top + plot_h - plot_h * min(v) / ymax; hi = top + plot_h - plot_h * max(v) / ymax
        out.append(f'<line x1="{x+27.5}" y1="{lo}" x2="{x+27.5}" y2="{hi}" stroke="#333"/>')
        out.append(f'<text x="{x+27.5}" y="{y-4 if y-4 < hi-2 else hi-4}" text-anchor="middle" font-size="10">{med/1000:.0f}k</text>')
for j, (n, label, colour) in enumerate(names):
    out.append(f'<rect x="{left + j*180}" y="{H-22}" width="12" height="12" fill="{colour}"/>')
    out.append(f'<text x="{left + j*180 + 16}" y="{H-12}">{label}</text>')
out.append('</svg>')
print('\n'.join(out))
