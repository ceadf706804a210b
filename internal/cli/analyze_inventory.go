package cli

import (
	"context"

	"github.com/mcpspec/mcpspec/analyze/inventory"
	"github.com/mcpspec/mcpspec/session"
)

// collect lists everything the server offers (tools, prompts, resources, templates).
func (t *target) collect(ctx context.Context, s *session.Session) (*inventory.Inventory, error) {
	inv, err := inventory.Collect(ctx, s)
	if err != nil {
		return nil, t.requestError(err, "listing what the server offers")
	}
	return inv, nil
}
