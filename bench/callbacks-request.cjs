// setupRequest of bench/callbacks.ts, loaded by autocannon's worker thread: each request takes the
// next pre-signed QR callback from the file named by TALAT_BENCH_CALLBACKS (one raw body a line),
// so every request of the run is a distinct, correctly signed callback.
const fs = require('node:fs');

const bodies = fs.readFileSync(process.env.TALAT_BENCH_CALLBACKS, 'utf8').split('\n').filter(Boolean);
let next = 0;

module.exports = (req) => ({ ...req, body: bodies[next++ % bodies.length] });
