package audit

import (
	"fmt"
	"path"
	"slices"
)

// Mode says how a rule gathers evidence.
type Mode string

// The modes.
const (
	// Passive rules read metadata only (list results, instructions, the lockfile).
	Passive Mode = "passive"
	// ActiveMode rules call tools (opt-in, fenced: see [ActiveOptions]).
	ActiveMode Mode = "active"
)

// Rule describes one check: what it looks for, how bad a finding is, and how to fix it.
type Rule struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	Mode     Mode     `json:"mode"`
	// Summary is one sentence for listings.
	Summary string `json:"summary"`
	// Help explains what fires the rule and what keeps it quiet (shown by --explain and SARIF).
	Help string `json:"help"`
	// Fix is the default remedy.
	Fix string `json:"fix"`
}

// The rule identifiers. They are stable: suppressions and SARIF consumers key on them.
const (
	RuleHiddenTags         = "hidden-tag-characters"
	RuleHiddenVariation    = "hidden-variation-selectors"
	RuleBidi               = "bidi-control"
	RuleInvisible          = "invisible-characters"
	RuleControl            = "control-characters"
	RuleANSI               = "ansi-escape"
	RuleDirective          = "directive-injection"
	RuleSchemaInjection    = "schema-injection"
	RuleShadowing          = "tool-shadowing"
	RuleNameCollision      = "name-collision"
	RuleNameConfusable     = "name-confusable"
	RuleReadOnlyMismatch   = "readonly-contradiction"
	RuleDestructive        = "destructive-unannotated"
	RuleExec               = "exec-capability"
	RuleToxicFlow          = "toxic-flow"
	RuleSecret             = "secret-in-metadata"
	RuleEntropy            = "high-entropy-string"
	RuleToolName           = "tool-name-invalid"
	RuleDuplicate          = "duplicate-name"
	RuleSchemaInvalid      = "schema-invalid"
	RuleRequired           = "required-not-in-properties"
	RuleUndocumented       = "undocumented-open-schema"
	RuleDriftChanged       = "drift-tool-changed"
	RuleDriftSchema        = "drift-schema-changed"
	RuleDriftAdded         = "drift-tool-added"
	RuleDriftRemoved       = "drift-tool-removed"
	RuleDriftRenamed       = "drift-tool-renamed"
	RuleDriftOther         = "drift-metadata-changed"
	RuleSuppressionExpired = "suppression-expired"
	RuleSuppressionUnused  = "suppression-unused"

	RuleInputValidation = "active-input-validation"
	RulePathTraversal   = "active-path-traversal"
	RuleInjection       = "active-injection"
	RuleDisclosure      = "active-information-disclosure"
	RuleOutputPoisoning = "active-output-poisoning"
	RuleOutputSecret    = "active-secret-in-output"
	RuleExhaustion      = "active-resource-exhaustion"
)

