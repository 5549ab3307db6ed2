#!/usr/bin/env node
// The prsm command of the npm package: it runs the prsm binary of the
// platform package npm installed beside it (one of this package's
// optionalDependencies, the one whose os and cpu match this machine).
'use strict';
const { spawn } = require('child_process');
const path = require('path');
const pkg = require('../package.json');

const platform = `${process.platform}-${process.arch}`;
const name = `${pkg.name}-${platform}`;
const exe = process.platform === 'win32' ? 'prsm.exe' : 'prsm';
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${name}/package.json`)), 'bin', exe);
} catch {
  const have = Object.keys(pkg.optionalDependencies || {}).map((n) => n.slice(pkg.name.length + 1));
  const source = 'Build it from source instead (Go 1.26, git):\n' +
    '  git clone https://github.com/prsm-dev/prsm && cd prsm && make install';
  if (have.includes(platform)) {
    console.error(`prsm: the package ${name}@${pkg.version}, which holds prsm for ${platform}, is not installed.\n` +
      `npm leaves optional dependencies out with --omit=optional or --no-optional; reinstall without it:\n` +
      `  npm install -g ${pkg.name}@${pkg.version}\n${source}`);
  } else {
    console.error(`prsm: there is no prebuilt prsm for ${platform}; there is one for ${have.join(', ')}.\n${source}`);
  }
  process.exit(1);
}

// PRSM_NPM_LAUNCHER: prsm's hints name this command, not the binary.
const env = { ...process.env, PRSM_NPM_LAUNCHER: process.argv[1] };
const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', env });
// A signal sent to this process alone (kill, a timeout) reaches prsm too; a
// Ctrl-C reaches both, and prsm heeds the first.
const signals = process.platform === 'win32' ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
for (const sig of signals) {
  process.on(sig, () => {
    try {
      child.kill(sig);
    } catch {
      // it has exited already
    }
  });
}
child.on('error', (err) => {
  console.error(`prsm: cannot run ${bin}: ${err.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Exit as prsm did: killed by the same signal.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
