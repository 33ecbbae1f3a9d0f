// What the outbox records after one webhook attempt: maps deliverOnce's outcome to a Settlement, applying the
// attempt limit and the retry schedule. No I/O of its own: the caller passes the clock (Redis time) and the backoff.
import type { Settlement } from "../journal/index.ts";
import type { DeliveryOutcome } from "./deliver.ts";
import { type BackoffOptions, nextDelayMs } from "./retry-policy.ts";

export interface SettlementRules {
  /** Attempts of one notification before it is dead-lettered (push.maxAttempts). */
  maxAttempts: number;
  backoff: BackoffOptions;
}

/**
 * The settlement of attempt number `attempt` (1 = the first) that ended with `outcome`. A retry past the last
 * attempt is dead-lettered as `gave up after <n> attempts: <reason>`; otherwise it is due again at
 * `now() + nextDelayMs(attempt, retryAfterMs)`, where `now` is the clock the outbox schedules in (ms, Redis time).
 */
export async function settlementFor(
  outcome: DeliveryOutcome,
  attempt: number,
  rules: SettlementRules,
  now: () => Promise<number>,
): Promise<Settlement> {
  switch (outcome.kind) {
    case "delivered":
      return { outcome: "done" };
    case "disable":
      return { outcome: "disable", reason: outcome.reason };
    case "give-up":
    case "refused":
      return { outcome: "dead", reason: outcome.reason };
    case "retry": {
      if (attempt >= rules.maxAttempts) {
        return { outcome: "dead", reason: `gave up after ${attempt} attempts: ${outcome.reason}` };
      }
      const delayMs = nextDelayMs(attempt, outcome.retryAfterMs, rules.backoff);
      return { outcome: "retry", atMs: (await now()) + delayMs };
    }
  }
}
