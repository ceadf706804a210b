package audit

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The kinds of directive signal. A directive-injection finding needs two different kinds close
// together; one kind alone, however often, never fires.
const (
	SigImperative  = "imperative"
	SigPseudoTag   = "pseudo-tag"
	SigSensitive   = "sensitive-target"
	SigExfiltrate  = "exfiltration"
	SigConcealment = "concealment"
)

// secretFile matches well-known secret files (the targets of exfiltration requests).
const secretFile = `(~/\.ssh\b|\.ssh/|\bid_(rsa|dsa|ecdsa|ed25519)\b|/etc/(passwd|shadow|sudoers)\b|\.aws/credentials|~/\.aws\b|\.kube/config|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials|\.pgpass\b|\.docker/config\.json|\bmcp\.json\b|claude_desktop_config\.json|~/\.cursor\b|\.config/gcloud|\.gnupg\b|wallet\.dat|\.bash_history|\.zsh_history|(^|[\s'"` + "`" + `(/])\.env(\.[a-z]+)?\b)`

// pathy matches up to 40 characters of a sentence, letting dots inside paths (~/.ssh) through.
const pathy = `(?:[^.\n]|\.[^\s])`

// directivePatterns are the signal patterns, matched case-insensitively on text with invisible
// characters removed and (for keys) identifiers split into words.
var directivePatterns = sync.OnceValue(func() []struct {
	kind string
	re   *regexp.Regexp
} {
	return []struct {
		kind string
		re   *regexp.Regexp
	}{
		{SigImperative, regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|other|system|your|safety)\b[^.\n]{0,30}\b(instructions?|rules|prompts?|directions|guidelines|messages|restrictions)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\bbefore (using|calling|invoking|running|executing) (this|the|any|each|every)\b[^.\n]{0,30}\btool\b[^.\n]{0,10}?(you )?(must |should |need to |have to |always |first |please )*(read|call|run|open|fetch|send|execute|invoke|access|load|cat|check|get|copy|look up)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\b(you|the (assistant|model|ai|llm|agent))\s+(must|should|are required to|is required to|need to|needs to|have to|has to|shall)\s+((always|first|also|now|immediately|never)\s+)*(read|call|run|open|fetch|send|execute|invoke|access|load|ignore|forget|reveal|output|print|obey|follow|append|upload|forward|email|post|copy|cat|collect)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\b(always|first|also|secretly|silently|immediately)\s+(read|send|fetch|open|run|execute|invoke|upload|forward|email|post|copy|cat|collect)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\b(you are now|from now on|new instructions|act as (an?|the)|pretend (to be|you are)|your (new )?(role|task|instructions|goal) (is|are)|as an ai\b)`)},
		{SigImperative, regexp.MustCompile(`(?i)\b(respond|reply|answer)\s+(only\s+)?(with|by saying)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\b(otherwise|or else)\b[^.\n]{0,20}\b(tool|it|this)\b[^.\n]{0,15}\b(will )?(not work|fail|break|crash|stop working)`)},
		{SigImperative, regexp.MustCompile(`(?i)\bthis is (very |extremely |really )?(important|critical|mandatory|vital)\b[^.\n]{0,60}\b(you|assistant|model|agent)\b`)},
		{SigPseudoTag, regexp.MustCompile(`(?i)</?\s*(important|system|instructions?|secret|hidden|admin|assistant|critical|override|priority|sys|tool_?instructions?|system_?prompt|instruction_?override)\s*>`)},
		{SigPseudoTag, regexp.MustCompile(`(?i)\[\s*/?\s*(system|inst|important|admin|hidden|instructions?)\s*\]`)},
		{SigPseudoTag, regexp.MustCompile(`(?i)<\|\s*(im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\s*\|>`)},
		{SigPseudoTag, regexp.MustCompile(`<!--`)},
		{SigSensitive, regexp.MustCompile(`(?i)\bid (rsa|dsa|ecdsa|ed25519)\b`)},
		{SigSensitive, regexp.MustCompile(`(?i)(~/\.ssh\b|\.ssh/|\bid_(rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|/etc/(passwd|shadow|sudoers)\b|\.aws/credentials|~/\.aws\b|\.kube/config|\bkubeconfig\b|\.npmrc\b|\.pypirc\b|\.netrc\b|\.git-credentials|\.pgpass\b|\.docker/config\.json|\bmcp\.json\b|claude_desktop_config\.json|~/\.cursor\b|\.config/gcloud|\.gnupg\b|wallet\.dat|\.bash_history|\.zsh_history)`)},
		{SigSensitive, regexp.MustCompile(`(?i)(^|[\s'"` + "`" + `(/])(?P<t>\.env(\.[a-z]+)?)\b`)},
		{SigSensitive, regexp.MustCompile(`(?i)\b((private|secret|ssh|signing) keys?|api[ _-]?keys?|access[ _-]?tokens?|auth[ _-]?tokens?|bearer tokens?|refresh tokens?|session (cookies?|tokens?)|passwords?|passwd|credentials?|seed phrase|mnemonic phrase|(conversation|chat) history|previous messages|system prompt|environment variables)\b`)},
		{SigExfiltrate, regexp.MustCompile(`(?i)\b(pass|put|include|send|append|add|insert|provide|place|copy|paste|attach|embed|encode|store|write)\s+(its|their|the|this|that|all|any|full|entire|your)?\s*(full |entire |complete |whole )?(content|contents|data|text|output|results?|conversation|history|messages?|information|details|secrets?|credentials?|keys?|tokens?|passwords?)\b` + pathy + `{0,60}?\b(as|in|into|to|via|through|inside|within)\s+(the\s+)?['"` + "`" + `]?[A-Za-z_][\w.-]*['"` + "`" + `]?(\s+(parameter|param|field|argument|arg|property))?`)},
		{SigExfiltrate, regexp.MustCompile(`(?i)\b(send|post|upload|forward|transmit|exfiltrate|leak|e-?mail|mail|bcc|cc)\b[^.\n]{0,60}?\b(to|at)\s+(https?://\S+|[\w.+-]+@[\w-]+\.[\w.]+)`)},
		{SigExfiltrate, regexp.MustCompile(`(?i)\bexfiltrat\w*`)},
		// The content of a secret file asked for ("the contents of ~/.aws/credentials",
		// "content from reading ssh id rsa" as a property name).
		{SigExfiltrate, regexp.MustCompile(`(?i)\b(contents?|text|data|output)\s+(of|from)\s+(reading\s+|the\s+|your\s+|the user'?s\s+)*` + secretFile)},
		{SigExfiltrate, regexp.MustCompile(`(?i)\b(contents?|text|output|result)\s+(of|from)\s+(reading|running|calling|executing)\b`)},
		// A plain request to read a secret file: a bare imperative at the start of a sentence.
		// "open", "copy" and "edit" are left out: set-up instructions ("copy .env.example to
		// .env and open it") say them in READMEs a tool may return.
		{SigImperative, regexp.MustCompile(`(?i)(^|[.!?:;]\s+|\n\s*|\b(please|first|now|then|also),?\s+)(read|cat|print|dump|display|include|send|upload|attach|fetch|get)\s+` + pathy + `{0,40}?` + secretFile)},
		// French: imperatives, concealment, exfiltration.
		{SigImperative, regexp.MustCompile(`(?i)\b(ignore[zr]?|oublie[zr]?|contourne[zr]?)\b[^.\n]{0,40}\b(instructions|consignes|règles|directives)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\bavant d['’]\s*(utiliser|appeler|exécuter|lancer|invoquer)\b[^.\n]{0,40}?\b(lisez|lire|lis|ouvrez|ouvrir|envoyez|envoyer|appelez|appeler|récupérez|consultez|copiez|chargez)\b`)},
		{SigImperative, regexp.MustCompile(`(?i)\b(vous devez|tu dois|il faut|veuillez)\s+(toujours\s+|d['’]abord\s+|aussi\s+)*(lire|envoyer|ouvrir|appeler|transmettre|inclure|copier|ignorer|oublier|révéler)\b`)},
		{SigConcealment, regexp.MustCompile(`(?i)\b(ne|n['’])\s*(le |la |les |lui |leur |en |rien )?(dites|dis|dire|mentionnez|mentionne|informez|informe|révélez|révèle|signalez|prévenez|montrez|affichez)\s+(pas|jamais|rien)\b|\bsans\s+(le |l['’]|en |rien )?(dire|mentionner|informer|prévenir|signaler|avertir)\b|\bl['’]utilisateur\s+ne\s+doit\s+(pas|jamais)\b`)},
		{SigExfiltrate, regexp.MustCompile(`(?i)\b(passez|mettez|incluez|ajoutez|envoyez|transmettez|copiez|insérez|joignez)\s+(son|sa|ses|leur|leurs|le|la|les|tout le|tout)?\s*(contenu|contenus|données|texte|résultat|fichier|clé|clés|secret|mot de passe)\b` + pathy + `{0,60}?\b(dans|comme|en tant que|via|à|au|vers)\b`)},
		{SigSensitive, regexp.MustCompile(`(?i)\b(mots? de passe|clés? (privées?|api|ssh|secrètes?)|identifiants|jetons? d['’]accès|historique de (la )?conversation|invite système)\b`)},
		// A parameter that asks for the conversation or the system prompt is a channel out.
		{SigExfiltrate, regexp.MustCompile(`(?i)^(full |entire |complete |whole )?(system prompt|conversation history|chat history|previous messages|message history|conversation|chat log|tools list|tool list|available tools)s?$`)},
		{SigExfiltrate, regexp.MustCompile(`(?i)https?://[^\s"'<>]+\?[^\s"'<>]*=(\{|\$|<|%s|\[)`)},
		{SigConcealment, regexp.MustCompile(`(?i)\b(do not|don't|dont|never|without)\s+(\w+\s+(it\s+)?(or|and|nor)\s+)?(tell|telling|inform|informing|notify|notifying|alert|alerting|mention|mentioning|reveal|revealing|show|showing|let|letting|ask|asking|disclose|disclosing|warn|warning)\b[^.\n]{0,25}\b(user|users|human|person|operator|them)\b`)},
		{SigConcealment, regexp.MustCompile(`(?i)\b(user|human)s?\s+(should|must|need|needs|does|do|will)\s*(not|n't|never)\s+(to\s+)?(know|see|notice|be (told|informed|aware)|find out)`)},
		{SigConcealment, regexp.MustCompile(`(?i)\b(keep|hide)\s+(this|it|these|that|the \w+)\s+(secret|hidden|confidential|from)\b`)},
		{SigConcealment, regexp.MustCompile(`(?i)\b(silently|secretly|covertly|quietly|discreetly|invisibly)\s+(send|read|include|pass|copy|upload|forward|call|add|append|exfiltrate|collect|access|e-?mail|bcc|attach)\b`)},
		{SigConcealment, regexp.MustCompile(`(?i)\bnot (be )?(visible|shown|displayed|reported) to the user\b|\b(do not|don't|never) (mention|say|disclose|reveal) (that|this|anything about)\b|\bcould (even )?upset the user\b`)},
	}
})

// signalWindow is how close (in bytes) signals must be to count together.
const signalWindow = 500

// normText is a string prepared for matching: invisible characters dropped, identifiers split
// into words, with a map back to offsets in the original.
type normText struct {
	s   string
	off []int // off[i] is the original offset of normalized byte i; off[len(s)] the end
}

// textConfusables folds the Cyrillic and Greek letters that look like Latin ones, so that
// "rеаd" written with Cyrillic е and а reads as "read" (the folding of the Unicode confusables
// table restricted to what renders identically in common fonts).
var textConfusables = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x',
	'і': 'i', 'ї': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'ɡ': 'g', 'ɑ': 'a', 'ı': 'i',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'У': 'Y', 'Х': 'X',
	'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Һ': 'H', 'Ӏ': 'l',
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
}

// normalize prepares s for matching: invisible characters dropped, compatibility forms folded
// (NFKC: fullwidth ｒｅａｄ, mathematical 𝐫𝐞𝐚𝐝 and ligatures become ASCII), Cyrillic and Greek
// look-alikes folded onto Latin letters. Keys are identifiers: "_", "-" and lower→upper case
// changes become spaces.
func normalize(s string, key bool) normText {
	var b strings.Builder
	var off []int
	prev := rune(0)
	emit := func(i int, r rune) {
		if key {
			if r == '_' || r == '-' {
				r = ' '
			} else if unicode.IsUpper(r) && unicode.IsLower(prev) {
				b.WriteByte(' ')
				off = append(off, i)
			}
		}
		n := b.Len()
		b.WriteRune(r)
		for k := n; k < b.Len(); k++ {
			off = append(off, i)
		}
		prev = r
	}
	for i, r := range s {
		if invisibleKind(r) != "" || isTag(r) || unicode.Is(unicode.Cf, r) {
			continue
		}
		if r < 0x80 {
			emit(i, r)
			continue
		}
		if c, ok := textConfusables[r]; ok {
			emit(i, c)
			continue
		}
		if folded := norm.NFKC.String(string(r)); folded != string(r) {
			for _, f := range folded {
				if c, ok := textConfusables[f]; ok {
					f = c
				}
				emit(i, f)
			}
			continue
		}
		emit(i, r)
	}
	off = append(off, len(s))
	return normText{s: b.String(), off: off}
}

// signalsIn returns the directive signals of s (positions in the original string).
func signalsIn(s, pointer string, key bool) []Signal {
	n := normalize(s, key)
	var out []Signal
	for _, p := range directivePatterns() {
		t := p.re.SubexpIndex("t")
		for _, m := range p.re.FindAllStringSubmatchIndex(n.s, 8) {
			start, end := m[0], m[1]
			if t > 0 && m[2*t] >= 0 {
				// The pattern marks the part to report (it consumed a separator before it).
				start, end = m[2*t], m[2*t+1]
			}
			os, oe := n.off[start], n.off[end]
			out = append(out, Signal{Kind: p.kind, Text: s[os:oe], Pointer: pointer, Start: os, End: oe})
		}
	}
	slices.SortFunc(out, func(a, b Signal) int { return a.Start - b.Start })
	return dedupeSignals(out)
}

// dedupeSignals drops signals of the same kind that overlap an earlier one.
func dedupeSignals(in []Signal) []Signal {
	var out []Signal
	for _, s := range in {
		if slices.ContainsFunc(out, func(o Signal) bool {
			return o.Kind == s.Kind && o.Pointer == s.Pointer && s.Start < o.End && o.Start < s.End
		}) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// cluster is the best group of signals within one window: the most distinct kinds.
type cluster struct {
	signals []Signal
	kinds   []string
}

// bestCluster finds the window with the most distinct signal kinds. Signals from another
// pointer (context, such as a property's name) count as present in every window.
func bestCluster(sigs []Signal, pointer string) cluster {
	var local, ctx []Signal
	for _, s := range sigs {
		if s.Pointer == pointer {
			local = append(local, s)
		} else {
			ctx = append(ctx, s)
		}
	}
	var best cluster
	consider := func(group []Signal) {
		group = append(slices.Clone(group), ctx...)
		var kinds []string
		for _, s := range group {
			if !slices.Contains(kinds, s.Kind) {
				kinds = append(kinds, s.Kind)
			}
		}
		if len(kinds) > len(best.kinds) || (len(kinds) == len(best.kinds) && len(group) > len(best.signals)) {
			slices.Sort(kinds)
			best = cluster{signals: group, kinds: kinds}
		}
	}
	if len(local) == 0 {
		consider(nil)
	}
	for i := range local {
		j := i
		for j < len(local) && local[j].Start-local[i].Start <= signalWindow {
			j++
		}
		consider(local[i:j])
	}
	return best
}

// directiveFinding turns the best cluster of a string into a finding, or nil below two kinds.
func directiveFinding(rule string, subj Subject, t text, sigs []Signal) *Finding {
	c := bestCluster(sigs, t.pointer)
	if len(c.kinds) < 2 {
		return nil
	}
	sev, conf := High, Tentative
	if len(c.kinds) >= 3 {
		sev, conf = Critical, Firm
	}
	start, end := len(t.s), 0
	for _, s := range c.signals {
		if s.Pointer == t.pointer {
			start, end = min(start, s.Start), max(end, s.End)
		}
	}
	if start > end {
		start, end = 0, len(t.s)
	}
	r, _ := RuleByID(rule)
	where := "text"
	if t.schema {
		where = "schema text"
	}
	return &Finding{
		RuleID: rule, Severity: sev, Confidence: conf, Subject: subj,
		Message:  "the " + where + " at " + pointerOr(t.pointer) + " combines " + strings.Join(c.kinds, ", ") + " signals",
		Evidence: evidence(t.pointer, t.s, start, end, ""),
		Signals:  c.signals,
		Fix:      r.Fix,
	}
}

// pointerOr names a pointer for messages ("the instructions" for the empty one).
func pointerOr(p string) string {
	if p == "" {
		return "(the whole text)"
	}
	return p
}
