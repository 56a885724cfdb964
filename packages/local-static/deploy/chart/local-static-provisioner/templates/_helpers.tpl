{{/* The chart's name. */}}
{{- define "local-static.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: fullnameOverride, else the release name if it contains the chart name, else both. */}}
{{- define "local-static.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "local-static.labels" -}}
app.kubernetes.io/name: {{ include "local-static.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* Selector labels of the DaemonSet. */}}
{{- define "local-static.selectorLabels" -}}
app.kubernetes.io/name: {{ include "local-static.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The ServiceAccount's name. */}}
{{- define "local-static.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "local-static.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Selector labels of the node-cleanup Deployment: a name of its own, so that the DaemonSet's selector misses its pods. */}}
{{- define "local-static.nodeCleanupSelectorLabels" -}}
app.kubernetes.io/name: {{ include "local-static.name" . }}-node-cleanup
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node-cleanup
{{- end -}}

{{/* The node-cleanup controller's ServiceAccount name. */}}
{{- define "local-static.nodeCleanupServiceAccountName" -}}
{{- if .Values.nodeCleanup.serviceAccount.create -}}
{{- default (printf "%s-node-cleanup" (include "local-static.fullname" .)) .Values.nodeCleanup.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.nodeCleanup.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The image of every container (the provisioner, its cleanup Jobs, node-cleanup): `image` as upstream's chart writes it,
a plain string rendered through tpl, or this chart's repository and tag (default the appVersion).
*/}}
{{- define "local-static.image" -}}
{{- if kindIs "string" .Values.image -}}
{{- tpl .Values.image . -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The pull policy: upstream's imagePullPolicy, else image.pullPolicy; none (Kubernetes' default) with neither. */}}
{{- define "local-static.imagePullPolicy" -}}
{{- if .Values.imagePullPolicy -}}
{{- .Values.imagePullPolicy -}}
{{- else if kindIs "map" .Values.image -}}
{{- .Values.image.pullPolicy -}}
{{- end -}}
{{- end -}}
