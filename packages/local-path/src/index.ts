/** @packageDocumentation Work in progress. */
export const packageName = '@kprov/local-path';
