package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Subscriptions selects the notifications a subscriptions/listen stream asks for (stateless
// era; it replaces resources/subscribe and the legacy GET stream).
type Subscriptions struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listenTimeout stands for "no deadline but ctx" on a subscription.
const listenTimeout = 100 * 365 * 24 * time.Hour

// Listen sends subscriptions/listen and keeps the request open until ctx ends or the server
// ends the subscription. The notifications it brings (first
// notifications/subscriptions/acknowledged) reach Options.OnNotification. Listen returns nil
// when ctx ended it (notifications/cancelled is sent), the final response when the server ended
// it with a result, or a classified *Error. The hang detector and request timeout do not apply.
func (s *Session) Listen(ctx context.Context, subs Subscriptions) (*Response, error) {
	params, err := json.Marshal(struct {
		Notifications Subscriptions `json:"notifications"`
	}{subs})
	if err != nil {
		return nil, fmt.Errorf("subscriptions/listen: %w", err)
	}
	resp, e := s.do(ctx, &request{method: "subscriptions/listen", params: params, plain: true,
		timeout: listenTimeout, noHang: true})
	if e != nil {
		if ctx.Err() != nil && (e.Category == Cancelled || e.Category == Timeout) {
			return nil, nil
		}
		return nil, e
	}
	return resp, nil
}
