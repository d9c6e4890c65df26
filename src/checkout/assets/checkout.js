/* The hosted checkout page's live part: the expiry countdown and the payment's status from the
 * server's event stream (GET /checkout/<token>/events); no polling, no inline script (CSP). */
/* global document, window, EventSource */
'use strict';
(function () {
  var el = document.getElementById('checkout-data');
  if (!el) return;
  var data = JSON.parse(el.textContent);
  var main = document.querySelector('main.checkout');
  var statusEl = document.getElementById('status');
  var countdown = document.getElementById('countdown');
  var FINAL = { paid: 1, failed: 1, expired: 1, refunded: 1 };
  // the deadline on this device's clock, from the time left as the server saw it (no clock skew)
  var deadline = Date.now() + data.remainingMs;
  var status = data.status;
  var source = null;
  var timer = null;

  function show(s) {
    status = s;
    main.setAttribute('data-status', s);
    statusEl.textContent = data.text[s] || s;
    if (!FINAL[s]) return;
    if (source) source.close();
    if (timer) window.clearInterval(timer);
    document.querySelector('figure.qr').hidden = true;
    document.querySelector('.expiry').hidden = true;
    document.getElementById('next').hidden = false;
    var link = document.getElementById('return');
    if (link) link.focus();
    if (s === 'paid' && data.returnUrl) goBack(5);
  }

  function goBack(left) {
    var note = document.getElementById('returning');
    if (!note) {
      note = document.createElement('span');
      note.id = 'returning';
      note.className = 'small';
      document.getElementById('next').appendChild(note);
    }
    note.textContent = data.text.returning.replace('{s}', String(left));
    if (left <= 0) window.location.assign(data.returnUrl);
    else window.setTimeout(goBack, 1000, left - 1);
  }

  function tick() {
    var s = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
    countdown.textContent = Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0');
  }

  if (FINAL[status]) return;
  tick();
  timer = window.setInterval(tick, 1000);
  listen();

  function listen() {
    source = new EventSource(data.events);
    // live once the first status arrives (the server sends it after its LISTEN is on)
    source.addEventListener('status', function (e) {
      main.setAttribute('data-live', 'open');
      show(JSON.parse(e.data).status);
    });
    source.onerror = function () {
      main.setAttribute('data-live', 'lost');
      if (!FINAL[status]) statusEl.textContent = data.text.reconnecting;
      // an ended stream is retried by the browser itself; a refused one (429, 503) is not: again in 5 s
      if (source.readyState === EventSource.CLOSED && !FINAL[status]) window.setTimeout(listen, 5000);
    };
  }
})();
