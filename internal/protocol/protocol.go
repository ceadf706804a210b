// Package protocol names the MCP protocol versions mcpspec speaks. It imports nothing, so the
// packages below the session layer (collection, which checks a server's protocolVersion) know
// the versions without importing session; session re-exports them for its users.
package protocol

// Protocol versions the client speaks, newest first.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"
)

// SupportedVersions lists every protocol version the client speaks, newest first; each call
// returns a fresh slice.
func SupportedVersions() []string {
	return []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}
}
