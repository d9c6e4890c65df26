/**
 * The one error-code enum of Talat and its exhaustive code -> HTTP status map.
 * A new code without a status does not compile.
 */
export const ErrorCode = {
  // payment API (the contract "Errors")
  INVALID_INPUT: 'INVALID_INPUT',
  MISSING_FIELD: 'MISSING_FIELD',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  // gateway plumbing
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  CONFLICT: 'CONFLICT',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  // callback API (the contract "Callback error names")
  INVALID_SIGNATURE: 'INVALID_SIGNATURE',
  INVALID_IP: 'INVALID_IP',
  INVALID_TIMESTAMP: 'INVALID_TIMESTAMP',
  ORDER_NOT_FOUND: 'ORDER_NOT_FOUND',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const httpStatusOf: { readonly [K in ErrorCode]: number } = {
  INVALID_INPUT: 400,
  MISSING_FIELD: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  INVALID_SIGNATURE: 401,
  INVALID_IP: 403,
  INVALID_TIMESTAMP: 400,
  ORDER_NOT_FOUND: 404,
};

/**
 * An error whose code, message and details are safe to show to the client; anything else that
 * escapes a handler becomes INTERNAL_ERROR with a generic message. An AppError is an answer, not
 * a fault: it captures no stack trace (capturing one walks every awaiting middleware). Faults
 * keep theirs, and the error handler logs those.
 */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.status = httpStatusOf[code];
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
