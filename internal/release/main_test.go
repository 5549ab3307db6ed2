package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func TestDescribedVersion(t *testing.T) {
	for desc, want := range map[string]string{
		"v1.2.0":                    "1.2.0",
		"1.2.0":                     "1.2.0",
		"v1.2.0-3-g4f2fff7c1a2b":    "1.2.0-3-g4f2fff7c1a2b",
		"v1.2.0-dirty":              "1.2.0-dirty",
		"4f2fff7c1a2b":              "0.0.0-g4f2fff7c1a2b",
		"89b1eb70a7bd":              "0.0.0-g89b1eb70a7bd", // a hash that starts with a digit
		"89b1eb70a7bd-dirty":        "0.0.0-g89b1eb70a7bd-dirty",
		"release-candidate-2-gabcd": "0.0.0-grelease-candidate-2-gabcd",
	} {
		if got := describedVersion(desc); got != want {
			t.Errorf("describedVersion(%q) = %q, want %q", desc, got, want)
		}
	}
}

func TestParseTargets(t *testing.T) {
	if ts, err := parseTargets("all"); err != nil || len(ts) != 6 {
		t.Errorf("all: %v %v", ts, err)
	}
	if ts, err := parseTargets("linux/arm64,windows/amd64"); err != nil || len(ts) != 2 || ts[1] != (Target{"windows", "amd64"}) {
		t.Errorf("list: %v %v", ts, err)
	}
	for _, bad := range []string{"linux", "plan9/amd64", "linux/386", ""} {
		if _, err := parseTargets(bad); err == nil {
			t.Errorf("parseTargets(%q) = nil error", bad)
		}
	}
}

var (
	at    = time.Date(2026, 5, 1, 10, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	files = []entry{
		{"prsm", 0o755, []byte("the binary")},
		{"README.md", 0o644, []byte("# prsm\n")},
		{"LICENSE", 0o644, []byte("MIT\n")},
	}
	reversed = []entry{files[2], files[1], files[0]}
)

// The tar.gz is the same bytes whatever order its files come in, and says
// nothing of when or by whom it was made: entries are sorted, dated at the
// commit, owned by 0:0 without names, and the gzip header has no time and
// no name.
func TestTarGzDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := writeTarGz(&a, "prsm_1.0.0_linux_amd64", files, at); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a second later, as a second build would be
	if err := writeTarGz(&b, "prsm_1.0.0_linux_amd64", reversed, at); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of the same files differ")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" || zr.Comment != "" {
		t.Errorf("gzip header: time %v, name %q, comment %q", zr.ModTime, zr.Name, zr.Comment)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(at) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q:%q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		want := int64(0o644)
		if h.Name == "prsm_1.0.0_linux_amd64/" || h.Name == "prsm_1.0.0_linux_amd64/prsm" {
			want = 0o755
		}
		if h.Mode != want {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, want)
		}
	}
	if got := strings.Join(names, " "); got != "prsm_1.0.0_linux_amd64/ prsm_1.0.0_linux_amd64/LICENSE prsm_1.0.0_linux_amd64/README.md prsm_1.0.0_linux_amd64/prsm" {
		t.Errorf("entries: %s", got)
	}
}

// The zip (Windows) likewise: sorted, dated at the commit, fixed modes.
func TestZipDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := writeZip(&a, "prsm_1.0.0_windows_amd64", files, at); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := writeZip(&b, "prsm_1.0.0_windows_amd64", reversed, at); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of the same files differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(at) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, at)
		}
		if f.Name == "prsm_1.0.0_windows_amd64/prsm" && f.Mode() != 0o755 {
			t.Errorf("%s: mode %v", f.Name, f.Mode())
		}
		if f.Name == "prsm_1.0.0_windows_amd64/LICENSE" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			if string(b) != "MIT\n" {
				t.Errorf("LICENSE reads %q", b)
			}
		}
	}
	if got := strings.Join(names, " "); got != "prsm_1.0.0_windows_amd64/ prsm_1.0.0_windows_amd64/LICENSE prsm_1.0.0_windows_amd64/README.md prsm_1.0.0_windows_amd64/prsm" {
		t.Errorf("entries: %s", got)
	}
}

func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/b.zip", []byte("b"), 0o644)
	os.WriteFile(dir+"/a.tar.gz", []byte("a"), 0o644)
	if err := WriteSums(dir, []string{"b.zip", "a.tar.gz"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dir + "/SHA256SUMS")
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.zip\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant\n%s", got, want)
	}
}
