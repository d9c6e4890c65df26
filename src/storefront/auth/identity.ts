/**
 * The identity service: identities (<region>:<uuid>, the contract's user id) and the temporary
 * credentials a signed-in client uses to presign GET /auth/apikey/get. The secret access key is
 * derived (HMAC of the access key id), never stored; the session token is stored as a SHA-256
 * hash: a stolen database gives no usable credentials. In development GetId and
 * GetCredentialsForIdentity are served over HTTP, shaped like Cognito's identity API.
 */
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../db/knex';
import type { CredentialResolver, ResolvedCredential } from './sigv4';

export interface TemporaryCredentials {
  identityId: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

export interface IdentityPrincipal {
  identityId: string;
  accessKeyId: string;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Access key ids of temporary credentials look like AWS's: ASIA + 16 characters of base32. */
function newAccessKeyId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return `ASIA${[...randomBytes(16)].map((b) => alphabet[b % 32]).join('')}`;
}

export class IdentityService implements CredentialResolver<IdentityPrincipal> {
  constructor(
    private readonly db: Db,
    private readonly opts: { secret: string; region: string; credentialsTtlSeconds: number; clock: () => Date },
  ) {}

  /** The secret access key of an access key id (derived, never stored). */
  secretFor(accessKeyId: string): string {
    return createHmac('sha256', this.opts.secret)
      .update(`identity-secret-access-key:${accessKeyId}`)
      .digest('base64')
      .slice(0, 40);
  }

  /** The identity of a login (the same one each time), or a new guest identity without one. */
  async getId(login?: { provider: string; subject: string }): Promise<string> {
    const identityId = `${this.opts.region}:${randomUUID()}`;
    if (!login) {
      await this.db('identity_identities').insert({ identity_id: identityId });
      return identityId;
    }
    const row = await this.db('identity_identities')
      .insert({ identity_id: identityId, login_provider: login.provider, login_subject: login.subject })
      .onConflict(['login_provider', 'login_subject'])
      .merge({ login_provider: login.provider }) // no-op update, so RETURNING gives the existing row
      .returning('identity_id');
    return row[0].identity_id as string;
  }

  async exists(identityId: string): Promise<boolean> {
    return !!(await this.db('identity_identities').where({ identity_id: identityId }).first('identity_id'));
  }

  async issueCredentials(identityId: string): Promise<TemporaryCredentials> {
    const accessKeyId = newAccessKeyId();
    const sessionToken = randomBytes(48).toString('base64url');
    const expiration = new Date(this.opts.clock().getTime() + this.opts.credentialsTtlSeconds * 1000);
    await this.db('identity_credentials').insert({
      access_key_id: accessKeyId,
      identity_id: identityId,
      session_token_hash: sha256(sessionToken),
      expires_at: expiration,
    });
    return { identityId, accessKeyId, secretAccessKey: this.secretFor(accessKeyId), sessionToken, expiration };
  }

  async resolve(accessKeyId: string): Promise<ResolvedCredential<IdentityPrincipal> | null> {
    const row = await this.db('identity_credentials').where({ access_key_id: accessKeyId }).first();
    if (!row) return null;
    const stored: Buffer = row.session_token_hash;
    return {
      secretAccessKey: this.secretFor(accessKeyId),
      sessionToken: { matches: (token) => timingSafeEqual(sha256(token), stored) },
      revoked: row.revoked_at !== null,
      expiresAt: row.expires_at,
      principal: { identityId: row.identity_id, accessKeyId },
    };
  }

  /** Every live credential of the identity stops working (used when its session is invalidated). */
  async revokeCredentials(identityId: string, trx: Knex = this.db): Promise<number> {
    return trx('identity_credentials')
      .where({ identity_id: identityId })
      .whereNull('revoked_at')
      .update({ revoked_at: this.opts.clock() });
  }
}