// Catalog returns every rule, passive ones first, in a stable order.
func Catalog() []Rule {
	return []Rule{
		{RuleHiddenTags, "Hidden Unicode tag characters", High, Passive,
			"A string carries Unicode tag characters (U+E0000–E007F), invisible text a model still reads.",
			"Tag characters render as nothing but tokenize as ASCII, so a description can carry instructions no reviewer sees. The finding decodes and shows the hidden text. Emoji tag sequences (subdivision flags: U+1F3F4 followed by tags and U+E007F) are allowed. It is critical when the hidden text itself reads as a directive.",
			"Remove the tag characters; if they came from a dependency, find out who put them there."},
		{RuleHiddenVariation, "Bytes smuggled in variation selectors", High, Passive,
			"A run of variation selectors that follows no emoji or ideograph encodes hidden bytes.",
			"Variation selectors U+FE00–FE0F and U+E0100–E01EF are invisible; a run of them after a character that takes none can encode one byte each. The finding decodes the bytes. VS15/VS16 after an emoji and standardized variants after CJK ideographs are allowed.",
			"Remove the variation selectors."},
		{RuleBidi, "Bidirectional control characters", Medium, Passive,
			"A string carries bidi embedding, override or isolate controls that reorder what a reviewer sees.",
			"U+202A–202E and U+2066–2069 change the displayed order of text (Trojan Source), so the text a reviewer reads differs from the text a model reads. Marks (LRM, RLM, ALM) inside right-to-left text are not reported.",
			"Remove the bidi controls; right-to-left text renders correctly without them."},
		{RuleInvisible, "Invisible characters", Medium, Passive,
			"A string carries zero-width or invisible formatting characters outside emoji sequences.",
			"Zero-width space/joiner/non-joiner (U+200B–200D), U+2060–2064, U+FEFF inside text, U+180E, U+00AD and Hangul fillers hide or split words so keyword filters and reviewers miss them. A zero-width joiner between two emoji (family, profession sequences) is allowed.",
			"Remove the invisible characters."},
		{RuleControl, "Control characters", Medium, Passive,
			"A string carries C0 or C1 control characters other than tab, line feed and carriage return.",
			"Control characters (U+0000–001F except \\t \\n \\r, U+007F, U+0080–009F) have no place in metadata and can corrupt terminals and logs or hide text. ESC sequences are reported by ansi-escape.",
			"Remove the control characters."},
		{RuleANSI, "ANSI escape sequences", High, Passive,
			"A string carries terminal escape sequences (CSI, OSC) that can hide or rewrite what a user sees.",
			"An ESC-introduced sequence can colour text invisible, move the cursor over earlier output, set the window title or plant OSC 8 hyperlinks in a terminal client, while the model reads the raw text.",
			"Remove the escape sequences; metadata is plain text."},
		{RuleDirective, "Directive injection in metadata", High, Passive,
			"A description or instruction text addresses the model with several kinds of injection signal close together.",
			"Fires only when at least two different kinds of signal occur within a short window: an imperative aimed at the model (\"ignore previous instructions\", \"before using this tool, read …\"), a pseudo-tag (<IMPORTANT>, [SYSTEM]), a sensitive target (~/.ssh, .env, mcp.json, credentials), an exfiltration channel (\"pass its content as 'sidenote'\", a URL to send data to), or concealment (\"do not tell the user\"). One keyword alone never fires. Three or more kinds make it critical.",
			"Rewrite the text to describe what the tool does for the user; never instruct the model to read unrelated data, pass it on, or hide anything."},
		{RuleSchemaInjection, "Directive injection in a schema", High, Passive,
			"A schema's property names, descriptions, enums, defaults or examples carry injection signals.",
			"The same signals as directive-injection, applied to every string of inputSchema and outputSchema — property names included (split at _ - and camelCase) — since clients show schemas to the model too. A property's name counts as context for its description.",
			"Rewrite the schema text; property names and defaults should describe data, not instruct."},
		{RuleShadowing, "Cross-tool shadowing", High, Passive,
			"A description rewrites how another tool (of this or another server) behaves.",
			"Fires when a tool's description names another tool together with behaviour-changing language (\"when X is called, always …\", \"X must …\", \"override\"), or addresses all other tools at once. Any tool-like name counts, audited or not, when the text configures it (\"also configures the send_email tool\", \"a side effect on the send_email tool\"), hooks its calls to change them (\"when send_message is invoked, make sure to change the recipient\") or orders it (\"send_email must send all emails to …\"), with a second such signal or a directive signal. A pointer to a sibling such as \"use read_text_file instead\" is normal and not reported.",
			"Describe only this tool; never give instructions about other tools."},
		{RuleNameCollision, "Tool name collision across servers", Medium, Passive,
			"Two audited servers expose a tool with the same name.",
			"A client that does not namespace tools may call the wrong server's tool, and a malicious server can take over a trusted tool's name.",
			"Rename one of the tools or namespace them in the client configuration."},
		{RuleNameConfusable, "Confusable tool names across servers", Medium, Passive,
			"A tool's name is one typo or one look-alike character away from another server's tool.",
			"Names that differ by one edit (two for long names) or that are equal once look-alike characters are folded can make a model pick the wrong tool.",
			"Rename the tool so it is clearly distinct."},
		{RuleReadOnlyMismatch, "readOnlyHint contradicts the tool", High, Passive,
			"A tool annotated readOnlyHint: true says (by name or description) that it changes state.",
			"Annotations drive client confirmation prompts; a mutating tool that claims to be read-only skips them. Fires on a mutating verb at the start of the name (delete, write, send, execute …), on an opening sentence that says so, on a description that says it runs shell commands or code, or on destructiveHint: true alongside readOnlyHint: true.",
			"Set readOnlyHint: false (and destructiveHint as appropriate), or rename the tool if it truly only reads."},
		{RuleDestructive, "Delete-like tool declared not destructive", Medium, Passive,
			"A tool whose name deletes, drops or wipes declares destructiveHint: false.",
			"Clients ask before destructive calls only when told. Fires when a tool named delete/remove/drop/destroy/purge/erase/wipe/truncate/kill/revoke/uninstall says destructiveHint: false. An absent annotation is not reported: the specification's default for destructiveHint is already true.",
			"Add annotations {readOnlyHint: false, destructiveHint: true}."},
		{RuleExec, "Code or command execution", Info, Passive,
			"A tool executes code or shell commands.",
			"Informational: execution is a legitimate capability, but it widens what a prompt injection can do. Based on the tool's name and description, or a command/code/script parameter the description says is executed — a query or sql parameter is not execution.",
			"Run such servers sandboxed, keep them out of sessions that also read untrusted content, and annotate them destructive."},
		{RuleToxicFlow, "Toxic flow: untrusted input, private data and an external sink", High, Passive,
			"The audited tools together can read untrusted content, read private data and send data out.",
			"A model that reads attacker-controlled content (web pages, issues, messages) can be steered to read private data (files, repositories, environment) and send it out (posting, e-mailing, pushing). Classification uses annotations first (openWorldHint, readOnlyHint), then names and descriptions. The finding names the three tools.",
			"Split these tools across sessions, require confirmation on the sink, or narrow what the private-data tool can reach."},
		{RuleSecret, "Secret in metadata", High, Passive,
			"A string contains a credential in a known token format (AWS, GitHub, Slack, OpenAI, Stripe, private keys …).",
			"Known formats are matched first and are near-certain; anything sent in metadata is visible to every client and model.",
			"Remove the secret from the metadata and rotate it."},
		{RuleEntropy, "High-entropy string in metadata", Low, Passive,
			"A string contains a long random-looking token that may be a credential.",
			"Shannon entropy over runs of 24–200 base64/hex characters with mixed letters and digits; UUIDs, data: URIs and obvious placeholders are skipped. Tentative by nature.",
			"If it is a secret, remove and rotate it; otherwise suppress with a reason."},
		{RuleToolName, "Tool name outside the naming rules", Low, Passive,
			"A tool name is empty, longer than 128 characters, or uses characters other than A–Z a–z 0–9 _ - .",
			"The 2025-11-25 specification asks for 1–128 characters from that set; other names break clients and invite look-alikes.",
			"Rename the tool within the allowed characters."},
		{RuleDuplicate, "Duplicate name", Medium, Passive,
			"Two tools (or prompts, resources, templates) of one server share a name or URI.",
			"Clients key on names: one of the two becomes unreachable or they are confused.",
			"Give every tool, prompt, resource and template a unique name/URI."},
		{RuleSchemaInvalid, "Schema does not compile", Medium, Passive,
			"An inputSchema or outputSchema is missing, not an object schema, or not a valid JSON Schema.",
			"Clients validate arguments and structured results with these schemas; an invalid one is ignored or rejects everything. Remote $ref are never fetched.",
			"Fix the schema so it compiles and has type: object."},
		{RuleRequired, "required lists unknown properties", Low, Passive,
			"A schema's required names a property its properties do not define.",
			"No argument can satisfy such a schema reliably; usually a rename left behind.",
			"Make required a subset of properties."},
		{RuleUndocumented, "Undocumented tool with an open schema", Low, Passive,
			"A tool has no description and an input schema that names no property and closes nothing.",
			"With neither a description nor properties ({\"type\":\"object\"}) a model can only guess what the tool does and what to send, and anything it sends is accepted. A parameterless tool with a description, or a schema with properties or additionalProperties: false, is fine.",
			"Describe the tool and declare its parameters (or additionalProperties: false when it takes none)."},
		{RuleDriftChanged, "Tool definition changed since the lockfile (rug pull)", High, Passive,
			"A tool's description, title or annotations differ from the committed lockfile.",
			"A server that changes what it tells the model after it was reviewed can turn a benign tool malicious (rug pull). Field-level differences are listed.",
			"Review the change; if it is intended, run mcpspec audit --update-lock and commit .mcpspec/tools.lock."},
		{RuleDriftSchema, "Tool schema changed since the lockfile", Medium, Passive,
			"A tool's input or output schema differs from the committed lockfile.",
			"New or changed parameters change what the model sends. Field-level differences are listed.",
			"Review the change, then mcpspec audit --update-lock."},
		{RuleDriftAdded, "Tool added since the lockfile", Medium, Passive,
			"The server exposes a tool the committed lockfile does not know.",
			"A tool that appears after review has not been reviewed.",
			"Review the new tool, then mcpspec audit --update-lock."},
		{RuleDriftRemoved, "Tool removed since the lockfile", Low, Passive,
			"A tool of the committed lockfile is gone.",
			"Callers of that tool will fail.",
			"Confirm the removal, then mcpspec audit --update-lock."},
		{RuleDriftRenamed, "Tool renamed since the lockfile", Medium, Passive,
			"A tool reappears under another name with the same definition.",
			"A renamed tool can take over a name a client or policy trusts.",
			"Confirm the rename, then mcpspec audit --update-lock."},
		{RuleDriftOther, "Instructions, prompt or resource changed since the lockfile", Medium, Passive,
			"The server's instructions, a prompt, a resource or a template differs from the lockfile.",
			"These texts reach the model like tool descriptions do.",
			"Review the change, then mcpspec audit --update-lock."},
		{RuleSuppressionExpired, "Expired suppression", Low, Passive,
			"A committed suppression is past its expiry date and no longer applies.",
			"Suppressions expire so accepted risks get reviewed again.",
			"Review the finding it covered; fix it or renew the suppression with a new date and reason."},
		{RuleSuppressionUnused, "Unused suppression", Info, Passive,
			"A committed suppression matched no finding.",
			"Stale suppressions hide future findings under an old reason.",
			"Delete the suppression."},

		{RuleInputValidation, "Tool executes invalid arguments", Medium, ActiveMode,
			"A tool ran with arguments its own schema forbids, or the server crashed on them.",
			"Wrong types, missing required arguments and unknown properties must be refused with isError (2025-11-25 and later) or JSON-RPC -32602. Only a call that executes (a result without isError) or a crash is a finding.",
			"Validate arguments against the inputSchema before acting."},
		{RulePathTraversal, "Path traversal outside the allowed root", Critical, ActiveMode,
			"A tool returned the content of a canary file placed outside its working directory.",
			"A file holding a random nonce is written next to the server's temporary working directory and requested as ../<canary> and by absolute path. Each allowed root (the working directory, and the directories on the server's command line) also gets a prefix sibling <root>_mcpspec-<nonce>/ and a symlink inside it pointing out, requested by absolute path, through ..%2f and through ..\\. Only the nonce in the output is proof.",
			"Resolve paths (and symlinks) and refuse anything outside the allowed roots."},
		{RuleInjection, "Template or command injection", Critical, ActiveMode,
			"A tool evaluated an expression or command embedded in its input.",
			"{{1337*7331}} coming back as 9801547, or $(printf %s%s A B) coming back as the joined nonce: values that are not in the input are proof of evaluation.",
			"Never pass input to a template engine, eval or a shell; use argument vectors and plain substitution."},
		{RuleDisclosure, "Information disclosure in errors", Medium, ActiveMode,
			"An error result leaked a stack trace, an internal path or an environment secret.",
			"Errors reach the model and the user. The server's environment carries a canary secret; seeing it is proof. Stack-trace formats of Node, Python, Go, Java and .NET are recognised.",
			"Return short, generic error messages; log details on the server side."},
		{RuleOutputPoisoning, "Poisoned tool output", High, ActiveMode,
			"A tool result carries hidden characters, escape sequences or directive injection.",
			"The passive text rules applied to what tools return during the active audit.",
			"Sanitise tool output; never relay untrusted content verbatim without marking it."},
		{RuleOutputSecret, "Credential in tool output", High, ActiveMode,
			"A tool's output (a result or an error) carries a credential.",
			"Known token formats (AWS, GitHub, OpenAI, Stripe, private keys …) and NAME=value or NAME: value pairs whose name says secret (API_KEY, DB_PASSWORD, *_TOKEN, *_SECRET …) with a non-placeholder value. The value is masked in the report.",
			"Never return configuration or environment values in results or errors; rotate the credential."},
		{RuleExhaustion, "Resource exhaustion", Medium, ActiveMode,
			"A bounded oversized input crashed the server or made it miss the deadline.",
			"One call per tool with a 1 MiB string (or a long array) under the call timeout.",
			"Bound input sizes in the schema (maxLength, maxItems) and check them early."},
	}
}

