/**
 * Storefront sign-in (the contract "Authentication" 3):
 *  - GET /auth/apikey/get: SigV4 presigned query parameters, signed with temporary credentials
 *    of the identity service -> the storefront API key of that identity (issued on first call).
 *  - POST /auth/invalidate/invalidate: the caller authenticates with that API key in X-API-Key;
 *    the key and every credential of the identity stop working at once.
 *  - POST /dev/identity (SIMULATORS, never in production): the identity simulator, two operations of the
 *    Cognito identity API chosen by X-Amz-Target: GetId and GetCredentialsForIdentity.
 * All three are rate limited per client address (STOREFRONT_AUTH_RATE_PER_MIN) and answer
 * with Cache-Control: no-store.
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { AppDeps } from '../../http/deps';
import { AppError, ErrorCode } from '../../domain/errors';
import { verifyPresigned } from './sigv4';
import { authRateLimit } from '../rate-limit';
import type { Storefront } from '../storefront';
import { z } from '../../http/openapi';
import { validate } from '../../http/validate';

export const IDENTITY_TARGET_PREFIX = 'AWSCognitoIdentityService.';

const GetIdRequest = z
  .object({
    IdentityPoolId: z.string().max(128).optional(),
    Logins: z.record(z.string().min(1).max(128), z.string().min(1).max(2048)).optional(),
  })
  .strict()
  .refine((b) => Object.keys(b.Logins ?? {}).length <= 1, { message: 'at most one login', path: ['Logins'] });
const GetCredentialsRequest = z.object({ IdentityId: z.string().min(1).max(128) }).strict();

const noStore = async (ctx: Context, next: Next) => {
  ctx.set('Cache-Control', 'no-store');
  await next();
};

export function storefrontAuthRoutes(deps: Pick<AppDeps, 'config' | 'db'>, sf: Storefront, clock: () => Date): Router {
  const r = new Router();
  const limited = authRateLimit(deps.db, deps.config.storefront.authRatePerMinute, clock);
  const { sigv4 } = deps.config.storefront;

  r.get('/auth/apikey/get', noStore, limited, async (ctx) => {
    const result = await verifyPresigned(
      { method: ctx.method, path: ctx.path, rawQuery: ctx.querystring, headers: ctx.headers },
      { resolver: sf.identity, region: sigv4.region, service: sigv4.service, now: clock() },
    );
    if (!result.ok) {
      const details = { reason: result.reason, ...(result.field ? { field: result.field } : {}) };
      if (result.reason === 'missing') throw new AppError(ErrorCode.MISSING_FIELD, result.message, details);
      if (result.reason === 'malformed') throw new AppError(ErrorCode.INVALID_INPUT, result.message, details);
      throw new AppError(ErrorCode.UNAUTHORIZED, `Signature not accepted: ${result.message}`, details);
    }
    const key = await sf.apiKeys.issueOrReturn(result.principal.identityId, result.accessKeyId);
    ctx.body = {
      apiKey: key.apiKey,
      keyId: key.keyId,
      identityId: key.identityId,
      createdAt: key.createdAt.toISOString(),
      created: key.created,
    };
  });

  r.post('/auth/invalidate/invalidate', noStore, limited, async (ctx) => {
    const given = ctx.get('X-API-Key');
    if (!given)
      throw new AppError(ErrorCode.UNAUTHORIZED, 'Authentication required: send the storefront API key in X-API-Key', {
        header: 'X-API-Key',
      });
    const owner = await sf.apiKeys.authenticate(given);
    if (!owner)
      throw new AppError(ErrorCode.UNAUTHORIZED, 'The API key is not valid (unknown or invalidated)', {
        header: 'X-API-Key',
      });
    const revoked = await sf.apiKeys.invalidateSession(owner);
    ctx.body = {
      invalidated: true,
      keyId: owner.keyId,
      identityId: owner.identityId,
      revokedCredentials: revoked.revokedCredentials,
    };
  });

  // never in production, even with SIMULATORS=on (sandbox providers): it believes any Logins map
  if (deps.config.simulators && deps.config.env !== 'production') {
    r.post('/dev/identity', noStore, limited, async (ctx) => {
      const target = ctx.get('X-Amz-Target');
      if (target === `${IDENTITY_TARGET_PREFIX}GetId`) {
        const req = validate(GetIdRequest, ctx.request.body);
        const [login] = Object.entries(req.Logins ?? {});
        ctx.body = {
          IdentityId: await sf.identity.getId(login ? { provider: login[0], subject: login[1] } : undefined),
        };
        return;
      }
      if (target === `${IDENTITY_TARGET_PREFIX}GetCredentialsForIdentity`) {
        const req = validate(GetCredentialsRequest, ctx.request.body);
        if (!(await sf.identity.exists(req.IdentityId)))
          throw new AppError(ErrorCode.NOT_FOUND, 'Identity not found', { identityId: req.IdentityId });
        const c = await sf.identity.issueCredentials(req.IdentityId);
        ctx.body = {
          IdentityId: c.identityId,
          Credentials: {
            AccessKeyId: c.accessKeyId,
            SecretKey: c.secretAccessKey,
            SessionToken: c.sessionToken,
            Expiration: Math.floor(c.expiration.getTime() / 1000),
          },
        };
        return;
      }
      throw new AppError(
        ErrorCode.INVALID_INPUT,
        `X-Amz-Target must be ${IDENTITY_TARGET_PREFIX}GetId or ${IDENTITY_TARGET_PREFIX}GetCredentialsForIdentity`,
        {
          field: 'X-Amz-Target',
        },
      );
    });
  }
  return r;
}
