// Closes a revoked client's open streams at once: `clients revoke` (and `clients rotate` without a grace period, whose
// replaced key may have opened them) publishes the client id, and this listener, on the gateway's existing subscriber
// connection, cuts that client's streams and forgets its cached lookups. After a reconnect (a notice may have been
// missed) and every few seconds as a safety net, it checks every client with a stream for a revoked record.
import { type ClientRegistry, type KeySpace, type RedisLike, subscribeWhenReady } from "../journal/index.ts";
import type { Logger } from "../log.ts";
import type { Authenticator } from "./authenticator.ts";
import type { StreamHub } from "./stream-hub.ts";

export interface RevocationsOptions {
  /** The gateway's subscriber connection (shared with the journal tail). */
  subscriber: RedisLike;
  registry: Pick<ClientRegistry, "revokedAmong">;
  keys: KeySpace;
  streams: StreamHub;
  auth: Pick<Authenticator, "forgetClient">;
  logger: Logger;
  /** How often every streaming client is checked, in case a notice was lost (ms). */
  checkIntervalMs?: number;
}

export class Revocations {
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: RevocationsOptions) {}

  /** Subscribes to the revocation channel; resolves once the subscription is in place. */
  async start(): Promise<void> {
    const { subscriber, keys } = this.options;
    const channel = keys.revokedChannel();
    subscriber.on("message", (from: string, clientId: string) => {
      if (from === channel) this.revoked(clientId);
    });
    let ready = false;
    subscriber.on("ready", () => {
      if (ready) this.checkAll();
      ready = true;
    });
    await subscribeWhenReady(subscriber, channel);
    ready = true;
    this.timer = setInterval(() => this.checkAll(), this.options.checkIntervalMs ?? 10_000);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private revoked(clientId: string): void {
    this.options.auth.forgetClient(clientId);
    const ended = this.options.streams.endClient(clientId);
    if (ended > 0) {
      this.options.logger.info({ clientId, streams: ended }, "a client's key was revoked: its streams were closed");
    }
  }

  private checkAll(): void {
    const clients = this.options.streams.clients();
    if (clients.length === 0) return;
    this.options.registry
      .revokedAmong(clients)
      .then((revoked) => {
        for (const clientId of revoked) this.revoked(clientId);
      })
      .catch((error: unknown) => this.options.logger.warn({ err: error }, "revocation check failed"));
  }
}
