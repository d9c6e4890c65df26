#!/usr/bin/env node
/**
 * The image's HEALTHCHECK: GET /readyz of this container's role (TALAT_ROLE=gateway on PORT,
 * worker on WORKER_HTTP_PORT); exit 0 when it answers 200 within 4 s.
 */
'use strict';
/* global fetch, AbortSignal */
const port = process.env.TALAT_ROLE === 'worker' ? process.env.WORKER_HTTP_PORT || '3001' : process.env.PORT || '3000';
fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(4000) }).then(
  (r) => process.exit(r.ok ? 0 : 1),
  () => process.exit(1),
);
