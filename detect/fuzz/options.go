package fuzz

import (
	"context"
	"encoding/json"
	"path"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/session"
	"github.com/mcpspec/mcpspec/session/serverconn"
)

// Defaults applied to zero [Options] fields.
const (
	DefaultIterations   = 500
	DefaultHangAfter    = 5 * time.Second
	DefaultLiveness     = 2 * time.Second
	DefaultMinimizeRuns = 40
	DefaultMinimizeTime = 60 * time.Second
)

// Options configures a fuzz run. A nil *Options means the defaults.
type Options struct {
	// Iterations is how many cases to run (default 500).
	Iterations int
	// Seed seeds the case generator: the same seed against the same server gives the same
	// cases.
	Seed int64
	// Time bounds the whole run, minimisation included (0: no bound but Iterations).
	Time time.Duration
	// Families limits the case families (nil: all; see mutate.Families).
	Families []mutate.Family
	// Strict makes accepted-invalid a bug: arguments that break the tool's inputSchema
	// answered with a success result.
	Strict bool
	// IncludeDestructive also calls tools annotated destructiveHint: true; IncludeOpenWorld
	// tools annotated openWorldHint: true (they reach outside the server).
	IncludeDestructive, IncludeOpenWorld bool
	// Tools, when set, are globs (path.Match) naming the only tools schema cases call;
	// SkipTools are globs of tools they never call.
	Tools, SkipTools []string
	// HangAfter is how long a request may go unanswered before it is a hang (default 5s).
	HangAfter time.Duration
	// Liveness bounds the ping after each case (default 2s, at most HangAfter).
	Liveness time.Duration
	// MinimizeRuns caps the reproductions tried while minimising one finding (default 40; a
	// negative value turns minimisation off); MinimizeTime caps all of them (default 60s).
	MinimizeRuns int
	MinimizeTime time.Duration
	// MaxRespawns caps how often the server is restarted (default: Iterations, since a server
	// may end the session on every frame it refuses); past it the run stops.
	MaxRespawns int
	// MaxFrame bounds generated frames (default mutate.DefaultMaxFrame, 4 MiB).
	MaxFrame int
	// OnCase, if set, sees every case as it finishes (progress output); it must not block.
	OnCase func(CaseResult)
	// Progress, when not nil, is told each phase as it starts (connecting, the cases,
	// minimisation).
	Progress detect.Progress
}

func (o *Options) withDefaults() Options {
	var v Options
	if o != nil {
		v = *o
	}
	if v.Iterations <= 0 {
		v.Iterations = DefaultIterations
	}
	if v.HangAfter <= 0 {
		v.HangAfter = DefaultHangAfter
	}
	if v.Liveness <= 0 {
		v.Liveness = DefaultLiveness
	}
	v.Liveness = min(v.Liveness, v.HangAfter)
	if v.MinimizeRuns == 0 {
		v.MinimizeRuns = DefaultMinimizeRuns
	}
	if v.MinimizeTime <= 0 {
		v.MinimizeTime = DefaultMinimizeTime
	}
	if v.MaxRespawns <= 0 {
		v.MaxRespawns = v.Iterations
	}
	if v.Families == nil {
		v.Families = mutate.Families()
	}
	return v
}

// Opener opens sessions to the server under test; *serverconn.Opener is one. A session the
// fuzzer opens gets options of its own (a frame tap, its own timeouts) through adjust.
type Opener interface {
	OpenWith(ctx context.Context, adjust func(*session.Options)) (*serverconn.Conn, error)
}

// RawDialer is implemented by openers that connect without a handshake, which the
// before-initialize family needs; *serverconn.Opener is one.
type RawDialer interface {
	DialRaw(ctx context.Context) (*serverconn.RawConn, error)
}

// SkippedTool is a tool schema cases leave alone, and why.
type SkippedTool struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason"`
}

// selectTools splits tools into those schema cases may call and those they leave alone. Only
// explicit annotations count (MCP: they are hints), as in the other detectors.
func (o *Options) selectTools(tools []session.Tool) (chosen []session.Tool, skipped []SkippedTool) {
	for _, t := range tools {
		var a struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
			OpenWorld   *bool `json:"openWorldHint"`
		}
		_ = json.Unmarshal(t.Annotations, &a)
		readOnly := a.ReadOnly != nil && *a.ReadOnly
		switch {
		case len(o.Tools) > 0 && !matchAny(o.Tools, t.Name):
			skipped = append(skipped, SkippedTool{t.Name, "not named by --tool"})
		case matchAny(o.SkipTools, t.Name):
			skipped = append(skipped, SkippedTool{t.Name, "skipped by --skip-tool"})
		case a.Destructive != nil && *a.Destructive && !readOnly && !o.IncludeDestructive:
			skipped = append(skipped, SkippedTool{t.Name, "annotated destructiveHint (include it with --include-destructive)"})
		case a.OpenWorld != nil && *a.OpenWorld && !o.IncludeOpenWorld:
			skipped = append(skipped, SkippedTool{t.Name, "annotated openWorldHint: it reaches outside the server (include it with --include-open-world)"})
		default:
			chosen = append(chosen, t)
		}
	}
	return chosen, skipped
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok || g == name {
			return true
		}
	}
	return false
}
