/**
 * zod validation with the payment API's error codes: an absent required field is
 * MISSING_FIELD, anything else wrong is INVALID_INPUT; details name the field.
 */
import type { ZodIssue, ZodType, ZodTypeDef } from 'zod';
import { AppError, ErrorCode } from '../domain/errors';

/**
 * `root` names what `input` is when it is one value rather than an object of fields (a path
 * parameter: `validate(GroupId, ctx.params.groupId, 'groupId')`), so errors name it, not `(body)`.
 */
export function validate<T>(schema: ZodType<T, ZodTypeDef, unknown>, input: unknown, root?: string): T {
  const fieldOf = (i: ZodIssue): string =>
    [root, ...i.path].filter((p) => p !== undefined).join('.') ||
    (i.code === 'unrecognized_keys' ? i.keys.join(',') : '(body)');
  const r = schema.safeParse(root === undefined ? (input ?? {}) : input);
  if (r.success) return r.data;
  const issues = r.error.issues;
  const missing = issues.filter((i) => i.code === 'invalid_type' && i.received === 'undefined');
  if (missing.length > 0) {
    const fields = missing.map(fieldOf);
    throw new AppError(ErrorCode.MISSING_FIELD, `${fields[0]} is required`, { field: fields[0], fields });
  }
  const first = issues[0];
  throw new AppError(ErrorCode.INVALID_INPUT, `${fieldOf(first)}: ${first.message}`, {
    field: fieldOf(first),
    issues: issues.map((i) => ({ field: fieldOf(i), message: i.message })),
  });
}
