package main

import (
	"os"
	"strings"
	"testing"

	"github.com/prsm-dev/prsm/agents"
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

// Each agent's install detail is in docs/reference.md, word for word,
// since `prsm hooks install --help` points there (issue 44, item 15).
func TestInstallHelpInReference(t *testing.T) {
	b, err := os.ReadFile("../../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	for _, n := range agents.Names() {
		in := agents.Lookup(n).Installer()
		if in == nil {
			continue
		}
		if !strings.Contains(doc, strings.Join(strings.Fields(in.Help), " ")) {
			t.Errorf("docs/reference.md lacks the install help of %s, or has an old one:\n%s", n, in.Help)
		}
	}
}

// Every command that does something shows examples in its help, as gh's
// do (issue 44, item 15); a group with subcommands shows its list.
func TestEveryCommandHasExamples(t *testing.T) {
	skip := map[string]bool{"prsm help": true, "prsm completion": true, "prsm version": true, "prsm hook": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		path := c.CommandPath()
		if c.HasSubCommands() || !c.Runnable() || c.Hidden || skip[path] || strings.HasPrefix(path, "prsm completion ") ||
			strings.HasPrefix(path, "prsm hook ") {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no examples", path)
		}
	}
	walk((&app{}).rootCmd())
}
