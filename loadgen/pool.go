package loadgen

import (
	"math"

	"github.com/mcpspec/mcpspec/session/serverconn"
	"github.com/mcpspec/mcpspec/session/transport"
)

// inFlightBound is the most requests the run can have in flight at once: the open model's
// MaxInFlight, or the closed model's largest number of workers over its schedule (each worker
// has one request in flight at a time).
func (p *plan) inFlightBound() int {
	c := p.cfg
	if c.open {
		return c.MaxInFlight
	}
	n := c.Concurrency
	for _, l := range p.legs {
		n = max(n, int(math.Ceil(l.level)))
	}
	return n
}

// sizedServer returns o whose dialers, when they keep a connection pool of their own
// ([transport.PoolSizer]: Streamable HTTP), are sized for n requests in flight on one session.
// Without it a session's HTTP/1.1 pool (64 connections by default) would hold every request
// past the 64th in the client, waiting for a connection, and the server would never see the
// load asked for.
func sizedServer(o serverconn.Options, n int) serverconn.Options {
	dial := o.Dial
	if dial == nil {
		return o
	}
	o.Dial = func(stderrPath string) (transport.Dialer, error) {
		d, err := dial(stderrPath)
		if ps, ok := d.(transport.PoolSizer); ok && err == nil {
			return ps.WithPool(n), nil
		}
		return d, err
	}
	return o
}
