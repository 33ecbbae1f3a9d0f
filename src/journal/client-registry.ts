// Client records: an API key shown once and stored only as its SHA-256, the profiles a client may use, its limit of
// queued + running tasks, and its own values of the per-client limits (read by the scripts; absent = the default).
import { createHash, randomBytes } from "node:crypto";
import { ulid } from "ulid";
import type { KeySpace } from "./keys.ts";
import { ROTATE_KEY } from "./lua/rotate-key.ts";
import type { RedisLike } from "./scripts.ts";

/**
 * A client's own values of the per-client limits; absent means the configured default (`clients.*`) applies and 0
 * means no limit. The scripts read them from the record at every check, so a change applies to the next request.
 */
export interface ClientLimits {
  /** Bytes its tasks may hold in Redis (clients.maxStoredBytes). */
  maxStoredBytes?: number;
  /** Tasks it may have in INPUT_REQUIRED or AUTH_REQUIRED (clients.maxInterruptedTasks). */
  maxInterruptedTasks?: number;
  /** Runs of it that actors execute at once (clients.maxRunningTasks). */
  maxRunningTasks?: number;
  /** Requests per second across all gateways (clients.requestsPerSecond; the gateway reads it). */
  requestsPerSecond?: number;
}

export interface ClientRecord extends ClientLimits {
  id: string;
  name: string;
  /** Profile names this client may use; `["*"]` means every profile. */
  profiles: string[];
  /** Queued + running tasks allowed at once; 0 = no limit. */
  limit: number;
  revoked: boolean;
  createdAt: string;
}

export interface NewClient {
  record: ClientRecord;
  /** The API key: shown once, never stored. */
  apiKey: string;
}

/** The record's field of each limit. */
const LIMIT_FIELDS = {
  maxStoredBytes: "maxbytes",
  maxInterruptedTasks: "maxint",
  maxRunningTasks: "maxrun",
  requestsPerSecond: "rps",
} as const satisfies Record<keyof ClientLimits, string>;

export const LIMIT_NAMES = Object.keys(LIMIT_FIELDS) as (keyof ClientLimits)[];

/** A change of limits: a number sets the client's own value, `null` returns it to the default, absent keeps it. */
export type LimitChange = { [name in keyof ClientLimits]?: number | null } & { limit?: number };

/** A rotated client's new key, and until when the key it replaced still works (undefined: it stopped at once). */
export interface RotatedKey {
  apiKey: string;
  previousKeyUntil: Date | undefined;
}

/** A new API key: 24 random bytes, base64url, after a prefix that tells what it is. */
function newApiKey(): string {
  return `a2a_${randomBytes(24).toString("base64url")}`;
}

/** SHA-256 (hex) of an API key: what Redis keeps. */
export function hashApiKey(apiKey: string): string {
  return createHash("sha256").update(apiKey).digest("hex");
}

function decode(id: string, fields: Record<string, string>): ClientRecord | undefined {
  if (!fields.name && !fields.limit) return undefined;
  const record: ClientRecord = {
    id,
    name: fields.name ?? "",
    profiles: (fields.profiles ?? "*").split(",").filter((p) => p !== ""),
    limit: Number(fields.limit ?? 0),
    revoked: fields.revoked === "1",
    createdAt: fields.created ?? "",
  };
  for (const name of LIMIT_NAMES) {
    const value = fields[LIMIT_FIELDS[name]];
    if (value !== undefined && value !== "") record[name] = Number(value);
  }
  return record;
}

export class ClientRegistry {
  constructor(
    private readonly redis: RedisLike,
    private readonly keys: KeySpace,
  ) {}

  private recordKey(clientId: string): string {
    return this.keys.client(this.keys.shardOf(clientId), clientId);
  }

  async add(input: { name: string; profiles?: string[]; limit?: number } & Partial<ClientLimits>): Promise<NewClient> {
    const id = ulid().toLowerCase();
    const apiKey = newApiKey();
    const keyHash = hashApiKey(apiKey);
    const record: ClientRecord = {
      id,
      name: input.name,
      profiles: input.profiles && input.profiles.length > 0 ? input.profiles : ["*"],
      limit: input.limit ?? 0,
      revoked: false,
      createdAt: new Date().toISOString(),
    };
    const own: Record<string, number> = {};
    for (const name of LIMIT_NAMES) {
      const value = input[name];
      if (value !== undefined) {
        record[name] = value;
        own[LIMIT_FIELDS[name]] = value;
      }
    }
    await this.redis.hset(this.recordKey(id), {
      name: record.name,
      profiles: record.profiles.join(","),
      limit: record.limit,
      ...own,
      revoked: 0,
      created: record.createdAt,
      keyhash: keyHash,
    });
    await this.redis.set(this.keys.apiKey(keyHash), id);
    await this.redis.sadd(this.keys.clients(), id);
    return { record, apiKey };
  }

