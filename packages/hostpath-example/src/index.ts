/** @packageDocumentation Work in progress. */
export const packageName = '@kprov/hostpath-example';
