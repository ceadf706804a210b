package session

import "github.com/mcpspec/mcpspec/internal/jsonscan"

// The session reads frames with the validating scanner in internal/jsonscan (shared with the
// Streamable HTTP transport) and writes strings with its encoder; these short names keep the call sites readable and inline away.

func isSpace(c byte) bool                                 { return jsonscan.IsSpace(c) }
func isDigit(c byte) bool                                 { return jsonscan.IsDigit(c) }
func skipSpace(b []byte, i int) int                       { return jsonscan.SkipSpace(b, i) }
func skipValue(b []byte, i, depth int) (int, error)       { return jsonscan.SkipValue(b, i, depth) }
func unquote(tok []byte) (string, bool)                   { return jsonscan.Unquote(tok) }
func eachMember(b []byte, fn func(key, val []byte)) error { return jsonscan.EachMember(b, fn) }
func eachElement(b []byte, fn func(val []byte)) error     { return jsonscan.EachElement(b, fn) }
func keyIs(tok []byte, name string) bool                  { return jsonscan.KeyIs(tok, name) }
func parseInt(raw []byte) (int64, bool)                   { return jsonscan.ParseInt(raw) }
func appendString(b []byte, s string) []byte              { return jsonscan.AppendString(b, s) }
