// Reads a request's credentials (Bearer token or X-API-Key) and finds the client they belong to, with a cache of at
// most one second so that the accept path stays at few Redis round trips and a revoked key stops within a second, and a
// bound on the lookups of unknown keys running at once, so that a flood of made-up keys cannot crowd clients out.

import { type ClientRecord, type ClientRegistry, hashApiKey, storeFailure } from "../journal/index.ts";
import { PermissionDeniedError, REFUSAL_REASONS, RefusalError, UnauthenticatedError } from "../protocol/index.ts";

/** The API-key header the agent card declares (apiKeySecurityScheme). */
export const API_KEY_HEADER = "X-API-Key";

interface CacheEntry {
  readonly expiresAt: number;
  readonly lookup: Promise<ClientRecord | undefined>;
  /** The client the key belongs to, once the lookup found it. */
  clientId?: string;
}

/** The API key a request carries, or undefined. `Authorization: Bearer` wins over the API-key header. */
export function credentialsOf(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  if (authorization !== null) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return match?.[1];
  }
  const apiKey = headers.get(API_KEY_HEADER)?.trim();
  return apiKey === undefined || apiKey === "" ? undefined : apiKey;
}

/** Too many credential lookups are running in this process: the request is refused before its body is read. */
export class AuthenticationBusyError extends RefusalError {
  constructor(max: number) {
    super(
      REFUSAL_REASONS.authenticationBusy,
      "Too many requests with credentials this gateway has not checked recently; retry shortly",
      1,
      { limit: String(max) },
    );
  }
}

export interface AuthenticatorOptions {
  /** How long a lookup (found or not) is reused, in ms; at most 1000 so revocation takes effect within a second. */
  ttlMs?: number;
  /** Bound on the cache, so a flood of made-up keys cannot grow memory. */
  maxEntries?: number;
  /** Lookups of keys not in the cache that may run at once (server.maxPendingAuthentications). */
  maxPending?: number;
}

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly maxPending: number;
  private pending = 0;

  constructor(
    private readonly registry: Pick<ClientRegistry, "authenticate">,
    options: AuthenticatorOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 1000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxPending = options.maxPending ?? 512;
  }

  /** The live client the request authenticates as; throws UnauthenticatedError (401) otherwise. */
  async authenticate(headers: Headers): Promise<ClientRecord> {
    const apiKey = credentialsOf(headers);
    if (apiKey === undefined) throw new UnauthenticatedError("Missing credentials: send Authorization: Bearer <key>");
    const record = await this.lookup(apiKey);
    if (!record) throw new UnauthenticatedError("Invalid credentials");
    return record;
  }

  /** Throws PermissionDeniedError (403) when the client may not use the profile. */
  authorize(client: ClientRecord, profile: string): void {
    if (!client.profiles.includes("*") && !client.profiles.includes(profile)) throw new PermissionDeniedError(profile);
  }

  private lookup(apiKey: string): Promise<ClientRecord | undefined> {
    const hash = hashApiKey(apiKey);
    const now = performance.now();
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.lookup;
    if (this.pending >= this.maxPending) throw new AuthenticationBusyError(this.maxPending);
    if (this.cache.size >= this.maxEntries) this.evictExpired(now);
    // Concurrent requests with one key share one lookup; a failed lookup is not cached.
    this.pending++;
    const entry: CacheEntry = {
      expiresAt: now + this.ttlMs,
      lookup: this.registry
        .authenticate(apiKey)
        .then(
          (record) => {
            if (record) entry.clientId = record.id;
            return record;
          },
          (error: unknown) => {
            if (this.cache.get(hash) === entry) this.cache.delete(hash);
            return storeFailure(error);
          },
        )
        .finally(() => {
          this.pending--;
        }),
    };
    this.cache.set(hash, entry);
    return entry.lookup;
  }

  /** Drops what the cache knows of a client (it was revoked): its next request is looked up again. */
  forgetClient(clientId: string): void {
    for (const [hash, entry] of this.cache) if (entry.clientId === clientId) this.cache.delete(hash);
  }

  private evictExpired(now: number): void {
    for (const [hash, entry] of this.cache) if (entry.expiresAt <= now) this.cache.delete(hash);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
  }
}
