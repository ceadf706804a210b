package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/schema"
)

func (a *app) schemaCommand() *cli.Command {
	return &cli.Command{
		Name:  "schema",
		Usage: "print a published JSON Schema (the collection format, every JSON output)",
		UsageText: "mcpspec schema [NAME]\n\n" +
			"Prints schema/NAME.v1.json, embedded in this binary, exactly as published at\n" +
			schema.BaseURL + "NAME.v1.json. Without NAME, lists the names: " + strings.Join(schema.Names(), ", ") + ".\n" +
			"For an editor: mcpspec schema collection > .mcpspec/collection.v1.json",
		Action: func(ctx context.Context, cmd *cli.Command) error {
			switch cmd.Args().Len() {
			case 0:
				for _, n := range schema.Names() {
					if _, err := fmt.Fprintf(a.io.Stdout, "%-11s %s%s\n", n, schema.BaseURL, schema.FileName(n)); err != nil {
						return err
					}
				}
				return nil
			case 1:
			default:
				return usageError(cmd, fmt.Errorf("one schema name at most, got %d arguments", cmd.Args().Len()))
			}
			name := cmd.Args().First()
			doc, err := schema.Published(name)
			if err != nil {
				return &Error{Code: ExitConfig, Msg: fmt.Sprintf("no schema named %q", name),
					Hint: withSuggestion(commandHintNames(name, schema.Names()), "one of "+strings.Join(schema.Names(), ", "))}
			}
			_, err = a.io.Stdout.Write(doc)
			return err
		},
	}
}
