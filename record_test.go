package prsm

import (
	"encoding/json"
	"strings"
	"testing"
)

// A record's tool_call_id is written as SPEC.md has it (its own id, with
// the :N suffix of a multi-file call) and read back as its call's id.
func TestRecordToolCallIDOnTheWire(t *testing.T) {
	for _, tc := range []struct{ id, call, wire string }{
		{"e1", "e1", "e1"},
		{"b1:2", "b1", "b1:2"},
		{"toolu_01:10", "toolu_01", "toolu_01:10"},
		{"reconcile-0123abcd-3", "reconcile-0123abcd-x7", "reconcile-0123abcd-3"},
	} {
		b, err := json.Marshal(&Record{ID: tc.id, ToolCallID: tc.call})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"tool_call_id":"`+tc.wire+`"`) || !strings.Contains(string(b), `"id":"`+tc.id+`"`) {
			t.Errorf("%s: %s", tc.id, b)
		}
		var back Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if want := CallOf(tc.wire); back.ToolCallID != want || back.ID != tc.id {
			t.Errorf("%s read back as id %q, call %q; want call %q", tc.id, back.ID, back.ToolCallID, want)
		}
	}
	for in, want := range map[string]string{"b1:0": "b1", "b1": "b1", "a:b": "a:b", ":3": ":3", "x:": "x:", "x:1:2": "x:1"} {
		if got := CallOf(in); got != want {
			t.Errorf("CallOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// ValidToolCallID takes what the server always took (1-128 letters,
// digits, '_', '-', '.'; not dots alone) and nothing else.
func TestValidToolCallID(t *testing.T) {
	for id, want := range map[string]bool{
		"toolu_01ABCxyz":               true,
		"a":                            true,
		"a.b-c_d":                      true,
		".x":                           true,
		"x.":                           true,
		strings.Repeat("z", 128):       true,
		strings.Repeat("z", 129):       false,
		"":                             false,
		".":                            false,
		"..":                           false,
		"....":                         false,
		"a/b":                          false,
		"a b":                          false,
		"a:1":                          false,
		"caf\u00e9":                    false,
		"\u00e9":                       false,
		"a\x00":                        false,
		"../x":                         false,
		strings.Repeat(".", 128) + "a": false,
	} {
		if got := ValidToolCallID(id); got != want {
			t.Errorf("ValidToolCallID(%q) = %v, want %v", id, got, want)
		}
	}
}
