package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// command is one subcommand's flags, each of which may also come from an
// environment variable.
type command struct {
	fs      *flag.FlagSet
	usage   string // "quorum serve [flags]"
	summary string
	args    []string          // positional arguments, wherever they stood among flags
	maxArgs int               // how many positional arguments the command takes
	env     map[string]string // flag name → environment variable
	order   []string
}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func newCommand(name, usage, summary string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &command{fs: fs, usage: usage, summary: summary, env: map[string]string{}}
}

func (c *command) note(name, env string) {
	c.order = append(c.order, name)
	if env != "" {
		c.env[name] = env
	}
}

func (c *command) String(name, env, def, help string) *string {
	c.note(name, env)
	return c.fs.String(name, def, help)
}

func (c *command) Int(name, env string, def int, help string) *int {
	c.note(name, env)
	return c.fs.Int(name, def, help)
}

func (c *command) Bool(name, env string, def bool, help string) *bool {
	c.note(name, env)
	return c.fs.Bool(name, def, help)
}

func (c *command) Duration(name, env string, def time.Duration, help string) *time.Duration {
	c.note(name, env)
	return c.fs.Duration(name, def, help)
}

func (c *command) Var(v flag.Value, name, env, help string) {
	c.note(name, env)
	c.fs.Var(v, name, help)
}

// captured, when set, is given each command as it starts parsing, and
// the command stops there with errCaptured: the configuration reference
// (docs/operations.md) is made from the commands' own flag definitions.
var captured func(*command)

var errCaptured = errors.New("command captured")

// parse reads flags, then fills flags not given from the environment.
// errHelp means --help was asked for and the usage has been printed.
func (c *command) parse(args []string, getenv func(string) string, stdout io.Writer) error {
	if captured != nil {
		captured(c)
		return errCaptured
	}
	for {
		if err := c.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.printUsage(stdout)
				return errHelp
			}
			return usageError{fmt.Errorf("%w (see %s --help)", err, strings.Join(strings.Fields(c.usage)[:2], " "))}
		}
		// Flags may follow positional arguments: "token revoke ID --data-dir D".
		rest := c.fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			c.args = append(c.args, rest[1:]...)
			break
		}
		c.args = append(c.args, rest[0])
		args = rest[1:]
	}
	if len(c.args) > c.maxArgs {
		return usageError{fmt.Errorf("unexpected argument %q (see %s --help)", c.args[c.maxArgs], strings.Join(strings.Fields(c.usage)[:2], " "))}
	}
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, env := range c.env {
		if given[name] {
			continue
		}
		if v, ok := lookup(getenv, env); ok {
			if err := c.fs.Set(name, v); err != nil {
				return usageError{fmt.Errorf("environment %s: %w", env, err)}
			}
		}
	}
	return nil
}

// given reports whether the flag name was set, on the command line or
// from the environment (after parse).
func (c *command) given(name string) bool {
	set := false
	c.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func lookup(getenv func(string) string, key string) (string, bool) {
	v := getenv(key)
	return v, v != ""
}

var errHelp = errors.New("help shown")

func (c *command) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", c.usage, c.summary)
	if len(c.order) == 0 {
		return
	}
	fmt.Fprintf(w, "\nFlags:\n")
	for _, name := range c.order {
		f := c.fs.Lookup(name)
		typ, help := flag.UnquoteUsage(f)
		head := "  --" + name
		if typ != "" {
			head += " " + typ
		}
		fmt.Fprintf(w, "%s\n      %s", head, help)
		var extra []string
		if !slices.Contains([]string{"", "false", "0", "0s", "[]"}, f.DefValue) {
			extra = append(extra, "default "+f.DefValue)
		}
		if env := c.env[name]; env != "" {
			extra = append(extra, "env "+env)
		}
		if len(extra) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(extra, "; "))
		}
		fmt.Fprintln(w)
	}
}

// reference writes the command's flags as a markdown table: flag,
// environment variable, default, meaning. home is replaced by "~" so the
// table does not depend on the machine it is made on.
func (c *command) reference(w io.Writer, home string) {
	cell := func(s string) string {
		if home != "" {
			s = strings.ReplaceAll(s, home, "~")
		}
		return strings.ReplaceAll(s, "|", "\\|")
	}
	fmt.Fprintln(w, "| Flag | Environment | Default | Meaning |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, name := range c.order {
		f := c.fs.Lookup(name)
		typ, help := flag.UnquoteUsage(f)
		flagCell := "`--" + name
		if typ != "" {
			flagCell += " " + typ
		}
		flagCell += "`"
		env, def := "", ""
		if e := c.env[name]; e != "" {
			env = "`" + e + "`"
		}
		if !slices.Contains([]string{"", "[]"}, f.DefValue) {
			def = "`" + cell(f.DefValue) + "`"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", flagCell, env, def, cell(help))
	}
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s = append(*s, part)
		}
	}
	return nil
}
