/**
 * Storefront API keys: one active key per identity. GET /auth/apikey/get hands out the active
 * key, or issues one when there is none, so a client that signs in again gets the same key
 * until its session is invalidated.
 *
 * The key is derived (HMAC with STOREFRONT_KEY_SECRET) from its row id, so it can be handed out
 * again while only its SHA-256 hash is stored; look-ups go by that hash. Invalidating a session
 * revokes the key and every credential of the identity in one transaction: both stop working
 * with the next request (nothing caches them).
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { Db } from '../../db/knex';
import type { IdentityService } from './identity';

export const API_KEY_PREFIX = 'sfk_';

export interface IssuedKey {
  keyId: string;
  apiKey: string;
  identityId: string;
  createdAt: Date;
  /** true when this call created the key */
  created: boolean;
}

export interface KeyOwner {
  keyId: string;
  identityId: string;
}

const hash = (key: string) => createHash('sha256').update(key, 'utf8').digest();
const isUniqueViolation = (e: unknown) => (e as { code?: string })?.code === '23505';

export class ApiKeyService {
  constructor(
    private readonly db: Db,
    private readonly identity: IdentityService,
    private readonly opts: { secret: string; clock: () => Date },
  ) {}

  private keyOf(keyId: string): string {
    return (
      API_KEY_PREFIX + createHmac('sha256', this.opts.secret).update(`storefront-api-key:${keyId}`).digest('base64url')
    );
  }

  async issueOrReturn(identityId: string, accessKeyId: string): Promise<IssuedKey> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const active = await this.db('storefront_api_keys')
        .where({ identity_id: identityId })
        .whereNull('revoked_at')
        .first('id', 'created_at');
      if (active)
        return {
          keyId: active.id,
          apiKey: this.keyOf(active.id),
          identityId,
          createdAt: active.created_at,
          created: false,
        };
      const keyId = `sfkid_${randomUUID().replace(/-/g, '')}`;
      const apiKey = this.keyOf(keyId);
      const createdAt = this.opts.clock();
      try {
        await this.db('storefront_api_keys').insert({
          id: keyId,
          identity_id: identityId,
          key_hash: hash(apiKey),
          issued_to_access_key_id: accessKeyId,
          created_at: createdAt,
        });
        return { keyId, apiKey, identityId, createdAt, created: true };
      } catch (e) {
        if (!isUniqueViolation(e)) throw e; // a concurrent request issued one: read it
      }
    }
    throw new Error('could not issue a storefront API key');
  }

  /** The owner of an active key, or null. */
  async authenticate(apiKey: string): Promise<KeyOwner | null> {
    if (!apiKey.startsWith(API_KEY_PREFIX) || apiKey.length > 100) return null;
    const row = await this.db('storefront_api_keys')
      .where({ key_hash: hash(apiKey) })
      .whereNull('revoked_at')
      .first('id', 'identity_id');
    return row ? { keyId: row.id, identityId: row.identity_id } : null;
  }

  /** Revoke the key and every live credential of its identity. */
  async invalidateSession(owner: KeyOwner): Promise<{ revokedKeys: number; revokedCredentials: number }> {
    return this.db.transaction(async (trx) => {
      const revokedKeys = await trx('storefront_api_keys')
        .where({ id: owner.keyId })
        .whereNull('revoked_at')
        .update({ revoked_at: this.opts.clock() });
      const revokedCredentials = await this.identity.revokeCredentials(owner.identityId, trx);
      return { revokedKeys, revokedCredentials };
    });
  }
}
