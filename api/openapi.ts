// The OpenAPI 3.1 document, generated from the route registry's zod schemas.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi'
import { SESSION_COOKIE } from '../shared/auth/sessions.js'

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry()
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', description: 'An account API key' })
  registry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey', in: 'cookie', name: SESSION_COOKIE,
    description: 'Dashboard session. Writes (POST, PATCH, DELETE) must also send X-Service-CSRF with the csrf_token from sign-in.',
  })
  return registry
}

export function generateDocument(registry: OpenAPIRegistry, serverUrl?: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Metrics ingest and query service',
      version: '1.0.0',
      description: 'Record counters and gauges over HTTP, read them back, chart, export and alert on them. v1 routes use `Authorization: Bearer <API key>` or a dashboard session; errors are RFC 9457 problem details.',
    },
    servers: serverUrl ? [{ url: serverUrl }] : [],
  })
}

/** A self-contained page that renders the document (no CDN: the page must work offline too). */
export function docsPage(specUrl: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>API reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code,pre{font:13px ui-monospace,monospace;background:#f4f4f4;padding:.1rem .3rem}pre{padding:.6rem;overflow:auto}
h2{border-bottom:1px solid #ddd;margin-top:2rem}.m{display:inline-block;min-width:4.5rem;font-weight:600;text-transform:uppercase}</style></head>
<body><h1>API reference</h1><p>Machine-readable document: <a href="${specUrl}">${specUrl}</a></p><div id="out">Loading…</div>
<script>
fetch(${JSON.stringify(specUrl)}).then(r=>r.json()).then(doc=>{
  const esc=s=>String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
  const byTag={};
  for(const [path,ops] of Object.entries(doc.paths||{}))for(const [m,op] of Object.entries(ops)){const t=(op.tags||['other'])[0];(byTag[t]=byTag[t]||[]).push([m,path,op])}
  let html='<p>'+esc(doc.info.description||'')+'</p>';
  for(const [tag,ops] of Object.entries(byTag)){html+='<h2>'+esc(tag)+'</h2>';
    for(const [m,path,op] of ops){html+='<h3><span class="m">'+m+'</span><code>'+esc(path)+'</code></h3><p>'+esc(op.summary||'')+'</p>';
      const body=op.requestBody&&op.requestBody.content&&op.requestBody.content['application/json'];
      if(body)html+='<p>Body:</p><pre>'+esc(JSON.stringify(body.schema,null,2))+'</pre>';
      html+='<p>Responses: '+Object.entries(op.responses||{}).map(([s,r])=>'<code>'+s+'</code> '+esc(r.description)).join(', ')+'</p>';}}
  document.getElementById('out').innerHTML=html;
}).catch(e=>{document.getElementById('out').textContent='Could not load the document: '+e});
</script></body></html>`
}
