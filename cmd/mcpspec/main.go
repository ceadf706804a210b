// Command mcpspec tests Model Context Protocol servers. Everything it does lives in
// internal/cli; run mcpspec --help for the commands.
package main

import "github.com/mcpspec/mcpspec/internal/cli"

func main() { cli.Main() }
