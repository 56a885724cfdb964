import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startNodeProcess, startServeProcess, stopProcess, waitFor } from '../../src/index.js';

describe('waitFor', () => {
  it('returns the first defined value, treating a throwing probe as not yet', async () => {
    let calls = 0;
    const value = await waitFor(
      'the third call',
      () => {
        calls += 1;
        if (calls === 1) throw new Error('not found');
        return calls === 3 ? `call ${calls}` : undefined;
      },
      { intervalMs: 1 },
    );
    expect(value).toBe('call 3');
  });

  it("names what it waited for and the probe's last error when time runs out", async () => {
    await expect(
      waitFor('PVC x Bound', () => Promise.reject(new Error('persistentvolumeclaims "x" not found')), {
        timeoutMs: 20,
        intervalMs: 5,
      }),
    ).rejects.toThrow(
      'timed out after 20 ms waiting for PVC x Bound (last error: persistentvolumeclaims "x" not found)',
    );
  });

  it('stops when its signal aborts', async () => {
    const controller = new AbortController();
    const waiting = waitFor('never', () => undefined, { intervalMs: 5, signal: controller.signal });
    controller.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
  });
});

describe('startNodeProcess', () => {
  it('resolves once the child printed its ready text, and stopProcess ends it', async () => {
    const child = await startNodeProcess(
      'sleeper',
      ['-e', 'console.log("up and ready"); setInterval(() => {}, 1000)'],
      'ready',
    );
    expect(child.exitCode).toBeNull();
    await stopProcess(child);
    expect(child.signalCode).toBe('SIGTERM');
    await stopProcess(child); // a second stop is a no-op
  });

  it("rejects with the child's output when it exits before it is ready", async () => {
    await expect(
      startNodeProcess(
        'broken',
        ['-e', 'console.log("loading"); console.error("config missing"); process.exit(3)'],
        'ready',
      ),
    ).rejects.toThrow(/broken exited \(code 3\) before it was ready:\nloading\nconfig missing/);
  });
});

describe('startServeProcess', () => {
  it('runs kprov-testkit serve with the given nodes and hands back its kubeconfig', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kprov-serve-process-'));
    const server = await startServeProcess({ dir, nodes: ['worker-a', 'worker-b'], scheduler: false, kubelet: false });
    try {
      expect(server.kubeconfig).toBe(path.join(dir, 'kubeconfig'));
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const nodes = await server.kubeConfig.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items.map((n) => n.metadata?.name)).toEqual(['worker-a', 'worker-b']);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
    // serve stops cleanly on SIGTERM.
    expect(server.child.exitCode).toBe(0);
  });
});
