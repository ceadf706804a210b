package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"
)

// load's --env means what it means on test and validate: the collection environment to select.
// Before that, --env K=V was the spelling of --server-env on every server-facing verb, so a value
// with "=" keeps that meaning (with the warning the other verbs give). --environment, load's old
// name for the environment, is a hidden alias that warns.

// loadEnvFlag is load's --env: NAME selects a collection's environment; K=V sets a variable in
// the environment of a server started as a command (the old spelling of --server-env).
type loadEnvFlag = cli.FlagBase[loadEnv, cli.NoConfig, loadEnvValue]

// loadEnv is what the --env flags of a load command line said.
type loadEnv struct {
	// Names are the environment names given (more than one is a mistake).
	Names []string
	// Vars are the K=V entries given, for the server's environment.
	Vars []string
}

// loadEnvValue is the value of a [loadEnvFlag].
type loadEnvValue loadEnv

// Create satisfies cli.ValueCreator.
func (loadEnvValue) Create(val loadEnv, p *loadEnv, _ cli.NoConfig) cli.Value {
	*p = val
	return (*loadEnvValue)(p)
}

// ToString satisfies cli.ValueCreator; there is no default to show.
func (loadEnvValue) ToString(loadEnv) string { return "" }

// Set records one --env: a K=V entry or an environment name.
func (v *loadEnvValue) Set(s string) error {
	if strings.Contains(s, "=") {
		v.Vars = append(v.Vars, s)
	} else {
		v.Names = append(v.Names, s)
	}
	return nil
}

// Get returns the [loadEnv].
func (v *loadEnvValue) Get() any { return loadEnv(*v) }

// String renders the names given.
func (v *loadEnvValue) String() string { return strings.Join(v.Names, ",") }

// loadEnvFlags are load's --env and its hidden old spelling --environment.
func loadEnvFlags() []cli.Flag {
	return []cli.Flag{
		&loadEnvFlag{Name: "env", Aliases: []string{"e"}, Usage: "with a collection: select its environment `NAME`"},
		&cli.StringFlag{Name: "environment", Hidden: true, Usage: "deprecated: use --env `NAME`"},
	}
}

// loadEnvOf returns what load's --env flags said.
func loadEnvOf(cmd *cli.Command) loadEnv {
	e, _ := cmd.Value("env").(loadEnv)
	return e
}

// loadEnvironment returns the collection environment a load command line selects ("" for the
// collection's default): one --env NAME, or the old --environment NAME.
func loadEnvironment(cmd *cli.Command) (string, error) {
	names := loadEnvOf(cmd).Names
	if cmd.IsSet("environment") {
		names = append(names, cmd.String("environment"))
	}
	switch {
	case len(names) > 1:
		return "", configError(fmt.Sprintf("--env names two environments (%s)", strings.Join(names, ", ")), "a run uses one collection environment: give --env NAME once")
	case len(names) == 1:
		return names[0], nil
	}
	return "", nil
}

// checkLoadEnv checks load's --env flags against the command line, warning about old
// spellings: an environment needs a collection to choose from.
func (a *app) checkLoadEnv(cmd *cli.Command, colPath string) error {
	if cmd.IsSet("environment") {
		fmt.Fprintln(a.io.Stderr, "warning: --environment is now --env NAME (as on test and validate); --environment will be removed")
	}
	name, err := loadEnvironment(cmd)
	if err != nil {
		return err
	}
	if name != "" && colPath == "" {
		return configError(fmt.Sprintf("--env %s selects a collection's environment, but this run has no collection", name),
			"give the collection (mcpspec load FILE --env NAME), or set the server's variables with --server-env K=V")
	}
	return nil
}
