package mcptest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// confirmInputKey is the id of the confirm tool's one input request.
const confirmInputKey = "confirm"

// runConfirm implements the stateless era's multi-round-trip flow: the first call answers
// resultType "input_required" with one elicitation input request and a signed requestState;
// the retry carrying inputResponses and that requestState byte for byte completes.
func runConfirm(b *Backend, tc *toolCall) (*toolResult, *rpcError) {
	msg, err := tc.args.str("message", false, "Proceed?")
	if err != nil {
		return invalidArgs("confirm", err)
	}
	state := b.confirmState(msg)
	p := tc.params
	if p.RequestState == nil && p.InputResponses == nil {
		return &toolResult{
			ResultType: "input_required",
			InputRequests: map[string]any{confirmInputKey: map[string]any{
				"method": "elicitation/create",
				"params": map[string]any{
					"mode":    "form",
					"message": msg,
					"requestedSchema": map[string]any{
						"type":       "object",
						"properties": map[string]any{"confirmed": map[string]any{"type": "boolean"}},
						"required":   []string{"confirmed"},
					},
				},
			}},
			RequestState: state,
		}, nil
	}
	if p.RequestState == nil || !hmac.Equal([]byte(*p.RequestState), []byte(state)) {
		return nil, newError(CodeInvalidParams, "confirm: requestState missing or not the one this server issued")
	}
	raw, ok := p.InputResponses[confirmInputKey]
	if !ok {
		return nil, newError(CodeInvalidParams, "confirm: inputResponses[%q] missing", confirmInputKey)
	}
	var answer struct {
		Action  string `json:"action"`
		Content struct {
			Confirmed bool `json:"confirmed"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, newError(CodeInvalidParams, "confirm: inputResponses[%q]: %v", confirmInputKey, err)
	}
	if answer.Action == "accept" && answer.Content.Confirmed {
		return textResult("confirmed: " + msg), nil
	}
	return textResult(fmt.Sprintf("declined (%s): %s", answer.Action, msg)), nil
}

// confirmState signs the call's arguments so the server keeps no state between rounds.
func (b *Backend) confirmState(msg string) string {
	m := hmac.New(sha256.New, b.stateKey)
	m.Write([]byte("confirm\x00" + msg))
	return "mcptest.v1." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}
