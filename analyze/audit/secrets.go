package audit

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// tokenFormats are credential formats recognised with certainty.
var tokenFormats = sync.OnceValue(func() []struct {
	name string
	re   *regexp.Regexp
} {
	return []struct {
		name string
		re   *regexp.Regexp
	}{
		{"private key", regexp.MustCompile(`-----BEGIN ((RSA|EC|DSA|OPENSSH|PGP|ENCRYPTED) )?PRIVATE KEY( BLOCK)?-----`)},
		{"AWS access key id", regexp.MustCompile(`\b(AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b`)},
		{"AWS secret access key", regexp.MustCompile(`(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}\b`)},
		{"GitHub token", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,255}\b`)},
		{"GitHub fine-grained token", regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{50,255}\b`)},
		{"GitLab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}\b`)},
		{"Slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}\b`)},
		{"Slack webhook", regexp.MustCompile(`https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}`)},
		{"Anthropic API key", regexp.MustCompile(`\bsk-ant-[a-z]+\d*-[A-Za-z0-9_-]{40,}`)},
		{"OpenAI API key", regexp.MustCompile(`\bsk-(proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}|\bsk-[A-Za-z0-9]{48}\b`)},
		{"Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
		{"Stripe key", regexp.MustCompile(`\b(sk|rk)_(live|test)_[0-9a-zA-Z]{24,}\b`)},
		{"SendGrid key", regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b`)},
		{"npm token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`)},
		{"PyPI token", regexp.MustCompile(`\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`)},
		{"Hugging Face token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{34,}\b`)},
		{"JSON Web Token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
		{"password in URL", regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://[^/\s:@"']+:(?P<t>[^/\s:@"']{6,})@`)},
	}
})

// placeholder matches values that are examples, not secrets.
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)example|sample|dummy|placeholder|your[_-]|xxxx|\*\*\*|<[^>]*>|\$\{|\{\{|^(password|pass|secret|changeme|redacted)$`)
})

// entropyToken matches candidate random tokens.
var entropyToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9+/=_-]{24,200}`) })

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

// secretFindings reports credentials in one string: known formats (certain), else high-entropy
// tokens (tentative).
func secretFindings(subj Subject, t text) []Finding {
	if t.key || strings.HasPrefix(t.s, "data:") {
		return nil
	}
	var out []Finding
	known := false
	for _, tf := range tokenFormats() {
		m := tf.re.FindStringSubmatchIndex(t.s)
		if m == nil {
			continue
		}
		start, end := m[0], m[1]
		if i := tf.re.SubexpIndex("t"); i > 0 && m[2*i] >= 0 {
			start, end = m[2*i], m[2*i+1]
		}
		if placeholder().MatchString(t.s[start:end]) {
			continue
		}
		known = true
		r, _ := RuleByID(RuleSecret)
		out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Certain, Subject: subj, Fix: r.Fix,
			Message:  fmt.Sprintf("the string at %s contains a %s", pointerOr(t.pointer), tf.name),
			Evidence: redacted(t, start, end),
			Signals:  []Signal{{Kind: "token-format", Text: tf.name, Pointer: t.pointer, Start: start, End: end}}})
		break
	}
	if known {
		return out
	}
	last := t.pointer[strings.LastIndexByte(t.pointer, '/')+1:]
	if last == "uri" || last == "uriTemplate" || last == "src" || last == "mimeType" || last == "pattern" || strings.Contains(t.pointer, "/icons/") {
		return nil
	}
	for _, m := range entropyToken().FindAllStringIndex(t.s, 16) {
		tok := t.s[m[0]:m[1]]
		if !randomLooking(tok) || placeholder().MatchString(tok) {
			continue
		}
		r, _ := RuleByID(RuleEntropy)
		out = append(out, Finding{RuleID: r.ID, Severity: r.Severity, Confidence: Tentative, Subject: subj, Fix: r.Fix,
			Message:  fmt.Sprintf("the string at %s contains a %d-character random-looking token (%.1f bits/char)", pointerOr(t.pointer), len(tok), entropy(tok)),
			Evidence: redacted(t, m[0], m[1]),
			Signals:  []Signal{{Kind: "entropy", Text: fmt.Sprintf("%.2f bits/char over %d chars", entropy(tok), len(tok)), Pointer: t.pointer, Start: m[0], End: m[1]}}})
		break
	}
	return out
}

