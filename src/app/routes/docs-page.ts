/**
 * The API reference at /docs: Swagger UI from the locally installed swagger-ui-dist package
 * (nothing from the internet; the CSP allows only this origin), over /openapi.json, with
 * "Authorize" for the X-API-Key and "Try it out" on every operation.
 * Assets are served from /docs/assets/<file> (read once, cached by the browser for a day).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const DIST = path.dirname(require.resolve('swagger-ui-dist/package.json'));

export const DOCS_ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const cache = new Map<string, Buffer>();
export function docsAsset(name: string): Buffer | undefined {
  if (name === 'init.js') return Buffer.from(INIT_JS);
  if (!(name in DOCS_ASSETS)) return undefined;
  let b = cache.get(name);
  if (!b) cache.set(name, (b = readFileSync(path.join(DIST, name))));
  return b;
}

const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    persistAuthorization: true,
    tryItOutEnabled: false,
    displayOperationId: true,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout'
  });
});
`;

export const DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Talat API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<noscript>The reference needs JavaScript; the machine-readable description is <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/assets/init.js"></script>
</body></html>
`;
