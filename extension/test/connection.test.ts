import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { PrsmEvent } from '../src/api.gen';
import { PrsmApiError } from '../src/client';
import { backoff, Connection } from '../src/connection';
import { findServer } from '../src/discovery';
import type { ConnectionState } from '../src/settings';
import { FakeServer } from './fakeserver';
import { session, until } from './helpers';

let tmp: string;
let home: string;
let ws: string;
let servers: FakeServer[];
let conn: Connection | undefined;

function writeInfo(srv: FakeServer): void {
  const dir = path.join(home, 'projects', 'ws-1');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'server.json'), JSON.stringify({ pid: process.pid, addr: srv.addr, token: srv.token, workspace: ws, version: 't' }));
}

function removeInfo(): void {
  fs.rmSync(path.join(home, 'projects', 'ws-1', 'server.json'), { force: true });
}

async function server(token = 'secret'): Promise<FakeServer> {
  const s = new FakeServer();
  s.token = token;
  await s.listen();
  servers.push(s);
  return s;
}

function connect(): { conn: Connection; states: ConnectionState[]; events: PrsmEvent[]; connects: number[] } {
  const states: ConnectionState[] = [];
  const events: PrsmEvent[] = [];
  const connects: number[] = [];
  conn = new Connection({ discover: () => findServer({ home, folders: [ws] }), minBackoffMs: 20, maxBackoffMs: 100 });
  conn.onState((s) => states.push(s));
  conn.onEvent((e) => events.push(e));
  conn.onConnected(() => connects.push(Date.now()));
  conn.start();
  return { conn, states, events, connects };
}

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'prsm-conn-')));
  home = path.join(tmp, 'home');
  ws = path.join(tmp, 'ws');
  fs.mkdirSync(ws);
  servers = [];
});

afterEach(async () => {
  conn?.dispose();
  conn = undefined;
  for (const s of servers) {
    await s.close().catch(() => undefined);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('backoff', () => {
  it('doubles up to the maximum', () => {
    expect([0, 1, 2, 3, 10, 100].map((n) => backoff(n, 250, 5000))).toEqual([250, 500, 1000, 2000, 5000, 5000]);
  });
});

describe('Connection', () => {
  it('says disconnected without a server, then connects when one appears', async () => {
    const c = connect();
    await until(() => c.conn.state === 'disconnected', 2000, 'disconnected');
    expect(c.conn.client).toBeUndefined();
    const srv = await server();
    writeInfo(srv);
    await until(() => c.conn.state === 'connected', 3000, 'connected');
    expect(c.conn.client?.info.addr).toBe(srv.addr);
    await until(() => srv.streams === 1, 2000, 'stream');
    srv.send('session_updated', session({ pending_count: 2 }));
    await until(() => c.events.length === 1, 2000, 'event');
    expect(c.events[0]).toMatchObject({ type: 'session_updated', data: { pending_count: 2 } });
  });

  it('treats a server.json of a dead server as not running', async () => {
    const srv = await server();
    writeInfo(srv);
    await srv.close();
    const c = connect();
    await until(() => c.conn.state === 'disconnected', 2000, 'disconnected');
    expect(c.states).not.toContain('connected');
  });

  it('reconnects to a restarted server with a new port and token, and reloads', async () => {
    const a = await server('token-a');
    writeInfo(a);
    const c = connect();
    await until(() => c.conn.state === 'connected' && c.connects.length === 1, 3000, 'first connect');
    await a.close();
    removeInfo();
    await until(() => c.conn.state === 'disconnected', 3000, 'server gone');
    const b = await server('token-b');
    writeInfo(b);
    await until(() => c.conn.state === 'connected' && c.connects.length === 2, 3000, 'reconnect');
    expect(c.conn.client?.info).toEqual({ pid: process.pid, addr: b.addr, token: 'token-b', workspace: ws, version: 't' });
    await until(() => b.streams === 1, 2000, 'stream b');
    b.send('checkpoint_created', { id: 'c1' });
    await until(() => c.events.length === 1, 2000, 'event from b');
  });

  it('re-reads server.json when the token is refused', async () => {
    const srv = await server('old');
    writeInfo(srv);
    const c = connect();
    await until(() => c.conn.state === 'connected', 3000, 'connected');
    // The server rotates its token (a restart on the same port) and drops the stream.
    srv.token = 'new';
    const err = await c.conn.client!.listSessions().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    writeInfo(srv);
    c.conn.reportError(err);
    await until(() => c.conn.state === 'connected' && c.conn.client?.info.token === 'new', 3000, 'new token');
    await until(() => srv.streams >= 1, 2000, 'stream with new token');
  });

  it('ignores errors that say nothing about the connection', async () => {
    const srv = await server();
    writeInfo(srv);
    const c = connect();
    await until(() => c.conn.state === 'connected', 3000, 'connected');
    const before = c.states.length;
    c.conn.reportError(new PrsmApiError('change x was rejected', 409, 'already_rejected'));
    c.conn.reportError(new Error('other'));
    await new Promise((r) => setTimeout(r, 100));
    expect(c.states.length).toBe(before);
    expect(c.conn.state).toBe('connected');
  });

  it('stops trying once disposed', async () => {
    const c = connect();
    await until(() => c.conn.state === 'disconnected', 2000, 'disconnected');
    c.conn.dispose();
    const srv = await server();
    writeInfo(srv);
    await new Promise((r) => setTimeout(r, 300));
    expect(srv.seen).toEqual([]);
  });
});
