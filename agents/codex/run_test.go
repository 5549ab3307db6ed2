package codex

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// prsm's -c overrides are TOML Codex parses: quotes, backslashes and
// control characters in prsm's path are escaped.
func TestCodexHookFlags(t *testing.T) {
	if got := codexTOMLString(`/a b/"q"\x` + "\n"); got != `"/a b/\"q\"\\x\u000a"` {
		t.Fatalf("codexTOMLString = %s", got)
	}
	flags := codexHookFlags("'/opt/my prsm/prsm' hook codex")
	want := []string{
		"-c", `hooks.PreToolUse=[{matcher="^(Bash|apply_patch)$",hooks=[{type="command",command="'/opt/my prsm/prsm' hook codex",timeout=10}]}]`,
		"-c", `hooks.PostToolUse=[{matcher="^(Bash|apply_patch)$",hooks=[{type="command",command="'/opt/my prsm/prsm' hook codex",timeout=10}]}]`,
		"-c", `hooks.UserPromptSubmit=[{hooks=[{type="command",command="'/opt/my prsm/prsm' hook codex",timeout=10}]}]`,
		"-c", `hooks.Stop=[{hooks=[{type="command",command="'/opt/my prsm/prsm' hook codex",timeout=10}]}]`,
	}
	if !reflect.DeepEqual(flags, want) {
		t.Fatalf("flags:\n%s\nwant:\n%s", strings.Join(flags, "\n"), strings.Join(want, "\n"))
	}
	if got := codexStateTable(map[string]string{"/<session-flags>/config.toml:stop:0:0": "sha256:b", "/<session-flags>/config.toml:pre_tool_use:0:0": "sha256:a"}); got !=
		`{"/<session-flags>/config.toml:pre_tool_use:0:0"={trusted_hash="sha256:a"},"/<session-flags>/config.toml:stop:0:0"={trusted_hash="sha256:b"}}` {
		t.Fatalf("state table = %s", got)
	}
}

// Only prsm's own handlers from the -c layer are trusted, never the
// user's; prsm's hooks installed and trusted by the user are not added
// twice.
func TestCodexTrust(t *testing.T) {
	const cmd = "/usr/bin/prsm hook codex"
	flag := func(event, key string) codexHook {
		return codexHook{Key: "/<session-flags>/config.toml:" + key + ":0:0", EventName: event, Command: cmd, Source: "sessionFlags", Enabled: true, CurrentHash: "sha256:" + key, TrustStatus: "untrusted"}
	}
	ours := []codexHook{flag("preToolUse", "pre_tool_use"), flag("postToolUse", "post_tool_use"), flag("userPromptSubmit", "user_prompt_submit"), flag("stop", "stop")}
	user := codexHook{Key: "/h/.codex/hooks.json:stop:0:0", EventName: "stop", Command: "notify.sh", Source: "user", Enabled: true, CurrentHash: "sha256:u", TrustStatus: "untrusted"}
	trust, err := codexTrust(append(ours, user), cmd)
	if err != nil || len(trust) != 4 || trust["/<session-flags>/config.toml:stop:0:0"] != "sha256:stop" || trust[user.Key] != "" {
		t.Fatalf("trust = %v %v", trust, err)
	}
	if _, err := codexTrust(ours[:3], cmd); err == nil || !strings.Contains(err.Error(), "3 of prsm's 4") {
		t.Fatalf("three of four listed: %v", err)
	}
	var installed []codexHook
	for _, h := range ours {
		installed = append(installed, codexHook{Key: "/h/.codex/hooks.json:x", EventName: h.EventName, Command: "/opt/prsm hook codex", Source: "user", Enabled: true, TrustStatus: "trusted"})
	}
	if _, err := codexTrust(append(ours, installed...), cmd); !errors.Is(err, errCodexHooksInstalled) {
		t.Fatalf("installed and trusted: %v", err)
	}
	installed[0].TrustStatus = "untrusted"
	if trust, err := codexTrust(append(ours, installed...), cmd); err != nil || len(trust) != 4 {
		t.Fatalf("installed, one untrusted: %v %v", trust, err)
	}
}

// Other commands, and a codex run that sets hooks itself, are left as
// they are; a codex that cannot be asked is run as it is, with one line
// on stderr.
func TestCodexRunArgsLeftAlone(t *testing.T) {
	var errb bytes.Buffer
	for _, argv := range [][]string{
		{"claude", "-p", "x"},
		{"/usr/bin/codexx", "exec", "x"},
	} {
		if got := codexRunArgs(context.Background(), argv, t.TempDir(), nil, "/usr/bin/prsm", &errb); !reflect.DeepEqual(got, argv) || errb.Len() != 0 {
			t.Fatalf("%v became %v (%q)", argv, got, errb.String())
		}
	}
	for _, args := range [][]string{
		{"-c", "hooks.Stop=[]", "exec", "x"},
		{"--config=hooks.PreToolUse=[]", "exec"},
		{"exec", "-chooks={}", "x"},
	} {
		errb.Reset()
		argv := append([]string{"/x/codex"}, args...)
		if got := codexRunArgs(context.Background(), argv, t.TempDir(), nil, "/usr/bin/prsm", &errb); !reflect.DeepEqual(got, argv) || !strings.Contains(errb.String(), "sets hooks itself") {
			t.Fatalf("%v became %v (%q)", argv, got, errb.String())
		}
	}
	errb.Reset()
	argv := []string{"/nonexistent/codex", "exec", "x"}
	if got := codexRunArgs(context.Background(), argv, t.TempDir(), nil, "/usr/bin/prsm", &errb); !reflect.DeepEqual(got, argv) || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "Watch records") {
		t.Fatalf("%v became %v (%q)", argv, got, errb.String())
	}
}
