package prsm

import (
	"strconv"
	"strings"
)

// Words for people: the one place that counts things and sizes in the
// messages of the CLI, the server and the engine, so that they all say
// "1 change", "3 changes" and "2.4 MiB" alike.

// Plural is n and word, made plural when n is not 1: "1 change",
// "2 changes", "3 batches".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	switch {
	case strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"), strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"):
		word += "es"
	default:
		word += "s"
	}
	return strconv.Itoa(n) + " " + word
}

// Size writes a size for people: "512 B", "100 MiB", "3.0 GiB".
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	if v < 10 && !strings.Contains(s, ".") {
		s += ".0"
	}
	return s + " " + string("KMGTP"[exp]) + "iB"
}
