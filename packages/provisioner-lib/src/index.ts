/** @packageDocumentation Work in progress. */
export const packageName = '@kprov/provisioner-lib';
