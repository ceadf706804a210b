package cli

import "github.com/urfave/cli/v3"

func (a *app) doctorCommand() *cli.Command { return &cli.Command{Name: "doctor"} }
