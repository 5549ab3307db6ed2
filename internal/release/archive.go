package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is one file of an archive.
type entry struct {
	name string // under the archive's directory
	mode int64  // 0o755 or 0o644
	data []byte
}

// Archives writes each target's archive into out, of the binaries b
// built; it returns the archives' names.
func Archives(out string, ts []Target, b *Builds) ([]string, error) {
	names := make([]string, len(ts))
	i := map[Target]int{}
	for n, t := range ts {
		i[t] = n
	}
	err := Each(ts, func(t Target) error {
		name, err := archive(out, t, b)
		names[i[t]] = name
		return err
	})
	if err != nil {
		return nil, err
	}
	return names, nil
}

// archive writes t's archive into out.
func archive(out string, t Target, b *Builds) (string, error) {
	bin, err := b.Of(t)
	if err != nil {
		return "", err
	}
	m := b.Meta
	var files []entry
	for _, f := range []struct {
		name, path string
		mode       int64
	}{
		{t.Exe("prsm"), filepath.Join(bin, t.Exe("prsm")), 0o755},
		{t.Exe("prsm-hook"), filepath.Join(bin, t.Exe("prsm-hook")), 0o755},
		{"LICENSE", filepath.Join(m.Root, "LICENSE"), 0o644},
		{"README.md", filepath.Join(m.Root, "README.md"), 0o644},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return "", err
		}
		files = append(files, entry{f.name, f.mode, b})
	}
	base := fmt.Sprintf("prsm_%s_%s_%s", m.Version, t.OS, t.Arch)
	var buf bytes.Buffer
	name := base + ".tar.gz"
	if t.OS == "windows" {
		name = base + ".zip"
		err = writeZip(&buf, base, files, m.Date)
	} else {
		err = writeTarGz(&buf, base, files, m.Date)
	}
	if err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(out, name), buf.Bytes(), 0o644)
}

// writeTarGz writes files under dir/ as a gzipped tar: entries sorted by
// name, each dated at, owned by 0:0 with no user or group names, in the
// USTAR format; the gzip header has no time, name or comment. The level is
// gzip's default: the best took twice the time for 0.1% less.
func writeTarGz(w io.Writer, dir string, files []entry, at time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	at = at.UTC().Truncate(time.Second)
	hdr := func(h *tar.Header) *tar.Header {
		h.ModTime, h.Format = at, tar.FormatUSTAR
		return h
	}
	if err := tw.WriteHeader(hdr(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o755})); err != nil {
		return err
	}
	for _, f := range sorted(files) {
		h := hdr(&tar.Header{Typeflag: tar.TypeReg, Name: dir + "/" + f.name, Mode: f.mode, Size: int64(len(f.data))})
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeZip writes files under dir/ as a zip: entries sorted by name, each
// deflated and dated at (in the DOS time and the extended timestamp), with
// Unix modes.
func writeZip(w io.Writer, dir string, files []entry, at time.Time) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.DefaultCompression)
	})
	at = at.UTC().Truncate(time.Second)
	dh := &zip.FileHeader{Name: dir + "/", Method: zip.Store, Modified: at}
	dh.SetMode(os.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dh); err != nil {
		return err
	}
	for _, f := range sorted(files) {
		h := &zip.FileHeader{Name: dir + "/" + f.name, Method: zip.Deflate, Modified: at}
		h.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

func sorted(files []entry) []entry {
	s := append([]entry(nil), files...)
	sort.Slice(s, func(i, j int) bool { return s[i].name < s[j].name })
	return s
}

// WriteSums writes out/SHA256SUMS: each named file's SHA-256 and name, in
// the format of sha256sum (which checks it with -c), sorted by name.
func WriteSums(out string, names []string) error {
	names = append([]string(nil), names...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(out, n))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644)
}
