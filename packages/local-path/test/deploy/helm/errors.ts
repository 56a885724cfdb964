// The errors of the test renderer: every failure names the template and line it comes from (TemplateError, shared
// with the product's template parser).
export { TemplateError } from '../../../src/volume/text-template.js';

/** Thrown by functions and value helpers, which do not know where they are called; the evaluator adds the place. */
export class EvalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EvalError';
  }
}

/** A construct, function or value kind that Helm supports but this renderer does not. */
export function notImplemented(what: string): EvalError {
  return new EvalError(
    `${what} is not implemented by the test renderer (test/deploy/helm/); implement it with Helm's semantics before using it in the chart`,
  );
}