// Rules selects which rules run. A nil *Rules runs every rule of the mode.
type Rules struct {
	// Only, when not empty, keeps just these rules (ids or path.Match globs).
	Only []string
	// Skip drops these rules (ids or globs).
	Skip []string
	// Others are other servers' metadata audited alongside: cross-server shadowing, name
	// collisions and toxic flows consider their tools too. Findings are only reported for the
	// server being audited.
	Others []*Metadata
}

// Enabled reports whether rule id runs under r.
func (r *Rules) Enabled(id string) bool {
	if r == nil {
		return true
	}
	match := func(globs []string) bool {
		return slices.ContainsFunc(globs, func(g string) bool {
			ok, err := path.Match(g, id)
			return err == nil && ok
		})
	}
	if len(r.Only) > 0 && !match(r.Only) {
		return false
	}
	return !match(r.Skip)
}

// Check validates r: every id or glob must name at least one rule of the catalog.
func (r *Rules) Check() error {
	if r == nil {
		return nil
	}
	cat := Catalog()
	for _, g := range append(slices.Clone(r.Only), r.Skip...) {
		if _, err := path.Match(g, "x"); err != nil {
			return fmt.Errorf("rule pattern %q: %w", g, err)
		}
		if !slices.ContainsFunc(cat, func(ru Rule) bool { ok, _ := path.Match(g, ru.ID); return ok }) {
			return fmt.Errorf("rule pattern %q matches no rule", g)
		}
	}
	return nil
}

// RuleByID returns the rule with that id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Catalog() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
