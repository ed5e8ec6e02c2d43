// Package cmdline holds the messages of apiserver-boot's command line
// itself: positional arguments where flags are expected, unknown
// subcommands and unknown or malformed flags each get an error that says
// what to type instead (cobra prints help and exits 0 for an unknown
// subcommand of a group, and suggests nothing for flags).
package cmdline

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FinishTree sets what every command of the tree shares: group commands
// (create, build, run...) refuse unknown subcommands, the help and
// completion commands have examples, and flag errors make suggestions.
func FinishTree(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCommand())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	// The usage of a group does not show it as a command of its own
	// ("apiserver-boot build [flags]"): it only prints its help.
	root.SetUsageTemplate(strings.Replace(root.UsageTemplate(), "{{if .Runnable}}\n  {{.UseLine}}{{end}}",
		`{{if and .Runnable (not (index .Annotations "group"))}}`+"\n  {{.UseLine}}{{end}}", 1))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// What cobra suggests for its root only (and sets when it does).
		c.SuggestionsMinimumDistance = 2
		if c.HasSubCommands() && !c.Runnable() {
			// A group: without arguments it prints its help; with one, the
			// argument was not one of its subcommands.
			c.Args = NoArgs
			c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
			c.Annotations = map[string]string{"group": "true"}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  source <(apiserver-boot completion bash)\n  apiserver-boot completion zsh > \"${fpath[1]}/_apiserver-boot\""
		for _, shell := range c.Commands() {
			shell.Args = NoArgs
			switch shell.Name() {
			case "bash", "zsh":
				shell.Example = fmt.Sprintf("  source <(apiserver-boot completion %s)", shell.Name())
			case "fish":
				shell.Example = "  apiserver-boot completion fish | source"
			default:
				shell.Example = fmt.Sprintf("  apiserver-boot completion %s | Out-String | Invoke-Expression", shell.Name())
			}
		}
	}
}

// newHelpCommand is cobra's help command, but a topic that is no command is
// an error (cobra prints the usage and exits 0).
func newHelpCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "help [command]",
		Short:   "Help about any command",
		Example: "  apiserver-boot help create group version resource",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil {
				return err
			}
			if len(rest) > 0 {
				return unknownCommand(cmd, rest[0])
			}
			return cmd.Help()
		},
	}
}

var (
	kindLike    = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]*$`)
	versionLike = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]*)?$`)
	groupLike   = regexp.MustCompile(`^[a-z][a-z0-9.-]*$`)
	imageLike   = regexp.MustCompile(`^[a-z0-9.-]+(:[0-9]+)?/[^ ]+$`)
)

// NoArgs is the Args of every command that takes flags only, and of group
// commands, whose only arguments are their subcommands. A positional
// argument is refused with what to type instead: the flag the value looks
// like it belongs to, or the subcommands there are.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if cmd.HasAvailableSubCommands() && len(cmd.SuggestionsFor(args[0])) > 0 {
		return unknownCommand(cmd, args[0])
	}
	// true and false after a boolean flag: --controller false.
	if args[0] == "true" || args[0] == "false" {
		var given []string
		cmd.Flags().Visit(func(f *pflag.Flag) {
			if f.Value.Type() == "bool" {
				given = append(given, "--"+f.Name+"="+args[0])
			}
		})
		if len(given) > 0 {
			return fmt.Errorf("unexpected argument %q: a boolean flag takes its value after =, as in %s", args[0], strings.Join(given, " or "))
		}
	}
	var flags []string
	for _, a := range args {
		f := flagFor(cmd, a)
		if f == "" {
			flags = nil
			break
		}
		flags = append(flags, "--"+f+" "+a)
	}
	if len(flags) == 1 {
		return fmt.Errorf("unexpected argument %q: give the %s with %s", args[0], strings.TrimPrefix(strings.Fields(flags[0])[0], "--"), flags[0])
	}
	if len(flags) > 1 {
		return fmt.Errorf("unexpected arguments %q: give them as flags: %s", strings.Join(args, " "), strings.Join(flags, " "))
	}
	if cmd.HasAvailableSubCommands() {
		return unknownCommand(cmd, args[0])
	}
	return fmt.Errorf("unexpected argument %q: %s takes flags only (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
}

