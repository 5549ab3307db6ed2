package prsm_test

import (
	"testing"

	"github.com/prsm-dev/prsm"
)

func TestPluralAndSize(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{prsm.Plural(1, "change"), "1 change"},
		{prsm.Plural(0, "change"), "0 changes"},
		{prsm.Plural(3, "batch"), "3 batches"},
		{prsm.Plural(2, "file"), "2 files"},
		{prsm.Size(251352), "245.5 KiB"},
		{prsm.Size(512), "512 B"},
		{prsm.Size(3 << 30), "3.0 GiB"},
		{prsm.Size(100 << 20), "100 MiB"},
		{prsm.Size(1536), "1.5 KiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
