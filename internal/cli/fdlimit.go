package cli

import (
	"fmt"

	"github.com/mcpspec/mcpspec/loadgen"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

// fdReserve is the descriptors a load run needs besides its sessions and requests: the run
// directory's files, the trace, a server's stderr file, a metrics listener, the runtime's own.
const fdReserve = 64

// fdsPerSession is what one open session holds: a stdio server's three pipes and its pidfd;
// one keep-alive connection (HTTP) or socket (SSE, WebSocket, TCP) otherwise.
func fdsPerSession(t spec.Transport) int {
	if t == spec.Stdio {
		return 4
	}
	return 1
}

// loadFileNeed is how many file descriptors a load run needs at least: every session it keeps
// open at once, and over Streamable HTTP a connection per closed-model worker (HTTP/1.1 carries
// one request per connection at a time). The open model's requests in flight are not counted:
// --max-in-flight is a bound, rarely reached.
func loadFileNeed(cfg *loadgen.Config, t spec.Transport) int {
	workers := cfg.Concurrency
	if workers == 0 {
		workers = loadgen.DefaultConcurrency
	}
	sessions := 1
	switch cfg.SessionMode {
	case loadgen.Pooled:
		sessions = cfg.Sessions
	case loadgen.PerIteration:
		if cfg.Rate <= 0 {
			sessions = workers
		}
	}
	need := sessions*fdsPerSession(t) + fdReserve
	if t != spec.Stdio && cfg.Rate <= 0 {
		need += workers
	}
	return need
}

// checkFileLimit refuses a run that needs more file descriptors than the process may open (a
// config error, exit 3), instead of a storm of "too many open files" errors once it runs. The
// Go runtime has already raised the soft limit to the hard one (and restores the original in
// the processes it starts), so the limit read here is the hard one unless raising failed.
func checkFileLimit(need int, what string) error {
	soft, hard, ok := fileLimit()
	if !ok || uint64(need) <= soft {
		return nil
	}
	return configError(
		fmt.Sprintf("%s need about %d file descriptors; this process may open %d (RLIMIT_NOFILE; hard limit %d)", what, need, soft, hard),
		fmt.Sprintf("raise the limit in the shell that runs mcpspec (ulimit -n %d; above the hard limit needs root or limits.conf), or use fewer --sessions or --concurrency", need))
}

// loadFileWhat names what needs the descriptors, for the message.
func loadFileWhat(cfg *loadgen.Config, t spec.Transport) string {
	if t == spec.Auto {
		t = spec.HTTP
	}
	if cfg.SessionMode == loadgen.Pooled {
		return fmt.Sprintf("--sessions %d over %s", cfg.Sessions, t)
	}
	return fmt.Sprintf("--concurrency %d over %s", cfg.Concurrency, t)
}
