package redact

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	htmltemplate "html/template"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// nasty are secrets full of what escaping changes. Each holds the markers CORE1 and CORE2 on
// either side of its nasty part, so a leak of any piece of it shows as a marker in the output.
var nasty = map[string]string{
	"quote and backslash": `CORE1p@ss"w\ordCORE2`,
	"tab":                 "CORE1a\tbCORE2",
	"newline":             "CORE1line\nnextCORE2",
	"html":                "CORE1<&>'CORE2",
	"percent and plus":    "CORE1100%+a b/c?d=eCORE2",
	"non-ASCII":           "CORE1mot de passe: héhé, пароль, 密码CORE2",
	"emoji":               "CORE1🔑🗝️CORE2",
	"control":             "CORE1a\x01b\x7fcCORE2",
	"cdata end":           "CORE1]]>CORE2",
	"line separator":      "CORE1a\u2028bCORE2",
	"everything":          "CORE1\"\\\t\n<&>%é🔑'+]]>CORE2",
}

// writers are the encoders of the standard library and our dependencies that outputs use,
// each writing s inside a document of its kind.
func writers(t *testing.T) map[string]func(string) string {
	tmpl := htmltemplate.Must(htmltemplate.New("x").Parse(`<p title="{{.}}">{{.}}</p><pre>{{.}}</pre>`))
	return map[string]func(string) string{
		"raw":  func(s string) string { return "text " + s + " text" },
		"json": func(s string) string { b, _ := json.Marshal(map[string]string{"k": s}); return string(b) },
		"json without HTML escaping": func(s string) string {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(map[string]string{"k": s})
			return b.String()
		},
		"json indented": func(s string) string { b, _ := json.MarshalIndent([]string{s}, "", "  "); return string(b) },
		"go %q":         func(s string) string { return fmt.Sprintf("got %q", s) },
		"go %+q":        func(s string) string { return fmt.Sprintf("got %+q", s) },
		"xml": func(s string) string {
			v := struct {
				XMLName xml.Name `xml:"case"`
				Attr    string   `xml:"message,attr"`
				Text    string   `xml:",chardata"`
			}{Attr: s, Text: s}
			b, err := xml.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		},
		"xml cdata": func(s string) string {
			v := struct {
				XMLName xml.Name `xml:"out"`
				Data    string   `xml:",cdata"`
			}{Data: s}
			b, _ := xml.Marshal(v)
			return string(b)
		},
		"html.EscapeString": func(s string) string { return "<td>" + html.EscapeString(s) + "</td>" },
		"html/template": func(s string) string {
			var b strings.Builder
			if err := tmpl.Execute(&b, s); err != nil {
				t.Fatal(err)
			}
			return b.String()
		},
		"url query": func(s string) string { return "http://h/?token=" + url.QueryEscape(s) + "&x=1" },
		"url path":  func(s string) string { return "http://h/" + url.PathEscape(s) + "/x" },
		"url values": func(s string) string {
			u := url.URL{Scheme: "http", Host: "h", RawQuery: url.Values{"access_token": {s}}.Encode()}
			return u.String()
		},
		"yaml": func(s string) string { b, _ := yaml.Marshal(map[string]string{"k": s}); return string(b) },
		"yaml in a list": func(s string) string {
			b, _ := yaml.Marshal([]map[string]string{{"actual": strconv.Quote(s)}})
			return string(b)
		},
		"json of go %q": func(s string) string { b, _ := json.Marshal(strconv.Quote(s)); return string(b) },
		"json of json":  func(s string) string { in, _ := json.Marshal(s); b, _ := json.Marshal(string(in)); return string(b) },
		"xml of go %q": func(s string) string {
			var b bytes.Buffer
			_ = xml.EscapeText(&b, []byte(strconv.Quote(s)))
			return b.String()
		},
		"html of json":  func(s string) string { in, _ := json.Marshal(s); return html.EscapeString(string(in)) },
		"one line":      func(s string) string { return strings.Join(strings.Fields("x "+s+" y"), " ") },
		"table cell":    func(s string) string { return strings.NewReplacer("\t", " ", "\n", " ").Replace(s) },
		"yaml single":   func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" },
		"query of json": func(s string) string { in, _ := json.Marshal(s); return url.QueryEscape(string(in)) },
		"yaml block": func(s string) string {
			b, _ := yaml.Marshal(map[string]map[string]string{"failure": {"message": s + "\n"}})
			return string(b)
		},
		"indented lines": func(s string) string { return "  message: " + strings.ReplaceAll(s, "\n", "\n      ") },
	}
}

