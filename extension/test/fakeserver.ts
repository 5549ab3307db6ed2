// A scriptable fake prsm server for client and connection tests: it records
// every request and answers from a route table; /events is a real SSE stream.

import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  url: string;
  auth: string | undefined;
  body: string;
  contentType: string | undefined;
}

export type Handler = (req: SeenRequest, res: http.ServerResponse) => void;

export class FakeServer {
  readonly seen: SeenRequest[] = [];
  readonly routes = new Map<string, Handler>();
  private readonly sse = new Set<http.ServerResponse>();
  private server: http.Server;
  token = 'secret';
  port = 0;

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen: SeenRequest = {
          method: req.method ?? '',
          url: req.url ?? '',
          auth: req.headers.authorization,
          body: Buffer.concat(chunks).toString('utf8'),
          contentType: req.headers['content-type'],
        };
        this.seen.push(seen);
        const pathOnly = seen.url.split('?')[0];
        if (pathOnly === '/healthz') {
          return json(res, 200, { ok: true, version: 'test' });
        }
        if (pathOnly === '/events') {
          // As the real server: the token in the Authorization header only,
          // never in the address.
          if (seen.auth !== `Bearer ${this.token}`) {
            return json(res, 401, { error: 'missing or wrong token', code: 'unauthorized' });
          }
          res.writeHead(200, { 'Content-Type': 'text/event-stream' });
          res.write(': connected\n\n');
          this.sse.add(res);
          res.on('close', () => this.sse.delete(res));
          return;
        }
        if (seen.auth !== `Bearer ${this.token}`) {
          return json(res, 401, { error: 'missing or wrong token', code: 'unauthorized' });
        }
        const h = this.routes.get(`${seen.method} ${pathOnly}`) ?? this.routes.get(`${seen.method} *`);
        if (!h) {
          return json(res, 404, { error: 'Not Found', code: 'not_found' });
        }
        h(seen, res);
      });
    });
  }

  async listen(port = 0): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }

  get streams(): number {
    return this.sse.size;
  }

  /** Sends one event to every open stream, split in odd chunks to test the parser. */
  send(type: string, data: unknown): void {
    const text = `id: 1\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const res of this.sse) {
      const mid = Math.floor(text.length / 2);
      res.write(text.slice(0, mid));
      res.write(text.slice(mid));
    }
  }

  async close(): Promise<void> {
    for (const res of this.sse) {
      res.destroy();
    }
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  const b = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(b) });
  res.end(b);
}
