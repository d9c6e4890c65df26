/**
 * The human docs page: renders /openapi.json in the browser with inline code only
 * (no asset from the internet; the CSP forbids it).
 */
export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Talat API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
 body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2327;background:#fafafa}
 header{background:#14532d;color:#fff;padding:16px 24px} header h1{margin:0;font-size:22px}
 main{max-width:1000px;margin:0 auto;padding:16px 24px}
 details{background:#fff;border:1px solid #ddd;border-radius:6px;margin:8px 0;padding:8px 12px}
 summary{cursor:pointer;font-family:ui-monospace,monospace}
 .m{display:inline-block;min-width:60px;font-weight:700;border-radius:4px;padding:0 6px;color:#fff;text-align:center;margin-right:8px}
 .get{background:#2563eb}.post{background:#16a34a}.delete{background:#dc2626}.put,.patch{background:#d97706}
 pre{background:#f3f4f6;padding:8px;overflow:auto;font-size:12px} h2{border-bottom:1px solid #ddd;padding-bottom:4px}
 .tag{color:#555;font-size:13px}
</style></head>
<body><header><h1>Talat API</h1><div id="desc"></div></header>
<main><p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3).</p><div id="ops">Loading…</div></main>
<script>
fetch('/openapi.json').then(r=>r.json()).then(doc=>{
  document.getElementById('desc').textContent = doc.info.description || '';
  const esc = s => String(s).replace(/[&<>]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;'}[c]));
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths||{})) for (const [method, op] of Object.entries(ops)) {
    const tag = (op.tags||['other'])[0]; (byTag[tag] ||= []).push({path, method, op});
  }
  let html = '';
  for (const [tag, list] of Object.entries(byTag)) {
    html += '<h2>'+esc(tag)+'</h2>';
    for (const {path, method, op} of list) {
      html += '<details><summary><span class="m '+method+'">'+method.toUpperCase()+'</span>'+esc(path)+
        ' <span class="tag">'+esc(op.summary||'')+'</span></summary>';
      if (op.description) html += '<p>'+esc(op.description)+'</p>';
      if (op.parameters) html += '<h4>Parameters</h4><pre>'+esc(JSON.stringify(op.parameters,null,2))+'</pre>';
      if (op.requestBody) html += '<h4>Request body</h4><pre>'+esc(JSON.stringify(op.requestBody.content,null,2))+'</pre>';
      html += '<h4>Responses</h4><pre>'+esc(JSON.stringify(op.responses,null,2))+'</pre></details>';
    }
  }
  html += '<h2>Schemas</h2><pre>'+esc(JSON.stringify((doc.components||{}).schemas||{},null,2))+'</pre>';
  document.getElementById('ops').innerHTML = html;
}).catch(e=>{document.getElementById('ops').textContent='Could not load /openapi.json: '+e});
</script></body></html>`;
