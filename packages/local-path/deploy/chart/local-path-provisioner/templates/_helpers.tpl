{{/* vim: set filetype=mustache: */}}
{{/*
Expand the name of the chart.
*/}}
{{- define "local-path-provisioner.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Create a default fully qualified app name, truncated at 63 chars (DNS names): fullnameOverride, else the release
name if it contains the chart name, else <release>-<chart name>.
*/}}
{{- define "local-path-provisioner.fullname" -}}
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

{{/*
Chart name and version as used by the chart label.
*/}}
{{- define "local-path-provisioner.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The release namespace, or namespaceOverride.
*/}}
{{- define "local_path_provisioner.namespace" -}}
{{- if .Values.namespaceOverride -}}
{{- .Values.namespaceOverride -}}
{{- else -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/*
Common labels.
*/}}
{{- define "local-path-provisioner.labels" -}}
app.kubernetes.io/name: {{ include "local-path-provisioner.name" . }}
helm.sh/chart: {{ include "local-path-provisioner.chart" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- if .Chart.AppVersion }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
Selector labels (never change them: a Deployment's selector is immutable).
*/}}
{{- define "local-path-provisioner.selectorLabels" -}}
app.kubernetes.io/name: {{ include "local-path-provisioner.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
The name of the service account to use.
*/}}
{{- define "local-path-provisioner.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "local-path-provisioner.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The provisioner name: storageClass.provisionerName, else cluster.local/<fullname> (as upstream's chart).
*/}}
{{- define "local-path-provisioner.provisionerName" -}}
{{- if .Values.storageClass.provisionerName -}}
{{- .Values.storageClass.provisionerName -}}
{{- else -}}
{{- printf "cluster.local/%s" (include "local-path-provisioner.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
The registry prefix ("<url>/") of images, when privateRegistry.registryUrl is set.
*/}}
{{- define "registry_url" -}}
{{- if .Values.privateRegistry.registryUrl -}}
{{- printf "%s/" .Values.privateRegistry.registryUrl -}}
{{- end -}}
{{- end -}}

{{/*
The .dockerconfigjson of the registry secret, base64-encoded.
*/}}
{{- define "local-path-provisioner.secret" -}}
{{- $auth := printf "%s:%s" .Values.privateRegistry.registryUser .Values.privateRegistry.registryPasswd | b64enc -}}
{{- dict "auths" (dict .Values.privateRegistry.registryUrl (dict "auth" $auth)) | toJson | b64enc -}}
{{- end -}}

{{/*
config.json: storageClassConfigs if any, else sharedFileSystemPath if set, else nodePathMap.
*/}}
{{- define "local-path-provisioner.config" -}}
{{- $config := dict -}}
{{- if .Values.storageClassConfigs -}}
{{- $classes := dict -}}
{{- range $name, $c := .Values.storageClassConfigs -}}
{{- $entry := dict -}}
{{- if $c.nodePathMap -}}
{{- $_ := set $entry "nodePathMap" $c.nodePathMap -}}
{{- end -}}
{{- if $c.sharedFileSystemPath -}}
{{- $_ := set $entry "sharedFileSystemPath" $c.sharedFileSystemPath -}}
{{- end -}}
{{- $_ := set $classes $name $entry -}}
{{- end -}}
{{- $_ := set $config "storageClassConfigs" $classes -}}
{{- else if .Values.sharedFileSystemPath -}}
{{- $_ := set $config "sharedFileSystemPath" .Values.sharedFileSystemPath -}}
{{- else -}}
{{- $_ := set $config "nodePathMap" .Values.nodePathMap -}}
{{- end -}}
{{- toPrettyJson $config -}}
{{- end -}}
