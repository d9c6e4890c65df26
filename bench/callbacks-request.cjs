// setupRequest of bench/callbacks.ts, loaded by autocannon's worker thread: each request takes the
// next pre-signed callback from the file named by TALAT_BENCH_CALLBACKS (a line is JSON: the raw
// body and its headers), so every request of the run is a distinct, correctly signed callback.
const fs = require('node:fs');

const requests = fs
  .readFileSync(process.env.TALAT_BENCH_CALLBACKS, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));
let next = 0;

module.exports = (req) => {
  const r = requests[next++ % requests.length];
  return { ...req, body: r.body, headers: { ...req.headers, ...r.headers } };
};
