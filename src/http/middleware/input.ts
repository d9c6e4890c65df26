/**
 * The input rule (src/http/input-rule.ts), after the body is read and before any route: path
 * parameters (named as the route names them), query parameters, JSON and form fields. A refused
 * request is 400 INVALID_INPUT in its area's envelope, details {field, in, reason}; `onRefused`
 * lets an area react (the callback API alerts the operator when the refused callback was
 * correctly signed).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, ErrorCode } from '../../domain/errors';
import { findUnstorable, printableField, unstorableReason, type Unstorable } from '../input-rule';

export interface InputViolation extends Unstorable {
  in: 'path' | 'query' | 'body';
}

function pathViolation(ctx: Context, router: Router): InputViolation | undefined {
  if (!ctx.path.includes('%')) return undefined; // nothing percent-encoded: nothing to decode
  for (const layer of router.match(ctx.path, ctx.method).pathAndMethod) {
    if (layer.paramNames.length === 0) continue;
    const found = findUnstorable(layer.params(ctx.path, layer.captures(ctx.path), {}));
    if (found) return { ...found, in: 'path' };
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(ctx.path);
  } catch {
    return undefined; // malformed escapes: the router answers 404
  }
  const reason = unstorableReason(decoded);
  return reason ? { field: '(path)', reason, in: 'path' } : undefined;
}

export function violationOf(ctx: Context, router: Router): InputViolation | undefined {
  const inPath = pathViolation(ctx, router);
  if (inPath) return inPath;
  if (ctx.querystring) {
    const q = findUnstorable(ctx.query);
    if (q) return { ...q, in: 'query' };
  }
  const body = ctx.request.body;
  if (body !== undefined && body !== null) {
    const b = findUnstorable(body);
    if (b) return { ...b, in: 'body' };
  }
  return undefined;
}

/** A step (see src/app/app.ts), after the body is read: throws 400 INVALID_INPUT for a refused request. */
export function inputRule(router: Router, onRefused?: (ctx: Context, v: InputViolation) => void) {
  return (ctx: Context): void => {
    const v = violationOf(ctx, router);
    if (v) {
      onRefused?.(ctx, v);
      throw refusal(v);
    }
  };
}

const refusal = (v: InputViolation): AppError => {
  const field = printableField(v.field);
  return new AppError(ErrorCode.INVALID_INPUT, `${field}: a ${v.reason} is not allowed`, {
    field,
    in: v.in,
    reason: v.reason,
  });
};

/**
 * The same rule for what a handler finds inside the request (a JSON body sent as a JSON string,
 * parsed only by the handler): throws the same 400 INVALID_INPUT.
 */
export function assertStorable(value: unknown): void {
  const found = findUnstorable(value);
  if (found) throw refusal({ ...found, in: 'body' });
}
