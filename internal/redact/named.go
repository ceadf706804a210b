package redact

import (
	"net/url"
	"strings"
)

// AddNamed registers value when name looks secret ([IsSecretName]): a variable, an env entry.
func (m *Masker) AddNamed(name, value string) {
	if IsSecretName(name) {
		m.Add(value)
	}
}

// AddHeader registers a header's value when its name looks secret (Authorization, X-Api-Key),
// and the credentials after an auth scheme ("Bearer abc" also registers "abc").
func (m *Masker) AddHeader(name, value string) {
	if !IsSecretName(name) {
		return
	}
	m.Add(value)
	if _, cred, ok := strings.Cut(strings.TrimSpace(value), " "); ok {
		m.Add(strings.TrimSpace(cred))
	}
}

// AddURL registers what a URL carries of secrets: the password of its user info and the values
// of query parameters named like secrets (?access_token=, ?api_key=). A string that does not
// parse as a URL registers nothing.
func (m *Masker) AddURL(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if p, ok := u.User.Password(); ok {
		m.Add(p)
	}
	for name, values := range u.Query() {
		for _, v := range values {
			m.AddNamed(name, v)
		}
	}
}

// AddArgs registers the values of command-line flags named like secrets: --api-key=V,
// --token V, -password V. Flags whose names do not look secret are left alone.
func (m *Masker) AddArgs(args []string) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !IsSecretName(name) {
			continue
		}
		switch {
		case hasValue:
			m.Add(value)
		case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			m.Add(args[i+1])
		}
	}
}