  async get(clientId: string): Promise<ClientRecord | undefined> {
    return decode(clientId, await this.redis.hgetall(this.recordKey(clientId)));
  }

  async list(): Promise<ClientRecord[]> {
    const ids = (await this.redis.smembers(this.keys.clients())).sort();
    const records = await Promise.all(ids.map((id) => this.get(id)));
    return records.filter((r): r is ClientRecord => r !== undefined);
  }

  /** The live client an API key belongs to; undefined for an unknown key or a revoked client. */
  async authenticate(apiKey: string): Promise<ClientRecord | undefined> {
    if (apiKey.length === 0 || apiKey.length > 512) return undefined;
    const id = await this.redis.get(this.keys.apiKey(hashApiKey(apiKey)));
    if (!id) return undefined;
    const record = await this.get(id);
    return record && !record.revoked ? record : undefined;
  }

  /**
   * Revokes a client: its key stops working at once (gateways cache a lookup for at most a second) and every gateway
   * is told to close its open streams; its tasks stay until retention.
   */
  async revoke(clientId: string): Promise<boolean> {
    const key = this.recordKey(clientId);
    const [keyHash, kept] = await this.redis.hmget(key, "keyhash", "oldkeyhash");
    if (!keyHash) return false;
    await this.redis.hset(key, "revoked", 1);
    await this.redis.del(this.keys.apiKey(keyHash));
    if (kept) await this.redis.del(this.keys.apiKey(kept));
    await this.redis.publish(this.keys.revokedChannel(), clientId);
    return true;
  }

  /**
   * Gives a client a new API key (returned once; its tasks stay its own). The key it replaces stops working at once
   * (gateways forget their cached lookups and close the client's open streams, which that key may have opened), or,
   * with `graceSeconds`, when the grace ends, so that its users can move to the new key first; open streams then stay
   * open until they end. A key an earlier rotation kept stops at once either way. Undefined for an unknown client,
   * "revoked" for a revoked one (nothing changes).
   */
  async rotate(clientId: string, graceSeconds = 0): Promise<RotatedKey | "revoked" | undefined> {
    const apiKey = newApiKey();
    const keyHash = hashApiKey(apiKey);
    // mapped first: once the record names the new key, the key works
    await this.redis.set(this.keys.apiKey(keyHash), clientId);
    const rotated = await ROTATE_KEY.run(
      this.redis,
      { client: this.recordKey(clientId) },
      { keyHash, keepReplaced: graceSeconds > 0 ? "1" : "" },
    );
    if (typeof rotated === "string") {
      await this.redis.del(this.keys.apiKey(keyHash));
      return rotated === "revoked" ? "revoked" : undefined;
    }
    if (rotated.givenUp !== "") await this.redis.del(this.keys.apiKey(rotated.givenUp));
    if (graceSeconds > 0) {
      await this.redis.expire(this.keys.apiKey(rotated.replaced), graceSeconds);
      return { apiKey, previousKeyUntil: new Date(Date.now() + graceSeconds * 1000) };
    }
    await this.redis.del(this.keys.apiKey(rotated.replaced));
    await this.redis.publish(this.keys.revokedChannel(), clientId);
    return { apiKey, previousKeyUntil: undefined };
  }

  /** Which of these clients are revoked or gone (their record deleted), in one round trip per shard. */
  async revokedAmong(clientIds: readonly string[]): Promise<string[]> {
    const flags = await Promise.all(clientIds.map((id) => this.redis.hget(this.recordKey(id), "revoked")));
    return clientIds.filter((_, index) => flags[index] !== "0");
  }

  /** Sets the limit of queued + running tasks (0 = none). */
  async setLimit(clientId: string, limit: number): Promise<boolean> {
    return await this.setLimits(clientId, { limit });
  }

  /** Changes a client's limits in one step; false when there is no such client. */
  async setLimits(clientId: string, change: LimitChange): Promise<boolean> {
    const key = this.recordKey(clientId);
    if (!(await this.redis.exists(key))) return false;
    const set: Record<string, number> = {};
    const cleared: string[] = [];
    if (change.limit !== undefined) set.limit = change.limit;
    for (const name of LIMIT_NAMES) {
      const value = change[name];
      if (value === null) cleared.push(LIMIT_FIELDS[name]);
      else if (value !== undefined) set[LIMIT_FIELDS[name]] = value;
    }
    const transaction = this.redis.multi();
    if (Object.keys(set).length > 0) transaction.hset(key, set);
    if (cleared.length > 0) transaction.hdel(key, ...cleared);
    await transaction.exec();
    return true;
  }
}
