// Package ui is mcpspec's web UI (`mcpspec ui`): a loopback HTTP server with a random token,
// its pages embedded in the binary, a JSON API under /api/ and live events over Server-Sent
// Events.
//
// Safe by default, as the official inspector's CVE-2025-49596 (an unauthenticated proxy that
// started any command) and CVE-2025-58444 (server text rendered as HTML, then run) ask:
//
//   - it listens on loopback only unless [Options.AllowRemote];
//   - every /api/ request needs the token (an Authorization: Bearer header; the event stream,
//     which EventSource cannot give headers, takes it as ?token=): 401 without;
//   - a Host that is not the bound loopback address, or an Origin that is not the page's own,
//     gets 403 (DNS rebinding and cross-site requests);
//   - every response carries a strict Content-Security-Policy (no inline script, no eval),
//     X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer, and the page renders
//     every string a server sent with textContent, never as HTML;
//   - it starts or connects to only the servers of the project's collections (*.yaml under the
//     working directory), those of an allowlist file, and the built-in testserver.
//
// Runs started from the UI (test, load, the detectors, audit, score) run mcpspec's own verbs
// through [Options.Exec], so they write the same run directories and reports the CLI does.
package ui
