// Words: counts with the right form of their noun, and sizes a person reads.
// The one place the extension makes a word plural, so that no message says
// "(1 files)" or "file(s)"; it says what prsm.Plural and prsm.Size say in Go.

/**
 * n and word, made plural when n is not 1: "1 change", "2 changes",
 * "3 batches". The same rule as the Go side's prsm.Plural.
 */
export function plural(n: number, word: string): string {
  if (n === 1) {
    return `1 ${word}`;
  }
  return `${n} ${/(ch|sh|s|x)$/.test(word) ? `${word}es` : `${word}s`}`;
}

/**
 * A byte count as a person reads it: "512 B", "1.5 KiB", "10 KiB",
 * "3.0 MiB". The same format as the Go side's prsm.Size.
 */
export function size(n: number): string {
  const unit = 1024;
  if (n < unit) {
    return `${n} B`;
  }
  let div = unit;
  let exp = 0;
  for (let m = Math.floor(n / unit); m >= unit && exp < 4; m = Math.floor(m / unit)) {
    div *= unit;
    exp++;
  }
  const v = n / div;
  let s = v.toFixed(1).replace(/\.0$/, '');
  if (v < 10 && !s.includes('.')) {
    s += '.0';
  }
  return `${s} ${'KMGTP'[exp]}iB`;
}
