/**
 * PodSpec rules after `pkg/apis/core/validation.ValidatePodSpec` (Kubernetes 1.32): volumes, containers, ports, env
 * names, mounts, policies, tolerations and the simple name fields. Security contexts, probes, affinity, resources and
 * the rarer volume sources are not checked.
 */

import { duplicate, forbidden, invalidValue, notSupported, required } from '../status.js';
import type { FieldError } from '../status.js';
import { validateLabels } from './meta.js';
import {
  inclusiveRangeError,
  isDNS1123Label,
  isQualifiedName,
  isRelaxedEnvVarName,
  isValidLabelValue,
  isValidPortName,
  nameIsDNSSubdomain,
} from './names.js';
import { validatePVCSpec } from './pvc.js';
import { validateCSIDriverName, validateHostPath, validateNFS } from './sources.js';
import { asArr, asNum, asObj, asStr, index, notFound } from './util.js';
import type { Obj } from './util.js';

/** VolumeSource members in validateVolumeSource's order, with the path segment used for "more than 1" errors. */
const POD_SOURCES: readonly (readonly [string, string])[] = [
  ['emptyDir', 'emptyDir'],
  ['hostPath', 'hostPath'],
  ['gitRepo', 'gitRepo'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['secret', 'secret'],
  ['nfs', 'nfs'],
  ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['persistentVolumeClaim', 'persistentVolumeClaim'],
  ['rbd', 'rbd'],
  ['cinder', 'cinder'],
  ['cephfs', 'cephFS'],
  ['quobyte', 'quobyte'],
  ['downwardAPI', 'downwarAPI'],
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['configMap', 'configMap'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['storageos', 'storageos'],
  ['projected', 'projected'],
  ['scaleIO', 'scaleIO'],
  ['csi', 'csi'],
  ['ephemeral', 'ephemeral'],
  ['image', 'image'],
];

const FILE_MODE_MSG = 'must be a number between 0 and 0777 (octal), both inclusive';
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
/** `math.MaxInt32`. */
export const MAX_INT32 = 2147483647;

function fileMode(value: unknown, path: string): FieldError[] {
  const mode = asNum(value);
  return mode !== undefined && (mode > 0o777 || mode < 0) ? [invalidValue(path, mode, FILE_MODE_MSG)] : [];
}

function validateSource(name: string, source: Obj, path: string, podName: string, volName: string): FieldError[] {
  switch (name) {
    case 'hostPath':
      return validateHostPath(source, path);
    case 'nfs':
      return validateNFS(source, path);
    case 'secret':
      return [
        ...(asStr(source.secretName) === '' ? [required(`${path}.secretName`)] : []),
        ...fileMode(source.defaultMode, `${path}.defaultMode`),
      ];
    case 'configMap':
      return [
        ...(asStr(source.name) === '' ? [required(`${path}.name`)] : []),
        ...fileMode(source.defaultMode, `${path}.defaultMode`),
      ];
    case 'downwardAPI':
    case 'projected':
      return fileMode(source.defaultMode, `${path}.defaultMode`);
    case 'persistentVolumeClaim':
      return asStr(source.claimName) === '' ? [required(`${path}.claimName`)] : [];
    case 'csi':
      return validateCSIDriverName(asStr(source.driver), `${path}.driver`);
    case 'ephemeral': {
      const template = asObj(source.volumeClaimTemplate);
      if (template === undefined) return [required(`${path}.volumeClaimTemplate`)];
      const errs = validatePVCSpec(asObj(template.spec) ?? {}, `${path}.volumeClaimTemplate.spec`);
      if (podName !== '' && volName !== '') {
        const pvcName = `${podName}-${volName}`;
        for (const m of nameIsDNSSubdomain(pvcName, false)) {
          errs.push(
            invalidValue(
              `${path.slice(0, path.lastIndexOf('.'))}.name`,
              volName,
              `PVC name ${JSON.stringify(pvcName)}: ${m}`,
            ),
          );
        }
      }
      return errs;
    }
    default:
      return [];
  }
}

/** `ValidateVolumes`: returns the errors and the names of the volumes that validated. */
function validateVolumes(volumes: unknown, podName: string): { errs: FieldError[]; names: Set<string> } {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  asArr(volumes).forEach((item, i) => {
    const vol = asObj(item) ?? {};
    const p = index('spec.volumes', i);
    const name = asStr(vol.name);
    const el: FieldError[] = [];
    let count = 0;
    for (const [member, segment] of POD_SOURCES) {
      const source = asObj(vol[member]);
      if (source === undefined) continue;
      if (count > 0) {
        el.push(forbidden(`${p}.${segment}`, 'may not specify more than 1 volume type'));
        continue;
      }
      count++;
      el.push(...validateSource(member, source, `${p}.${member}`, podName, name));
    }
    if (count === 0) el.push(required(p, 'must specify a volume type'));
    if (name === '') el.push(required(`${p}.name`));
    else for (const m of isDNS1123Label(name)) el.push(invalidValue(`${p}.name`, name, m));
    if (names.has(name)) el.push(duplicate(`${p}.name`, name));
    if (el.length === 0) names.add(name);
    else errs.push(...el);
  });
  return { errs, names };
}

function validatePorts(ports: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  asArr(ports).forEach((item, i) => {
    const port = asObj(item) ?? {};
    const p = index(path, i);
    const name = asStr(port.name);
    if (name !== '') {
      const msgs = isValidPortName(name);
      if (msgs.length > 0) for (const m of msgs) errs.push(invalidValue(`${p}.name`, name, m));
      else if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      else names.add(name);
    }
    const containerPort = asNum(port.containerPort) ?? 0;
    if (containerPort === 0) errs.push(required(`${p}.containerPort`));
    else if (containerPort < 1 || containerPort > 65535)
      errs.push(invalidValue(`${p}.containerPort`, containerPort, inclusiveRangeError(1, 65535)));
    const hostPort = asNum(port.hostPort) ?? 0;
    if (hostPort !== 0 && (hostPort < 1 || hostPort > 65535))
      errs.push(invalidValue(`${p}.hostPort`, hostPort, inclusiveRangeError(1, 65535)));
    const protocol = asStr(port.protocol);
    if (protocol === '') errs.push(required(`${p}.protocol`));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(`${p}.protocol`, protocol, PROTOCOLS));
  });
  return errs;
}

/** `validateContainerCommon`: name, image, termination message policy, ports, env, mounts, pull policy. */
function validateContainerCommon(ctr: Obj, volumes: Set<string>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = asStr(ctr.name);
  if (name === '') errs.push(required(`${path}.name`));
  else for (const m of isDNS1123Label(name)) errs.push(invalidValue(`${path}.name`, name, m));
  if (asStr(ctr.image) === '') errs.push(required(`${path}.image`));
  const tmp = asStr(ctr.terminationMessagePolicy);
  if (tmp === '') errs.push(required(`${path}.terminationMessagePolicy`));
  else if (!TERMINATION_MESSAGE_POLICIES.includes(tmp))
    errs.push(notSupported(`${path}.terminationMessagePolicy`, tmp, TERMINATION_MESSAGE_POLICIES));
  errs.push(...validatePorts(ctr.ports, `${path}.ports`));
  asArr(ctr.env).forEach((item, i) => {
    const envName = asStr(asObj(item)?.name);
    const p = `${index(`${path}.env`, i)}.name`;
    if (envName === '') errs.push(required(p));
    else for (const m of isRelaxedEnvVarName(envName)) errs.push(invalidValue(p, envName, m));
  });
  const mountPoints = new Set<string>();
  asArr(ctr.volumeMounts).forEach((item, i) => {
    const mount = asObj(item) ?? {};
    const p = index(`${path}.volumeMounts`, i);
    const mountName = asStr(mount.name);
    const mountPath = asStr(mount.mountPath);
    if (mountName === '') errs.push(required(`${p}.name`));
    if (!volumes.has(mountName)) errs.push(notFound(`${p}.name`, mountName));
    if (mountPath === '') errs.push(required(`${p}.mountPath`));
    if (mountPoints.has(mountPath)) errs.push(invalidValue(`${p}.mountPath`, mountPath, 'must be unique'));
    mountPoints.add(mountPath);
  });
  const pull = asStr(ctr.imagePullPolicy);
  if (pull === '') errs.push(required(`${path}.imagePullPolicy`));
  else if (!PULL_POLICIES.includes(pull)) errs.push(notSupported(`${path}.imagePullPolicy`, pull, PULL_POLICIES));
  return errs;
}

function hostPortConflicts(containers: Obj[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  containers.forEach((ctr, ci) => {
    asArr(ctr.ports).forEach((item, pi) => {
      const port = asObj(item) ?? {};
      const hostPort = asNum(port.hostPort) ?? 0;
      if (hostPort === 0) return;
      const id = `${asStr(port.protocol)}/${asStr(port.hostIP)}/${hostPort}`;
      if (seen.has(id)) errs.push(duplicate(`${index(`${index(path, ci)}.ports`, pi)}.hostPort`, id));
      else seen.add(id);
    });
  });
  return errs;
}

/** `ValidateTolerations`. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArr(tolerations).forEach((item, i) => {
    const t = asObj(item) ?? {};
    const p = index(path, i);
    const k = asStr(t.key);
    const op = asStr(t.operator);
    const effect = asStr(t.effect);
    const value = asStr(t.value);
    if (k !== '') for (const m of isQualifiedName(k)) errs.push(invalidValue(`${p}.key`, k, m));
    if (k === '' && op !== 'Exists') {
      errs.push(
        invalidValue(
          `${p}.operator`,
          op,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && effect !== 'NoExecute') {
      errs.push(invalidValue(`${p}.effect`, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (op === 'Equal' || op === '') {
      const msgs = isValidLabelValue(value);
      if (msgs.length > 0) errs.push(invalidValue(`${p}.operator`, value, msgs.join(';')));
    } else if (op === 'Exists') {
      if (value !== '')
        errs.push(invalidValue(`${p}.operator`, value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(notSupported(`${p}.operator`, op, ['Equal', 'Exists']));
    }
    if (effect !== '' && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) {
      errs.push(notSupported(`${p}.effect`, effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']));
    }
  });
  return errs;
}

/** `ValidatePodSpec` (the parts listed in the module comment). */
export function validatePodSpec(spec: Obj, podName: string): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    errs.push(required('spec.terminationGracePeriodSeconds'));
  }
  const vols = validateVolumes(spec.volumes, podName);
  errs.push(...vols.errs);
  const containers = asArr(spec.containers).map((c) => asObj(c) ?? {});
  const initContainers = asArr(spec.initContainers).map((c) => asObj(c) ?? {});
  if (containers.length === 0) {
    errs.push(required('spec.containers'));
  } else {
    const names = new Set<string>();
    containers.forEach((ctr, i) => {
      const p = index('spec.containers', i);
      errs.push(...validateContainerCommon(ctr, vols.names, p));
      const name = asStr(ctr.name);
      if (names.has(name)) errs.push(duplicate(`${p}.name`, name));
      else names.add(name);
      if (ctr.restartPolicy !== undefined && ctr.restartPolicy !== null)
        errs.push(forbidden(`${p}.restartPolicy`, 'may not be set for non-init containers'));
    });
    errs.push(...hostPortConflicts(containers, 'spec.containers'));
  }
  const allNames = new Set(containers.map((c) => asStr(c.name)));
  initContainers.forEach((ctr, i) => {
    const p = index('spec.initContainers', i);
    errs.push(...validateContainerCommon(ctr, vols.names, p));
    const restart = ctr.restartPolicy;
    if (restart !== undefined && restart !== null && restart !== 'Always')
      errs.push(notSupported(`${p}.restartPolicy`, restart, ['Always']));
    const name = asStr(ctr.name);
    if (allNames.has(name)) errs.push(duplicate(`${p}.name`, name));
    else if (name !== '') allNames.add(name);
    errs.push(...hostPortConflicts([ctr], 'spec.initContainers'));
    if (restart !== 'Always') {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
        if (ctr[f] !== undefined && ctr[f] !== null)
          errs.push(forbidden(`${p}.${f}`, 'may not be set for init containers without restartPolicy=Always'));
      }
    }
  });
  if (spec.hostNetwork === true) {
    containers.forEach((ctr, i) => {
      asArr(ctr.ports).forEach((item, j) => {
        const port = asObj(item) ?? {};
        const hostPort = asNum(port.hostPort) ?? 0;
        if (hostPort !== (asNum(port.containerPort) ?? 0)) {
          errs.push(
            invalidValue(
              `${index(`${index('spec.containers', i)}.ports`, j)}.hostPort`,
              hostPort,
              'must match `containerPort` when `hostNetwork` is true',
            ),
          );
        }
      });
    });
  }
  const restartPolicy = asStr(spec.restartPolicy);
  if (restartPolicy === '') errs.push(required('spec.restartPolicy'));
  else if (!RESTART_POLICIES.includes(restartPolicy))
    errs.push(notSupported('spec.restartPolicy', restartPolicy, RESTART_POLICIES));
  const dnsPolicy = asStr(spec.dnsPolicy);
  if (dnsPolicy === '') errs.push(required('spec.dnsPolicy'));
  else if (!DNS_POLICIES.includes(dnsPolicy)) errs.push(notSupported('spec.dnsPolicy', dnsPolicy, DNS_POLICIES));
  errs.push(...validateLabels(spec.nodeSelector, 'spec.nodeSelector'));
  if (dnsPolicy === 'None' && asObj(spec.dnsConfig) === undefined) {
    errs.push(required('spec.dnsConfig', 'must provide `dnsConfig` when `dnsPolicy` is None'));
  }
  const gates = asArr(spec.schedulingGates).map((g) => asStr(asObj(g)?.name));
  gates.forEach((g, i) => {
    for (const m of isQualifiedName(g)) errs.push(invalidValue(index('spec.schedulingGates', i), g, m));
    if (gates.indexOf(g) !== i) errs.push(duplicate(index('spec.schedulingGates', i), g));
  });
  for (const field of ['serviceAccountName', 'nodeName']) {
    const v = asStr(spec[field]);
    if (v !== '') for (const m of nameIsDNSSubdomain(v, false)) errs.push(invalidValue(`spec.${field}`, v, m));
  }
  const ads = asNum(spec.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > MAX_INT32))
    errs.push(invalidValue('spec.activeDeadlineSeconds', ads, inclusiveRangeError(1, MAX_INT32)));
  for (const field of ['hostname', 'subdomain']) {
    const v = asStr(spec[field]);
    if (v !== '') for (const m of isDNS1123Label(v)) errs.push(invalidValue(`spec.${field}`, v, m));
  }
  errs.push(...validateTolerations(spec.tolerations, 'spec.tolerations'));
  const pcName = asStr(spec.priorityClassName);
  if (pcName !== '')
    for (const m of nameIsDNSSubdomain(pcName, false)) errs.push(invalidValue('spec.priorityClassName', pcName, m));
  const preemption = spec.preemptionPolicy;
  if (preemption !== undefined && preemption !== null) {
    if (preemption === '') errs.push(required('spec.preemptionPolicy'));
    else if (preemption !== 'PreemptLowerPriority' && preemption !== 'Never') {
      errs.push(notSupported('spec.preemptionPolicy', preemption, ['PreemptLowerPriority', 'Never']));
    }
  }
  return errs;
}

/** `validateContainersOnlyForPod`: images without surrounding whitespace. */
export function imageWhitespace(containers: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  asArr(containers).forEach((c, i) => {
    const image = asStr(asObj(c)?.image);
    if (image !== image.trim())
      errs.push(invalidValue(`${index(path, i)}.image`, image, 'must not have leading or trailing whitespace'));
  });
  return errs;
}
