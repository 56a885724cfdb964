import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A TCP pass-through in front of a server that counts the client connections it accepts. */
export interface CountingProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  readonly url: string;
  /** Client TCP connections accepted so far. */
  readonly connections: number;
  /**
   * Whether the proxy holds back what the server sends on the connections it accepts from now on (a server that takes
   * requests and never answers). Default false.
   */
  stalled: boolean;
  /**
   * When set, the proxy passes on only this many bytes of what the server sends on each connection it accepts from
   * now on, and holds back the rest (a server whose answer stops halfway). Default undefined: all of it.
   */
  holdAfterBytes: number | undefined;
  close(): Promise<void>;
}

/** Starts a counting TCP proxy to `target` (`http://host:port`). */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let connections = 0;
  const proxy: { stalled: boolean; holdAfterBytes: number | undefined } = { stalled: false, holdAfterBytes: undefined };
  const server: Server = createServer((client) => {
    connections += 1;
    sockets.add(client);
    const upstream = connect(Number(port), hostname);
    sockets.add(upstream);
    client.pipe(upstream);
    const limit = proxy.holdAfterBytes;
    if (proxy.stalled) {
      // Nothing passes.
    } else if (limit === undefined) upstream.pipe(client);
    else {
      let passed = 0;
      upstream.on('data', (chunk: Buffer) => {
        if (passed < limit) client.write(chunk.subarray(0, limit - passed));
        passed += chunk.length;
      });
    }
    const closeBoth = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', closeBoth);
    upstream.on('error', closeBoth);
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    get stalled() {
      return proxy.stalled;
    },
    set stalled(value: boolean) {
      proxy.stalled = value;
    },
    get holdAfterBytes() {
      return proxy.holdAfterBytes;
    },
    set holdAfterBytes(value: number | undefined) {
      proxy.holdAfterBytes = value;
    },
    url: `http://127.0.0.1:${address.port}`,
    get connections() {
      return connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
