/**
 * zod validation with the payment API's error codes: an absent required field is
 * MISSING_FIELD, anything else wrong is INVALID_INPUT; details name the field.
 */
import type { ZodIssue, ZodType, ZodTypeDef } from 'zod';
import { AppError, ErrorCode } from '../domain/errors';

const fieldOf = (i: ZodIssue): string => i.path.join('.') || (i.code === 'unrecognized_keys' ? i.keys.join(',') : '(body)');

export function validate<T>(schema: ZodType<T, ZodTypeDef, unknown>, input: unknown): T {
  const r = schema.safeParse(input ?? {});
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
