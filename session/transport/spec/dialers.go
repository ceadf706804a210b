package spec

import (
	"github.com/mcpspec/mcpspec/session/transport"
)

// newDialer builds the dialer for a resolved SPEC.
func newDialer(info Info, o *Options) (transport.Dialer, error) {
	return nil, &Error{Spec: info.Spec, Reason: string(info.Transport) + " transport", Err: ErrUnavailable}
}
