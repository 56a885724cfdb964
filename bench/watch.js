// A watch that stays open for a whole bench run: it resumes from the last resourceVersion when the connection
// ends, and asks for bookmarks so that client-node's inactivity timeout never fires while nothing changes.
import { clearTimeout, setTimeout } from 'node:timers';
import { k8s } from './common.js';

/**
 * Watches `path` (an API collection path such as `/api/v1/namespaces/default/persistentvolumeclaims`), calling
 * `onEvent(type, object)` for every ADDED, MODIFIED and DELETED; without a resourceVersion the server first sends
 * what exists as ADDED (the bench starts its watches on empty collections). A connection that ends is reopened from
 * the last resourceVersion seen; an ERROR event (410 Expired: more changes since then than the server keeps) is
 * passed on as `onEvent('ERROR', status)` and ends the watch. Resolves once the watch is open; `stop()` ends it.
 */
export async function watchCollection(kc, path, onEvent) {
  const watch = new k8s.Watch(kc);
  let resourceVersion;
  let stopped = false;
  let current;
  let retry;
  const open = async () => {
    current = await watch.watch(
      path,
      { resourceVersion, allowWatchBookmarks: true },
      (type, object) => {
        const rv = object?.metadata?.resourceVersion;
        if (rv !== undefined) resourceVersion = rv;
        if (type === 'ERROR') stopped = true;
        if (type !== 'BOOKMARK') onEvent(type, object);
      },
      () => {
        if (!stopped) retry = setTimeout(() => void open().catch(() => undefined), 100);
      },
    );
  };
  await open();
  return {
    stop() {
      stopped = true;
      clearTimeout(retry);
      current?.abort();
    },
  };
}
