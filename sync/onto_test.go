package sync

import "testing"

func TestOnto(t *testing.T) {
	for _, c := range []struct {
		name, base, changed, target, want string
		ok                                bool
	}{
		{"same base", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", true},
		{"next to the user's edit", "mine\nb\nc\n", "mine\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", true},
		{"the user's lines moved", "x\nb\n", "x\nB\n", "new\nnew2\nx\nb\n", "new\nnew2\nx\nB\n", true},
		{"insert after a line", "a\nb\n", "a\nNEW\nb\n", "A\nb\n", "A\nNEW\nb\n", true},
		{"insert at the end", "a\n", "a\nz\n", "q\na\n", "q\na\nz\n", true},
		{"create", "", "new\n", "", "new\n", true},
		{"delete all", "a\nb\n", "", "a\nb\n", "", true},
		{"the replaced line is changed", "a\nb\nc\n", "a\nB\nc\n", "a\nbb\nc\n", "", false},
		{"half the block is changed", "a\nb\nc\nd\n", "a\nX\nd\n", "a\nb\ncc\nd\n", "", false},
	} {
		got, ok := Onto([]byte(c.base), []byte(c.changed), []byte(c.target))
		if ok != c.ok || (ok && string(got) != c.want) {
			t.Errorf("%s: Onto = %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
