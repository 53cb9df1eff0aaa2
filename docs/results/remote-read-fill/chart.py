# Throughput over time after the restore (median of the rounds per 500 ms bucket), 50% budget:
# ours with whole files only, ours with the block fill, ForSt. One SVG per key distribution.
# Run from the repository root: python3 docs/results/remote-read-fill/chart.py
import json, glob, re, statistics as st

runs = {}
for f in sorted(glob.glob('docs/results/remote-read-fill/*-r*.json')):
    jar = re.search(r'(nofill|fill)-r\d+\.json', f).group(1)
    for r in json.load(open(f)):
        name = 'ForSt' if r['backend'] == 'forst' else ('ours, + blocks' if jar == 'fill' else 'ours, whole files only')
        runs.setdefault((r['keys'], name), []).append(r)

COLORS = {'ours, + blocks': '#1f77b4', 'ours, whole files only': '#9ecae1', 'ForSt': '#d62728'}
W, H, L, R, T, B = 720, 360, 70, 20, 40, 50
for keys in ('uniform', 'zipf'):
    lines = {}
    for name in COLORS:
        rs = runs.get((keys, name), [])
        if not rs: continue
        n = min(len(r['bucketGets']) for r in rs); ms = rs[0]['bucketMillis']
        lines[name] = [st.median(r['bucketGets'][i] * 1000.0 / ms for r in rs) for i in range(n)]
    top = max(max(v) for v in lines.values()) * 1.1
    n = max(len(v) for v in lines.values()); ms = 500
    x = lambda i: L + (W - L - R) * (i + 1) / n
    y = lambda v: H - B - (H - T - B) * v / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">Gets/s after a restore, local cache 50% of the state, {keys} keys (median of 3 rounds)</text>',
           f'<line x1="{L}" y1="{H-B}" x2="{W-R}" y2="{H-B}" stroke="black"/><line x1="{L}" y1="{T}" x2="{L}" y2="{H-B}" stroke="black"/>']
    for s in range(0, n * ms // 1000 + 1, 5):
        xi = L + (W - L - R) * s * 1000 / (n * ms)
        out.append(f'<text x="{xi:.1f}" y="{H-B+16}" text-anchor="middle">{s} s</text>')
    for k in range(0, 5):
        v = top * k / 4
        out.append(f'<text x="{L-6}" y="{y(v)+4:.1f}" text-anchor="end">{v:,.0f}</text>')
        out.append(f'<line x1="{L}" y1="{y(v):.1f}" x2="{W-R}" y2="{y(v):.1f}" stroke="#eee"/>')
    for j, (name, v) in enumerate(lines.items()):
        pts = ' '.join(f'{x(i):.1f},{y(g):.1f}' for i, g in enumerate(v))
        out.append(f'<polyline fill="none" stroke="{COLORS[name]}" stroke-width="2" points="{pts}"/>')
        out.append(f'<rect x="{W-R-200}" y="{H-B-80+j*18}" width="12" height="3" fill="{COLORS[name]}"/>')
        out.append(f'<text x="{W-R-182}" y="{H-B-74+j*18}">{name}</text>')
    out.append('</svg>')
    open(f'docs/results/remote-read-fill/remote-read-fill-50-{keys}.svg', 'w').write('\n'.join(out))
    print('wrote', keys)
