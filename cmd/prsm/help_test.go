package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// No flag's help has a backticked phrase: cobra takes the first one as the
// flag's value name, and `--note prsm checkpoint list --grep` is what
// `checkpoint create --help` showed (issue 44, item 11).
func TestFlagHelpHasNoBackticks(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: a backtick in its help (%q) names its value", c.CommandPath(), f.Name, f.Usage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk((&app{}).rootCmd())
}

// --workspace is offered only where it means something: not by demo (which
// makes its own repository), hook, completion or version (issue 44, item
// 15); status still has it.
func TestWorkspaceFlagWhereItMeans(t *testing.T) {
	root := (&app{}).rootCmd()
	for _, path := range [][]string{{"demo"}, {"hook"}, {"completion"}, {"completion", "bash"}, {"version"}, {"status"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		f := c.Flags().Lookup("workspace")
		if f == nil {
			f = c.InheritedFlags().Lookup("workspace")
		}
		shown := f != nil && !f.Hidden
		if want := path[0] == "status"; shown != want {
			t.Errorf("prsm %s: --workspace in its help = %v, want %v", strings.Join(path, " "), shown, want)
		}
	}
}
