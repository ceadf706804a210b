package cli

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
)

// configureCompletion shows the flag library's `completion` command (bash, zsh, fish, pwsh
// subcommands, each printing a script that asks `mcpspec … --generate-shell-completion` for
// the verbs and flags, so the scripts never go stale) in --help, and makes an unknown shell a
// usage mistake (exit 3) instead of a help lookup.
func (a *app) configureCompletion(c *cli.Command) {
	c.Hidden = false
	c.Usage = "print a shell completion script: bash, zsh or fish"
	c.Description = "Source the script to complete verbs and flags as you type:\n\n" +
		"   bash:  source <(mcpspec completion bash)           (in ~/.bashrc; needs bash-completion)\n" +
		"   zsh:   source <(mcpspec completion zsh)            (in ~/.zshrc, after compinit)\n" +
		"   fish:  mcpspec completion fish > ~/.config/fish/completions/mcpspec.fish\n" +
		"   pwsh:  mcpspec completion pwsh > mcpspec.ps1, then run it"
	c.Action = func(ctx context.Context, cmd *cli.Command) error {
		if !cmd.Args().Present() {
			return cli.ShowSubcommandHelp(cmd)
		}
		name := cmd.Args().First()
		return &Error{Code: ExitConfig, Msg: fmt.Sprintf("no completion for shell %q", name),
			Hint: withSuggestion(commandHint(name, cmd.Commands), "one of bash, zsh, fish, pwsh")}
	}
}
