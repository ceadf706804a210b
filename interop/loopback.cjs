// Preloaded into the Node servers the interop tests start (node --require ./loopback.cjs …).
//
// server-everything's HTTP transports call app.listen(PORT) with no host, which binds every
// interface. This preload makes any listen() that names a port but no host bind 127.0.0.1, so the
// third-party server is reachable from loopback only, whatever network the test runs in.
'use strict';

const net = require('node:net');

const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function listenLoopback(...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] !== 'string') {
      args.splice(1, 0, '127.0.0.1');
    }
  } else if (first !== null && typeof first === 'object' && first.path === undefined && first.host === undefined) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
