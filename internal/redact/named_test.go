package redact

import "testing"

func TestAddNamedHeaderURLArgs(t *testing.T) {
	m := NewMasker()
	m.AddNamed("API_KEY", "k-123456")
	m.AddNamed("USER", "alice-not-secret")
	m.AddHeader("Authorization", "Bearer tok-abcdef")
	m.AddHeader("Accept", "application/json")
	m.AddURL("https://bob:pw-778899@example.test/mcp?access_token=at-445566&page=12345")
	m.AddURL("::not a url")
	m.AddArgs([]string{"server.js", "--api-key=ak-991122", "--token", "tk-334455", "--port", "8080", "--verbose"})
	for in, want := range map[string]string{
		"k-123456":                 "***",
		"alice-not-secret":         "alice-not-secret",
		"Bearer tok-abcdef":        "***",
		"auth tok-abcdef":          "auth ***",
		"application/json":         "application/json",
		"pw-778899":                "***",
		"at-445566 page 12345":     "*** page 12345",
		"ak-991122 tk-334455 8080": "*** *** 8080",
	} {
		if got := m.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
