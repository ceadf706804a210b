package session

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// paramSchema annotates a string, an integer, a boolean and a nested string property.
const paramSchema = `{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"priority":{"type":"integer","x-mcp-header":"priority"},
	"urgent":{"type":"boolean","x-mcp-header":"Urgent"},
	"target":{"type":"object","properties":{"shard":{"type":"string","x-mcp-header":"Shard-Id"}}},
	"text":{"type":"string"}}}`

func TestParamHeaders(t *testing.T) {
	bindings, err := paramBindings(json.RawMessage(paramSchema))
	if err != nil {
		t.Fatalf("paramBindings: %v", err)
	}
	tests := []struct {
		name string
		args string
		want http.Header
	}{
		{"string", `{"region":"us-west1"}`, http.Header{"Mcp-Param-Region": {"us-west1"}}},
		{"string with inner spaces", `{"region":"us west 1"}`, http.Header{"Mcp-Param-Region": {"us west 1"}}},
		{"empty string", `{"region":""}`, http.Header{"Mcp-Param-Region": {""}}},
		{"integer", `{"priority":42}`, http.Header{"Mcp-Param-Priority": {"42"}}},
		{"negative integer", `{"priority":-7}`, http.Header{"Mcp-Param-Priority": {"-7"}}},
		{"integral float and exponent", `{"priority":3.0,"region":"a"}`, http.Header{"Mcp-Param-Priority": {"3"}, "Mcp-Param-Region": {"a"}}},
		{"exponent", `{"priority":1e3}`, http.Header{"Mcp-Param-Priority": {"1000"}}},
		{"max safe integer", `{"priority":9007199254740991}`, http.Header{"Mcp-Param-Priority": {"9007199254740991"}}},
		{"beyond safe integers", `{"priority":9007199254740993}`, nil},
		{"fraction", `{"priority":1.5}`, nil},
		{"boolean true", `{"urgent":true}`, http.Header{"Mcp-Param-Urgent": {"true"}}},
		{"boolean false", `{"urgent":false}`, http.Header{"Mcp-Param-Urgent": {"false"}}},
		{"non-ASCII", `{"region":"日本語"}`, http.Header{"Mcp-Param-Region": {"=?base64?5pel5pys6Kqe?="}}},
		{"escaped non-ASCII", `{"region":"Hello, \u4e16\u754c"}`, http.Header{"Mcp-Param-Region": {"=?base64?SGVsbG8sIOS4lueVjA==?="}}},
		{"leading space", `{"region":" us-west1"}`, http.Header{"Mcp-Param-Region": {"=?base64?IHVzLXdlc3Qx?="}}},
		{"trailing space", `{"region":"us-west1 "}`, http.Header{"Mcp-Param-Region": {"=?base64?dXMtd2VzdDEg?="}}},
		{"leading tab", `{"region":"\tindented"}`, http.Header{"Mcp-Param-Region": {"=?base64?CWluZGVudGVk?="}}},
		{"newline", `{"region":"line1\nline2"}`, http.Header{"Mcp-Param-Region": {"=?base64?bGluZTEKbGluZTI=?="}}},
		{"CR LF", `{"region":"line1\r\nline2"}`, http.Header{"Mcp-Param-Region": {"=?base64?bGluZTENCmxpbmUy?="}}},
		{"sentinel collision", `{"region":"=?base64?literal?="}`, http.Header{"Mcp-Param-Region": {"=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}}},
		{"uppercase pseudo-sentinel", `{"region":"=?BASE64?abc?="}`, http.Header{"Mcp-Param-Region": {"=?BASE64?abc?="}}},
		{"nested", `{"target":{"shard":"s-1"}}`, http.Header{"Mcp-Param-Shard-Id": {"s-1"}}},
		{"nested parent not an object", `{"target":"s-1"}`, nil},
		{"missing argument", `{"text":"hi"}`, nil},
		{"null argument", `{"region":null,"urgent":true}`, http.Header{"Mcp-Param-Urgent": {"true"}}},
		{"object where a string is declared", `{"region":{"a":1}}`, nil},
		{"array", `{"region":["a"]}`, nil},
		{"number where a string is declared", `{"region":5}`, http.Header{"Mcp-Param-Region": {"5"}}},
		{"key matched exactly", `{"Region":"x"}`, nil},
		{"escaped key", `{"re\u0067ion":"x"}`, http.Header{"Mcp-Param-Region": {"x"}}},
		{"last duplicate wins", `{"region":"a","region":"b"}`, http.Header{"Mcp-Param-Region": {"b"}}},
		{"empty arguments", `{}`, nil},
		{"all", `{"region":"eu","priority":1,"urgent":false,"target":{"shard":"z"},"text":"t"}`, http.Header{
			"Mcp-Param-Region": {"eu"}, "Mcp-Param-Priority": {"1"}, "Mcp-Param-Urgent": {"false"}, "Mcp-Param-Shard-Id": {"z"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := paramHeaders(bindings, []byte(tc.args))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("paramHeaders(%s) (-want +got):\n%s", tc.args, d)
			}
			for k, vs := range got {
				if k != http.CanonicalHeaderKey(k) {
					t.Errorf("header key %q is not canonical", k)
				}
				for _, v := range vs {
					if strings.ContainsAny(v, "\r\n") {
						t.Errorf("header %s value %q is not header text", k, v)
					}
				}
			}
		})
	}
}

func TestParamBindings(t *testing.T) {
	prop := func(typ, header string) string {
		return `{"type":"` + typ + `","x-mcp-header":` + header + `}`
	}
	obj := func(props ...string) string {
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	}
	tests := []struct {
		name    string
		schema  string
		want    []string // "path=header", sorted by the test
		invalid bool
	}{
		{"none", obj(`"a":{"type":"string"}`), nil, false},
		{"empty schema", ``, nil, false},
		{"no properties", `{"type":"object"}`, nil, false},
		{"string, integer, boolean", obj(`"a":`+prop("string", `"A"`), `"b":`+prop("integer", `"B"`), `"c":`+prop("boolean", `"C"`)),
			[]string{"a=Mcp-Param-A", "b=Mcp-Param-B", "c=Mcp-Param-C"}, false},
		{"nested", obj(`"o":` + obj(`"p":`+obj(`"q":`+prop("string", `"Deep"`)))), []string{"o.p.q=Mcp-Param-Deep"}, false},
		{"annotated object and nested annotation", obj(`"o":{"type":"object","x-mcp-header":"O"}`), nil, true},
		{"all tchar specials", obj(`"a":` + prop("string", "\"!#$%&'*+-.^_`|~aZ0\"")), []string{"a=Mcp-Param-!#$%&'*+-.^_`|~az0"}, false},
		{"number type", obj(`"a":` + prop("number", `"A"`)), nil, true},
		{"array type", obj(`"a":` + prop("array", `"A"`)), nil, true},
		{"no type", obj(`"a":{"x-mcp-header":"A"}`), nil, true},
		{"empty header", obj(`"a":` + prop("string", `""`)), nil, true},
		{"header not a string", obj(`"a":` + prop("string", `7`)), nil, true},
		{"null header", obj(`"a":` + prop("string", `null`)), nil, true},
		{"space in header", obj(`"a":` + prop("string", `"My Region"`)), nil, true},
		{"colon in header", obj(`"a":` + prop("string", `"Region:Primary"`)), nil, true},
		{"parens in header", obj(`"a":` + prop("string", `"X-(Region)"`)), nil, true},
		{"non-ASCII header", obj(`"a":` + prop("string", `"Région"`)), nil, true},
		{"duplicate, case-insensitive", obj(`"a":`+prop("string", `"Region"`), `"b":`+prop("string", `"region"`)), nil, true},
		{"duplicate across levels", obj(`"a":`+prop("string", `"Region"`), `"o":`+obj(`"b":`+prop("string", `"REGION"`))), nil, true},
		{"type as an array is unreadable", obj(`"a":`+prop("string", `"A"`), `"b":{"type":["string","null"]}`), nil, false},
		{"boolean schema is unreadable", obj(`"a":`+prop("string", `"A"`), `"b":true`), nil, false},
		{"properties not an object", `{"type":"object","properties":[]}`, nil, false},
		{"not JSON", `{`, nil, false},
		{"Type key matched exactly", obj(`"a":{"Type":"string","x-mcp-header":"A"}`), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := paramBindings(json.RawMessage(tc.schema))
			if (err != nil) != tc.invalid {
				t.Fatalf("paramBindings error = %v, want invalid %v", err, tc.invalid)
			}
			var got []string
			for _, b := range bs {
				got = append(got, strings.Join(b.path, ".")+"="+b.header)
			}
			if d := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
				t.Errorf("bindings (-want +got):\n%s", d)
			}
		})
	}
}
