/** Shared fixtures for the helper pod tests. */
/** The template shipped in deploy/local-path-storage.yaml (v0.0.37). */
export const DEFAULT_TEMPLATE = `apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  priorityClassName: system-node-critical
  tolerations:
    - key: node.kubernetes.io/disk-pressure
      operator: Exists
      effect: NoSchedule
  containers:
  - name: helper-pod
    image: docker.io/library/busybox
    imagePullPolicy: IfNotPresent
`;
