package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/mcpspec/mcpspec/session/recording"
	"github.com/mcpspec/mcpspec/session/transport"
	"github.com/mcpspec/mcpspec/session/transport/spec"
)

func (a *app) recordStartCommand() *cli.Command {
	return &cli.Command{
		Name:        "start",
		Usage:       "an inspect session whose frames are recorded: explore a server, replay it later",
		ArgsUsage:   "NAME",
		UsageText:   "mcpspec record start NAME --server SPEC\n\necho '.call echo {\"text\":\"hi\"}' | mcpspec record start NAME --server SPEC",
		Description: "The commands of mcpspec inspect, one per line:\n" + replHelp(),
		Flags:       append(serverFlagDefs(), dirFlag()),
		Action:      a.recordStart,
	}
}

func (a *app) recordStart(ctx context.Context, cmd *cli.Command) (err error) {
	f := a.serverFlags(cmd)
	if cmd.Args().Len() != 1 {
		return &Error{Code: ExitConfig, Msg: "mcpspec record start takes one recording NAME",
			Hint: "mcpspec record start NAME --server SPEC"}
	}
	if err := f.validate("record start NAME"); err != nil {
		return err
	}
	name := cmd.Args().First()
	path, err := recordingPath(cmd.String("dir"), name)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(path); err == nil {
		return &Error{Code: ExitConfig, Msg: "a recording named " + name + " exists already (" + path + ")",
			Hint: "choose another NAME, or remove it with mcpspec record delete " + name}
	}
	transportName := f.Transport
	if info, err := spec.Resolve(f.Server, &spec.Options{Transport: spec.Transport(f.Transport)}); err == nil {
		transportName = string(info.Transport)
	}
	var w *recording.Writer
	defer func() {
		if w == nil {
			return
		}
		cerr := w.Close()
		fmt.Fprintf(a.io.Stderr, "mcpspec record: recorded %d frames to %s\n", w.Frames(), w.Path())
		if cerr != nil && err == nil {
			err = &Error{Code: ExitRuntime, Msg: "the recording is incomplete: " + cerr.Error(), Err: cerr}
		}
	}()
	var createErr error
	hook := prepareHook{dial: func(d transport.Dialer) transport.Dialer {
		if w == nil && createErr == nil {
			w, createErr = recording.Create(path, recording.Header{Mcpspec: buildVersion(), Server: f.Server, Transport: transportName},
				&recording.WriterOptions{Mask: a.masker.Mask})
		}
		if createErr != nil {
			return failDialer{createErr}
		}
		return recording.Tap(d, w)
	}}
	err = a.runInspect(ctx, f, "record start NAME", hook)
	if errors.Is(createErr, recording.ErrExists) {
		return &Error{Code: ExitConfig, Msg: "a recording named " + name + " exists already (" + path + ")",
			Hint: "choose another NAME, or remove it with mcpspec record delete " + name}
	}
	if createErr != nil {
		return &Error{Code: ExitRuntime, Msg: "cannot create the recording: " + createErr.Error(), Err: createErr}
	}
	return err
}

// failDialer fails every Dial with err.
type failDialer struct{ err error }

func (d failDialer) Dial(context.Context) (transport.Conn, error) { return nil, d.err }
