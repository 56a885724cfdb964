import type { Pod } from '../types.js';

/** The pod metadata fields both env `fieldRef` and downward API files can read; `undefined` for any other path. */
export function podMetadataField(pod: Pod, fieldPath: string): string | undefined {
  const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(fieldPath);
  if (m !== null) {
    const map = m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[m[2] ?? ''] ?? '';
  }
  switch (fieldPath) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    default:
      return undefined;
  }
}
