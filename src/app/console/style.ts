/** The console's one stylesheet, served as /console/assets/console.css (no inline style: strict CSP). */
export const CONSOLE_CSS = `:root{--navy:#113566;--ink:#1a1a1a;--muted:#4a4a4a;--line:#d0d5dd;--ok:#0b6b2e;--bad:#a4161a;
font-family:system-ui,'Noto Sans Thai','Loma','Sarabun',sans-serif;color:var(--ink);background:#eef1f5}
*{box-sizing:border-box}body{margin:0}
header.top{background:var(--navy);color:#fff;display:flex;flex-wrap:wrap;gap:4px 16px;align-items:center;padding:8px 16px}
header.top a{color:#fff}header.top .who{margin-left:auto;font-size:.9rem}
header.top form{display:inline}
nav.main a{margin-right:12px}
main{max-width:1100px;margin:16px auto;background:#fff;border:1px solid var(--line);border-radius:10px;padding:16px 20px}
h1{font-size:1.4rem;margin:0 0 12px}h2{font-size:1.1rem;margin:20px 0 8px}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:#f5f7fa}
main{overflow-x:auto}td{overflow-wrap:anywhere}
td code{word-break:break-all;white-space:pre-wrap;font-size:.8rem}td:first-child{white-space:nowrap}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin-bottom:12px}
label{display:flex;flex-direction:column;font-size:.85rem;gap:2px}
input,select,button{font:inherit;padding:6px 8px;border:1px solid var(--line);border-radius:6px}
button{background:var(--navy);color:#fff;border-color:var(--navy);cursor:pointer}
button.danger{background:var(--bad);border-color:var(--bad)}
.inline{display:inline}
.msg{padding:8px 12px;border-radius:6px;background:#e7f3ec;color:var(--ok)}
.err{padding:8px 12px;border-radius:6px;background:#fbe9e9;color:var(--bad)}
.muted{color:var(--muted);font-size:.85rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 16px}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.signin{max-width:420px}.signin input{width:100%}
.charts{display:flex;flex-wrap:wrap;gap:16px}.charts figure{margin:0}
a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #e8a200;outline-offset:2px}
`;