// randomLooking reports tokens with letters and digits whose entropy is that of random text:
// at least 4.2 bits/char for base64-like tokens, 3.4 for hex of 32+ characters.
func randomLooking(tok string) bool {
	if uuidRE().MatchString(tok) {
		return false
	}
	var digits, letters, upper, lower int
	for _, r := range tok {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z':
			letters++
			lower++
		case r >= 'A' && r <= 'Z':
			letters++
			upper++
		}
	}
	if digits == 0 || letters == 0 {
		return false
	}
	// Identifiers and words joined by separators are not random: require few separators.
	if strings.Count(tok, "_")+strings.Count(tok, "-") > len(tok)/8 {
		return false
	}
	e := entropy(tok)
	if isHex(tok) {
		return len(tok) >= 32 && e >= 3.4
	}
	return upper > 0 && lower > 0 && e >= 4.2
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

// redacted builds evidence that shows where a secret is without repeating it: the first four
// characters, then asterisks.
func redacted(t text, start, end int) *Evidence {
	secret := t.s[start:end]
	keep := min(4, len(secret))
	masked := t.s[:start] + secret[:keep] + strings.Repeat("*", min(len(secret)-keep, 12)) + t.s[end:]
	e := evidence(t.pointer, masked, start, start+keep+min(len(secret)-keep, 12), "")
	e.Start, e.End = start, end
	return e
}

// secretAssignment matches NAME=value and NAME: value pairs whose name says it holds a
// credential (API_KEY, DB_PASSWORD, GITHUB_TOKEN, client_secret …); t is the value.
var secretAssignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b([a-z][a-z0-9_.-]*[_.-])?(api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|secret|password|passwd|pwd|token|auth|credentials?|client[_-]?secret|session[_-]?key)\b["']?\s*[:=]\s*["']?(?P<t>[^\s"'` + "`" + `,;&<>]{4,200})`)
})

// secretSpan is one credential found in a text.
type secretSpan struct {
	what       string
	start, end int
}

// findSecrets returns the credentials of s: known token formats, then NAME=value pairs of
// secret-looking names whose value is not a placeholder(). skip lists values not to report
// (the sandbox's canary, which has its own finding).
func findSecrets(s string, skip ...string) []secretSpan {
	var out []secretSpan
	overlaps := func(a, b int) bool {
		return slices.ContainsFunc(out, func(o secretSpan) bool { return a < o.end && o.start < b })
	}
	keep := func(what string, a, b int) {
		v := s[a:b]
		if placeholder().MatchString(v) || overlaps(a, b) || slices.ContainsFunc(skip, func(k string) bool { return k != "" && strings.Contains(v, k) }) {
			return
		}
		out = append(out, secretSpan{what, a, b})
	}
	for _, tf := range tokenFormats() {
		ti := tf.re.SubexpIndex("t")
		for _, m := range tf.re.FindAllStringSubmatchIndex(s, 16) {
			a, b := m[0], m[1]
			if ti > 0 && m[2*ti] >= 0 {
				a, b = m[2*ti], m[2*ti+1]
			}
			keep(tf.name, a, b)
		}
	}
	ti := secretAssignment().SubexpIndex("t")
	for _, m := range secretAssignment().FindAllStringSubmatchIndex(s, 32) {
		a, b := m[2*ti], m[2*ti+1]
		v := s[a:b]
		if strings.EqualFold(v, "true") || strings.EqualFold(v, "false") || strings.EqualFold(v, "null") || strings.EqualFold(v, "none") ||
			strings.EqualFold(v, "undefined") || strings.Trim(v, "*xX.•") == "" {
			continue
		}
		keep(fmt.Sprintf("%s value", strings.ToUpper(s[m[0]:m[2*ti]])), a, b)
	}
	slices.SortFunc(out, func(x, y secretSpan) int { return x.start - y.start })
	return out
}

// maskSpans replaces every span's characters after the first few by asterisks, keeping
// offsets (one byte per masked byte), so evidence built on the result never repeats a secret.
func maskSpans(s string, spans []secretSpan) string {
	if len(spans) == 0 {
		return s
	}
	b := []byte(s)
	for _, sp := range spans {
		keep := min(4, (sp.end-sp.start)/4)
		for i := sp.start + keep; i < sp.end; i++ {
			b[i] = '*'
		}
	}
	return string(b)
}
