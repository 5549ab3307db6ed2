// Builds the review page into dist/ (committed, and embedded by embed.go).
//   node build.mjs          build dist/
//   node build.mjs --check  build into a temp dir and fail if dist/ differs
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes('--check');
const out = check ? mkdtempSync(join(tmpdir(), 'prsm-web-')) : join(root, 'dist');

if (!check) rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await esbuild.build({
  absWorkingDir: root,
  entryPoints: { app: 'src/main.tsx' },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome111', 'firefox113', 'safari16.4'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'eof',
  charset: 'utf8',
  logLevel: 'warning',
});
copyFileSync(join(root, 'src/index.html'), join(out, 'index.html'));
copyFileSync(join(root, 'src/login.css'), join(out, 'login.css'));

if (check) {
  const dist = join(root, 'dist');
  const names = (d) => readdirSync(d).filter((n) => !n.startsWith('.')).sort();
  const want = names(out);
  const have = names(dist);
  const stale = want.filter((n) => !have.includes(n) || !readFileSync(join(out, n)).equals(readFileSync(join(dist, n))));
  const extra = have.filter((n) => !want.includes(n));
  rmSync(out, { recursive: true, force: true });
  if (stale.length || extra.length) {
    console.error(`web/dist is stale (${[...stale, ...extra].join(', ')}): run \`npm run build\` in web/ and commit dist/`);
    process.exit(1);
  }
  console.log('web/dist is up to date');
} else {
  for (const n of readdirSync(out)) console.log(`dist/${n}`);
}