// TestMaskCatchesEveryWriter writes each nasty secret through each encoder an output uses and
// checks that masking the result leaves no piece of the secret.
func TestMaskCatchesEveryWriter(t *testing.T) {
	for name, secret := range nasty {
		m := NewMasker()
		m.Add(secret)
		for wname, write := range writers(t) {
			out := write(secret)
			masked := m.Mask(out)
			if strings.Contains(masked, "CORE1") || strings.Contains(masked, "CORE2") {
				t.Errorf("%s through %s: a piece of the secret is left:\n  written: %s\n  masked:  %s", name, wname, out, masked)
			}
			if !strings.Contains(masked, Mask) {
				t.Errorf("%s through %s: nothing masked in %s", name, wname, masked)
			}
		}
	}
}

func TestFormsOfAQuotedPassword(t *testing.T) {
	forms := Forms(`p@ss"w\ord`)
	for _, want := range []string{
		`p@ss"w\ord`,             // raw
		`p@ss\"w\\ord`,           // JSON, Go %q, YAML double-quoted
		`p@ss\\\"w\\\\ord`,       // JSON of JSON
		`p@ss&#34;w\ord`,         // XML, html, html/template
		`p@ss&quot;w\\ord`,       // markdown
		`p%40ss%22w%5Cord`,       // URL query and path
		`p@ss\\&quot;w\\\\ord`,   // markdown of JSON
		`p@ss&amp;#34;w\ord`,     // HTML of XML
		`p%40ss%5C%22w%5C%5Cord`, // URL query of JSON
	} {
		found := false
		for _, f := range forms {
			found = found || f == want
		}
		if !found {
			t.Errorf("Forms lacks %s", want)
		}
	}
	for i := 1; i < len(forms); i++ {
		if len(forms[i]) > len(forms[i-1]) {
			t.Fatalf("forms not longest first: %q before %q", forms[i-1], forms[i])
		}
	}
}

func TestShortAndNilMaskNothing(t *testing.T) {
	m := NewMasker()
	m.Add("abc")
	m.Add("")
	if got := m.Mask("abc abc"); got != "abc abc" {
		t.Errorf("a 3-byte value was masked: %q", got)
	}
	if m.Len() != 0 {
		t.Errorf("Len = %d, want 0", m.Len())
	}
	// A value of only whitespace has no form left once folded; the folded form must not be
	// the empty string (which would match everywhere).
	m.Add("\t\t\t\t")
	if got := m.Mask("a b"); got != "a b" {
		t.Errorf("whitespace secret garbled %q into %q", "a b", got)
	}
	var nilM *Masker
	nilM.Add("secret")
	if got := nilM.Mask("secret"); got != "secret" || nilM.Len() != 0 {
		t.Errorf("nil masker: %q", got)
	}
}

func TestLongerSecretMaskedWhole(t *testing.T) {
	m := NewMasker()
	m.Add("abcd")
	m.Add("abcdefgh")
	if got := m.Mask("x abcdefgh y abcd z"); got != "x *** y *** z" {
		t.Errorf("Mask = %q", got)
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"API_KEY": true, "access_token": true, "Authorization": true, "client-secret": true,
		"PASSWORD": true, "passwd": true, "aws_credentials": true, "user": false, "path": false, "id": false,
	} {
		if IsSecretName(name) != want {
			t.Errorf("IsSecretName(%q) = %v", name, !want)
		}
	}
}