// flagFor is the flag of cmd a positional value looks like it belongs to,
// by its form: CronTab a --kind, v1 a --version, stable a --group, an image
// reference an --image; "" when none fits.
func flagFor(cmd *cobra.Command, value string) string {
	has := func(name string) bool { return cmd.Flags().Lookup(name) != nil }
	switch {
	case has("kind") && kindLike.MatchString(value):
		return "kind"
	case has("version") && versionLike.MatchString(value):
		return "version"
	case has("image") && imageLike.MatchString(value):
		return "image"
	case has("group") && groupLike.MatchString(value):
		return "group"
	}
	return ""
}

// unknownCommand refuses an argument of a group command that is none of its
// subcommands, listing them, with cobra's suggestions.
func unknownCommand(cmd *cobra.Command, arg string) error {
	var names []string
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	msg := fmt.Sprintf("unknown command %q for %q: its commands are %s", arg, cmd.CommandPath(), strings.Join(names, ", "))
	if s := cmd.SuggestionsFor(arg); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg)
}

// flagError rewrites pflag's parse errors (the FlagErrorFunc of every
// command): an unknown flag gets the closest flags of the command, or the
// commands that have it; a flag without its value or with a malformed one
// says what its value is.
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	var required *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &notExist):
		if short := notExist.GetSpecifiedShortnames(); short != "" {
			// -kind: pflag reads single-dash letters as shorthands.
			if f := cmd.Flags().Lookup(short); f != nil {
				return fmt.Errorf("unknown flag -%s: flags take two dashes, --%s", short, short)
			}
			return fmt.Errorf("unknown flag -%s for %q: flags take two dashes%s", short, cmd.CommandPath(), flagHint(cmd, short))
		}
		return fmt.Errorf("unknown flag --%s for %q%s", notExist.GetSpecifiedName(), cmd.CommandPath(), flagHint(cmd, notExist.GetSpecifiedName()))
	case errors.As(err, &required):
		f := required.GetFlag()
		return fmt.Errorf("--%s needs a value: %s", f.Name, f.Usage)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return fmt.Errorf("--%s %q is not valid: want %s", f.Name, invalid.GetValue(), valueForm(f))
	}
	return err
}

// flagHint suggests the flags of cmd closest to name (cobra's suggestions
// for commands: Levenshtein distance 2 or a prefix), or else the commands
// that have a flag of that name.
func flagHint(cmd *cobra.Command, name string) string {
	probe := &cobra.Command{SuggestionsMinimumDistance: 2}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			probe.AddCommand(&cobra.Command{Use: f.Name, Run: func(*cobra.Command, []string) {}})
		}
	})
	var close []string
	for _, s := range probe.SuggestionsFor(name) {
		close = append(close, "--"+s)
	}
	// --kinds: a flag name with something added.
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && len(f.Name) > 2 && strings.HasPrefix(name, f.Name) && !slices.Contains(close, "--"+f.Name) {
			close = append(close, "--"+f.Name)
		}
	})
	if len(close) > 0 {
		return "; did you mean " + strings.Join(close, " or ") + "?"
	}
	var elsewhere []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.Hidden && c.LocalFlags().Lookup(name) != nil {
			elsewhere = append(elsewhere, strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.Root())
	if len(elsewhere) > 0 {
		return fmt.Sprintf("; --%s is a flag of %s", name, strings.Join(elsewhere, ", "))
	}
	return fmt.Sprintf(" (see %s --help for its flags)", cmd.CommandPath())
}

// valueForm says what a flag's value looks like, by its type.
func valueForm(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "true or false"
	case "int", "int32", "int64", "uint", "uint16", "uint32", "uint64":
		if f.DefValue == "0" {
			return "a whole number"
		}
		return "a whole number, such as " + f.DefValue
	case "duration":
		return "a duration such as 30s, 5m or 1h"
	}
	return f.Usage
}
