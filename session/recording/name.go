package recording

// ValidName reports whether name may name a recording: it becomes a file name
// (NAME.jsonl), so 1 to 100 ASCII letters, digits, '.', '_' and '-', starting with a letter or
// a digit. A plain loop rather than a regular expression: `{0,99}` compiles to a large program
// that every mcpspec start paid for at init.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 100 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
