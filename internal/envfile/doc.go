// Package envfile parses dotenv files (`--env-file`): KEY=VALUE lines with the conventions
// of docker compose, python-dotenv and godotenv.
//
//   - Blank lines and lines starting with # are skipped; `export KEY=value` is KEY=value.
//   - An unquoted value is trimmed, and ends at a # preceded by a space or tab (an inline
//     comment): `who=dave # comment` is "dave", `color=#fff` is "#fff".
//   - 'single quotes' keep everything literally, newlines included.
//   - "double quotes" understand \n, \r, \t, \", \\ and \$ (other backslashes stay as written)
//     and may span lines.
//   - After a closing quote only blanks and a # comment may follow.
//   - `KEY=` is the empty string; a key given twice keeps its last value.
//   - Nothing is interpolated: $NAME and ${NAME} stay as written.
//
// Lines have no length limit; the caller bounds the file. Errors are [*SyntaxError]s naming
// the line, and never quote a value (env files hold secrets).
package envfile
