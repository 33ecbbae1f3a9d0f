// Per-client request rates, shared by every gateway: one token bucket per client in Redis (rateLimit-1.lua).
import type { KeySpace } from "./keys.ts";
import { RATE_LIMIT } from "./lua/rate-limit.ts";
import type { RedisLike } from "./scripts.ts";

export class RateLimits {
  constructor(
    private readonly redis: RedisLike,
    private readonly keys: KeySpace,
  ) {}

  /**
   * Takes one request of a client whose rate is `perSecond` requests per second with bursts of `burst`. Resolves with
   * 0 when taken, or with the milliseconds until a request would be (nothing is written then).
   */
  async take(clientId: string, perSecond: number, burst: number): Promise<number> {
    const key = this.keys.clientRate(this.keys.shardOf(clientId), clientId);
    return await RATE_LIMIT.run(this.redis, { bucket: key }, { perSecond, burst, cost: 1 });
  }
}
