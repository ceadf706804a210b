// Package redact keeps secret values out of everything mcpspec writes.
//
// A [Masker] holds the secrets of a run: {{secret.X}} values, variables, headers, env entries
// and URL query parameters named like a key, token, secret, password or auth ([IsSecretName]).
// For each secret it also holds every form the value takes once an output has encoded it
// ([Forms]): JSON-escaped (with and without HTML escaping, ASCII-only), Go-quoted, XML and HTML
// entities (encoding/xml, html, html/template, CDATA), URL query and path escaping, YAML
// double- and single-quoted, markdown-escaped and whitespace-folded — and each of those encoded
// once more, as when an escaped value sits in a JSON report. [Masker.Mask] replaces any of them
// with "***".
//
// Masking happens twice on the way out. The runner masks the fields of each result, so reports
// never see a secret; and every file and stream the CLI writes goes through a [Writer], which
// masks the bytes themselves, catching a form the result model missed. A Writer holds back only
// the few bytes at the end of a write that could begin a secret, so streamed output (a console
// line, a TAP test point) appears at once and a secret split across writes is still caught.
//
// Text cut short before it was masked (an assertion's excerpt ending in "…", a stderr tail
// starting with it) is masked by what it kept of a secret: [MinLen] bytes or more that begin a
// secret right before the [Cut] mark, or end one right after it.
//
// Values shorter than [MinLen] bytes are never masked: replacing "abc" would garble every
// output.
package redact
