// The open checkout pages of bench/checkout.ts, in a process of their own (their CPU and memory are
// not the gateway's): on {open: [urls]} it opens one event stream per URL (a connection each, as
// browsers do) and answers {opened, ms} once each has its first status event; every later status
// event is timed (Date.now()) and, on {report}, the arrival times are sent back.
const http = require('node:http');

const arrivals = [];
const streams = [];

function openOne(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, headers: { Accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
      let buf = '';
      let first = true;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (!/^event: status$/m.test(block)) continue;
          if (first) {
            first = false;
            resolve();
          } else arrivals.push(Date.now());
        }
      });
    });
    req.on('error', reject);
    streams.push(req);
  });
}

process.on('message', async (m) => {
  if (m.open) {
    const t0 = Date.now();
    try {
      // 50 at a time: the way pages arrive, not a SYN flood
      for (let i = 0; i < m.open.length; i += 50) await Promise.all(m.open.slice(i, i + 50).map(openOne));
      process.send({ opened: streams.length, ms: Date.now() - t0 });
    } catch (e) {
      process.send({ error: e.message });
    }
  } else if (m.report) {
    process.send({ arrivals: arrivals.splice(0) });
  } else if (m.close) {
    for (const r of streams) r.destroy();
    process.exit(0);
  }
});
