// The web app's stylesheet (served as a hashed file beside uPlot's; no inline styles, CSP forbids them).
export const APP_CSS = `
:root{--fg:#1b1f24;--muted:#5b6470;--line:#d9dee4;--bg:#fff;--soft:#f5f7f9;--accent:#1d4ed8;--accent-fg:#fff;
--ok:#15803d;--ok-bg:#e7f6ec;--bad:#b91c1c;--bad-bg:#fdecec;--warn:#92400e;--warn-bg:#fef3c7;--idle:#475569;--idle-bg:#eef1f4;
--radius:6px;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}body{margin:0}a{color:var(--accent)}
header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1.25rem;padding:.6rem 1rem;border-bottom:1px solid var(--line);background:var(--soft)}
header.top .brand{font-weight:700;color:var(--fg);text-decoration:none;margin-right:.5rem}
header.top nav{display:flex;flex-wrap:wrap;gap:.1rem .9rem}header.top nav a{text-decoration:none;color:var(--muted);padding:.2rem 0}
header.top nav a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom:2px solid var(--accent)}
header.top .who{margin-left:auto;color:var(--muted);font-size:.85rem}
main{max-width:72rem;margin:0 auto;padding:1.2rem 1rem 3rem;overflow-wrap:break-word}
h1{font-size:1.45rem;margin:.2rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.8rem 0 .6rem}h3{font-size:1rem;margin:1rem 0 .4rem}
p{margin:.4rem 0 .8rem}.muted{color:var(--muted)}.small{font-size:.85rem}ul.legend{list-style:none;padding:0;margin:.2rem 0 .6rem;display:flex;flex-wrap:wrap;gap:.3rem 1rem}
code,pre,.mono{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
pre{background:var(--soft);border:1px solid var(--line);border-radius:var(--radius);padding:.6rem .7rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all;margin:.3rem 0}
label{display:block;font-weight:600;margin:.7rem 0 .2rem}label .hint,.hint{display:block;font-weight:400;color:var(--muted);font-size:.85rem;margin:-.1rem 0 .25rem;max-width:40rem}
input,select,textarea{font:inherit;padding:.45rem .55rem;border:1px solid #aeb6c0;border-radius:var(--radius);width:100%;max-width:32rem;background:#fff;color:inherit}
textarea{min-height:4.5rem}input:focus-visible,select:focus-visible,textarea:focus-visible,button:focus-visible,a:focus-visible,summary:focus-visible{outline:3px solid #93b4f5;outline-offset:1px}
input[aria-invalid=true],select[aria-invalid=true]{border-color:var(--bad)}.field-error{color:var(--bad);font-size:.85rem;margin:.2rem 0 0}
button,.button{font:inherit;font-weight:600;padding:.45rem .9rem;border-radius:var(--radius);border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--bad);border-color:var(--bad)}
button.link{background:none;border:none;color:var(--accent);padding:0;font-weight:400;text-decoration:underline;text-align:left;overflow-wrap:anywhere}
button:disabled{opacity:.55;cursor:default}.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin:.8rem 0;align-items:center}
.card{border:1px solid var(--line);border-radius:var(--radius);padding:.9rem 1rem;margin:.8rem 0;background:#fff}
.card>:first-child{margin-top:0}.narrow{max-width:26rem;margin:2rem auto}.landing{max-width:46rem;margin:1.5rem auto}
.notice{border-radius:var(--radius);padding:.6rem .8rem;margin:.6rem 0}.notice.error{background:var(--bad-bg);color:var(--bad);border:1px solid #f3b8b8}
.notice.ok{background:var(--ok-bg);color:var(--ok);border:1px solid #b6e2c4}.notice.info{background:var(--soft);border:1px solid var(--line)}
.empty{border:1px dashed var(--line);border-radius:var(--radius);padding:1.5rem;text-align:center;color:var(--muted)}
.loading{color:var(--muted)}.loading:before{content:"";display:inline-block;width:.8em;height:.8em;margin-right:.4em;border:2px solid var(--line);border-top-color:var(--accent);border-radius:50%;animation:spin 1s linear infinite;vertical-align:-.1em}
@keyframes spin{to{transform:rotate(360deg)}}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.45rem .5rem;border-bottom:1px solid var(--line);vertical-align:middle}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted);font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.table-wrap{overflow-x:auto}
.badge{display:inline-block;font-size:.78rem;font-weight:600;padding:.1rem .5rem;border-radius:999px;background:var(--idle-bg);color:var(--idle);white-space:nowrap}
.badge.ok{background:var(--ok-bg);color:var(--ok)}.badge.firing,.badge.failed{background:var(--bad-bg);color:var(--bad)}.badge.pending_confirmation,.badge.queued{background:var(--warn-bg);color:var(--warn)}
.badge.delivered{background:var(--ok-bg);color:var(--ok)}
.kind{font-size:.75rem;color:var(--muted);border:1px solid var(--line);border-radius:4px;padding:0 .3rem}
.spark{display:block;width:120px;height:28px}.spark path{fill:none;stroke:var(--accent);stroke-width:1.5}.spark circle{fill:var(--accent)}
.ranges{display:flex;flex-wrap:wrap;gap:.3rem;margin:.4rem 0 .8rem}.ranges button{background:#fff;color:var(--fg);border-color:var(--line);font-weight:500;padding:.3rem .7rem}
.ranges button[aria-pressed=true]{background:var(--accent);color:#fff;border-color:var(--accent)}
.chart{min-height:320px;position:relative}.chart .u-legend{font-size:.85rem}.u-legend th{text-transform:none;letter-spacing:0;color:inherit;font-size:inherit;font-weight:600;padding:0;border:none}.u-legend td{border:none;padding:0 .3rem}
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:.6rem;margin:.8rem 0}
.summary div{background:var(--soft);border-radius:var(--radius);padding:.5rem .7rem}.summary dt{font-size:.8rem;color:var(--muted)}.summary dd{margin:0;font-size:1.2rem;font-weight:600;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.summary .unit{font-size:.8rem;font-weight:400;color:var(--muted)}
tr[aria-current=true]{background:var(--soft)}button.link[aria-pressed=true]{font-weight:700}
.up{color:var(--ok)}.down{color:var(--bad)}
.usage{display:grid;grid-template-columns:repeat(auto-fit,minmax(12rem,1fr));gap:.6rem;margin:.6rem 0 1rem}.usage .card{margin:0;padding:.6rem .8rem}
.meter{height:.45rem;background:var(--idle-bg);border-radius:999px;overflow:hidden;margin-top:.3rem}.meter span{display:block;height:100%;background:var(--accent)}
.meter span.full{background:var(--bad)}
.secret{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}.secret code{background:var(--warn-bg);padding:.3rem .5rem;border-radius:4px;word-break:break-all}
iframe.embed{width:100%;max-width:640px;height:280px;border:1px solid var(--line);border-radius:var(--radius)}
details{margin:.4rem 0}summary{cursor:pointer;color:var(--accent)}
dialog{border:1px solid var(--line);border-radius:var(--radius);max-width:32rem;padding:1.2rem}dialog::backdrop{background:rgba(0,0,0,.35)}
.answer{font-size:1.2rem;margin:.3rem 0 .8rem}.verifier{border-top:1px solid var(--line);padding-top:.5rem}.suggest{margin:.5rem 0}.suggest .card{margin:.5rem 0}progress{width:100%;max-width:32rem;height:1rem}.filter{max-width:20rem}.row-title{font-weight:600;overflow-wrap:anywhere}
fieldset{border:1px solid var(--line);border-radius:var(--radius);margin:.8rem 0;padding:.3rem .9rem .9rem}legend{font-weight:600;padding:0 .3rem}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:0 1rem}
label.inline{display:inline-flex;align-items:center;gap:.35rem;font-weight:500;margin:0 .8rem 0 0}input[type=radio],input[type=checkbox]{width:auto}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.boards{list-style:none;padding:0}.boards .card{margin:.5rem 0}
.dash-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,30rem),1fr));gap:.8rem}.dash-card{margin:0;padding:.6rem .7rem;min-width:0}
.dash-card-head{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.3rem .6rem}.dash-card-head h2{margin:0;font-size:1rem;overflow-wrap:anywhere}
.dash-card-tools{display:flex;gap:.3rem;align-items:center}.dash-card-tools select{width:auto;padding:.25rem .4rem;font-size:.85rem}
button.icon{padding:.2rem .55rem;font-size:.9rem;line-height:1.2}.chart.small-chart{min-height:200px}.chart .u-legend .u-series{cursor:pointer}
.dash-card-foot{display:flex;flex-wrap:wrap;gap:.3rem .6rem;align-items:center;margin-top:.3rem}.inline-add{display:flex;gap:.3rem;align-items:center;max-width:100%}.inline-add select{width:auto;min-width:0;flex:0 1 auto;padding:.25rem .4rem;font-size:.85rem}
.inline-add button{padding:.25rem .6rem}
@media (max-width:640px){main{padding:.8rem .7rem 2rem}h1{font-size:1.25rem}.u-legend{text-align:left}.u-legend.u-inline tr{display:block;margin:0 0 .15rem}.u-legend.u-inline th,.u-legend.u-inline td,.u-legend.u-inline .u-label{display:inline;overflow-wrap:anywhere}
table.stack thead{display:none}table.stack tr{display:block;border-bottom:1px solid var(--line);padding:.4rem 0}
table.stack td{display:flex;justify-content:space-between;gap:1rem;border:none;padding:.2rem 0;text-align:right}
table.stack td:before{content:attr(data-label);color:var(--muted);font-size:.8rem;text-align:left}
table.stack td.num{text-align:right}.chart{min-height:240px}header.top .who{margin-left:0;width:100%}}
`
