"""The stylesheet inlined into every HTML report (no external fonts, no JavaScript)."""

CSS = """
:root { --ink:#1d2330; --muted:#5f6b7a; --line:#dde2ea; --bg:#f5f7fa; --card:#fff;
  --bad:#c92a2a; --ok:#2b8a3e; --warn:#b35c00; --accent:#1c5fb8; --obs:#d9480f; --band:#a5c8f0;
  --yday:#7b8494; --alert:#7048e8; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font:15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans",
  sans-serif; }
main { max-width:1240px; margin:0 auto; padding:24px 28px 48px; }
header.top { background:var(--card); border:1px solid var(--line);
  border-left:6px solid var(--bad);
  border-radius:8px; padding:18px 22px; margin-bottom:20px; }
header.top.healthy { border-left-color:var(--ok); }
header.top.unjudged { border-left-color:var(--warn); }
.brand { font-size:12px; letter-spacing:.08em; text-transform:uppercase; color:var(--muted); }
h1 { font-size:22px; margin:4px 0 6px; }
h2 { font-size:17px; margin:28px 0 10px; padding-bottom:4px;
  border-bottom:2px solid var(--line); }
h3 { font-size:15px; margin:18px 0 6px; }
.meta { color:var(--muted); font-size:13px; }
.badge { display:inline-block; font-size:12px; font-weight:600; padding:1px 8px;
  border-radius:10px;
  background:#eef1f5; color:var(--muted); margin-left:6px; vertical-align:middle; }
.badge.bad { background:#ffe3e3; color:var(--bad); } .badge.ok { background:#d3f9d8;
  color:var(--ok); }
.badge.warn { background:#fff0db; color:var(--warn); }
.scope { display:grid; grid-template-columns:repeat(auto-fill, minmax(260px, 1fr)); gap:10px; }
.scope div, .card { background:var(--card); border:1px solid var(--line); border-radius:8px;
  padding:10px 14px; }
.scope b { display:block; font-size:12px; color:var(--muted); text-transform:uppercase;
  letter-spacing:.04em; }
.scope span { font-size:16px; font-weight:600; } .scope small { display:block;
  color:var(--muted); }
.card { margin-bottom:12px; } .card.root { padding-left:36px; }
.root h3 { margin:0 0 6px; font-size:17px; }
.rank { color:var(--muted); font-weight:600; margin-right:6px; }
.meter { display:inline-block; width:120px; height:8px; background:#eef1f5; border-radius:4px;
  vertical-align:middle; margin:0 6px; overflow:hidden; }
.meter i { display:block; height:100%; background:var(--bad); }
ol.chain { list-style:none; padding:0 0 0 22px; margin:8px 0 8px -22px; display:flex;
  flex-wrap:wrap;
  gap:6px 26px; align-items:center; }
ol.chain li { position:relative; background:#eef3fb; border:1px solid #c9d8ef;
  border-radius:14px;
  padding:2px 10px; font-size:13px; }
ol.chain li.root-step { background:#ffe3e3; border-color:#f5b5b5; font-weight:600; }
ol.chain li + li::before { content:"→"; position:absolute; left:-20px; color:var(--muted);
  font-weight:400; }
.remedy { margin:6px 0 0; } .remedy b { color:var(--ok); }
.path { margin:6px 0 0; }
table { table-layout:fixed; border-collapse:collapse; width:100%; background:var(--card);
  font-size:13.5px; }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line);
  vertical-align:top; }
th { background:#f0f3f7; font-weight:600; color:var(--muted); font-size:12px;
  text-transform:uppercase; }
td.fig { white-space:nowrap; font-weight:600; font-variant-numeric:tabular-nums; }
small.where { display:block; overflow-wrap:anywhere; color:var(--muted);
  font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; }
td.mark.yes { color:var(--ok); font-weight:700; } td.mark.no { color:var(--bad);
  font-weight:700; }
#ruled-out td.mark.no { color:var(--muted); }
th.c-mark { width:28px; } th.c-fig { width:210px; } th.c-where { width:300px;
  } th.c-onset { width:64px; }
code { font-family:ui-monospace, "DejaVu Sans Mono", monospace; font-size:12.5px; }
.plots { display:grid; grid-template-columns:repeat(auto-fill, minmax(360px, 1fr)); gap:10px;
  margin-top:10px; }
figure { margin:0; background:var(--card); border:1px solid var(--line); border-radius:8px;
  padding:8px 10px; }
figcaption { font-size:13px; font-weight:600; } figcaption small { display:block;
  font-weight:400; color:var(--muted); }
svg.plot { width:100%; height:auto; display:block; font-size:11px; }
svg.plot .area { fill:#fbfcfe; stroke:var(--line); }
svg.plot .grid { stroke:#e6eaf0; } svg.plot .tick { stroke:#9aa5b4; }
svg.plot text { fill:#4b5563; } svg.plot .ytick { text-anchor:end;
  } svg.plot .xtick { text-anchor:middle; }
svg.plot .band { fill:var(--band); opacity:.55; stroke:none; }
svg.plot .baseline { fill:none; stroke:#3b6fb6; stroke-width:1.2; stroke-dasharray:4 3; }
svg.plot .observed { fill:none; stroke:var(--obs); stroke-width:2; stroke-linejoin:round; }
svg.plot .onset { stroke:var(--ink); stroke-width:1.2; stroke-dasharray:3 3; }
svg.plot .onset-label { fill:var(--ink); font-weight:600; }
ul.plain { margin:6px 0; padding-left:20px; }
figure.timeline { margin:0 0 20px; }
svg.timeline { width:100%; height:auto; display:block; font-size:12px; }
svg.timeline .area { fill:#fbfcfe; stroke:var(--line); }
svg.timeline text { fill:#4b5563; } svg.timeline .xtick { text-anchor:middle; }
svg.timeline .ytick { text-anchor:end; }
svg.timeline .panel-title { font-weight:600; fill:var(--ink); paint-order:stroke;
  stroke:var(--card); stroke-width:3px; }
svg.timeline .panel-note, svg.timeline .legend-note { fill:var(--warn); }
svg.timeline .yesterday { fill:none; stroke:var(--yday); stroke-width:1.4; }
svg.timeline .yesterday-band { fill:var(--yday); opacity:.3; stroke:none; }
svg.timeline .swatch.symptom { stroke:var(--obs); stroke-width:2; }
svg.timeline .swatch.cause { stroke:var(--bad); stroke-width:2; }
svg.timeline .swatch.onset { stroke:var(--ink); stroke-width:1.2; stroke-dasharray:3 3; }
svg.timeline .onset.alert, svg.timeline .swatch.alert { stroke:var(--alert); stroke-width:1.6;
  stroke-dasharray:none; }
svg.timeline .onset-label.alert { fill:var(--alert); }
svg.timeline .peer, svg.plot .peer { fill:none; stroke-width:1.1; opacity:.55; }
svg.timeline .peer.symptom { stroke:var(--obs); } svg.plot .peer { stroke:#868e96; }
svg.timeline .fleet-band, svg.plot .fleet-band { fill:var(--obs); opacity:.25; stroke:none; }
svg.timeline .fleet-median, svg.plot .fleet-median { fill:none; stroke:var(--obs);
  stroke-width:1.6; }
svg.timeline .observed.cause { fill:none; stroke:var(--bad); stroke-width:2; }
svg.timeline .before { stroke:#868e96; stroke-width:1; stroke-dasharray:6 4; }
svg.timeline .onset { fill:none; stroke-width:1.2; stroke-dasharray:3 3; }
svg.timeline .onset.symptom { stroke:var(--obs); } svg.timeline .onset.cause { stroke:var(--bad); }
svg.timeline .onset-label { font-weight:600; }
svg.timeline .onset-label.cause { fill:var(--bad); } svg.timeline .onset-label.symptom {
  fill:var(--obs); }
summary { cursor:pointer; list-style:none; }
summary::-webkit-details-marker { display:none; }
summary:focus-visible { outline:2px solid var(--accent); outline-offset:2px; border-radius:4px; }
summary > .marker { display:inline-block; width:1.1em; color:var(--accent);
  transition:transform .12s; }
details[open] > summary > .marker { transform:rotate(90deg); }
summary > .hint { color:var(--accent); font-size:12px; font-weight:400; margin-left:8px; }
details[open] > summary > .hint { display:none; }
details.fold > summary h2 { display:inline-block; border:none; margin:18px 0 4px; }
details.fold > summary .meta { display:block; }
details.hyp { background:var(--card); border:1px solid var(--line); border-radius:6px;
  margin:6px 0; padding:4px 10px; }
details.hyp > summary { font-weight:600; }
details.step > summary h3 { display:inline-block; }
details.promql summary { color:var(--accent); font-size:12px; }
#unexplained ul.plain { list-style:none; padding-left:0; }
.change { display:flex; gap:12px; align-items:flex-start; margin:6px 0; }
svg.spark { width:360px; max-width:45%; height:auto; flex:none; font-size:10px; }
svg.spark .area { fill:#fbfcfe; stroke:var(--line); }
svg.spark text { fill:#4b5563; } svg.spark .ytick { text-anchor:end; }
svg.spark .missing, svg.spark .gap-note { fill:var(--warn); }
svg.spark .band { fill:var(--band); opacity:.55; stroke:none; }
svg.spark .observed { fill:none; stroke:var(--obs); stroke-width:1.6; }
svg.spark .onset { stroke:var(--ink); stroke-width:1; stroke-dasharray:3 3; }
svg.spark .onset-label { fill:var(--ink); font-weight:600; }
details.promql code { display:block; overflow-wrap:anywhere; }
a.ql { color:var(--accent); font-size:12px; margin-right:6px; }
figcaption .query { font-weight:400; } figcaption details.promql { display:inline-block;
  vertical-align:top; }
td.reading { font-weight:700; color:var(--muted); }
th.c-verdict { width:112px; } th.c-query { width:110px; }
.also { margin-top:6px; font-size:13.5px; } .also b { color:var(--warn); }
tr.at-root td { background:rgba(230,160,0,.12); }
.missing { color:var(--warn); }
footer { margin-top:36px; color:var(--muted); font-size:12px; }
"""
