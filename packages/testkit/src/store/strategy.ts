import type { KubeObject } from '../api/objects.js';
import type { ResourceType } from '../api/resources.js';

/** Kinds whose registry strategy resets `.status` on create (the status is the server's to set). */
const RESET_STATUS_ON_CREATE = new Set(['pods', 'persistentvolumes', 'persistentvolumeclaims', 'namespaces']);

/** The registry strategies' PrepareForCreate: what the server overrides before defaulting and validation. */
export function prepareForCreate(r: ResourceType, obj: KubeObject): void {
  if (r.group === '' && RESET_STATUS_ON_CREATE.has(r.plural)) obj.status = {};
}
