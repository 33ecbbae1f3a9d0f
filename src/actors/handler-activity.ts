// Tells the supervisor whether a handler is running in this actor ("busy" / "idle" on its pipe), so that it can tell an
// actor killed by a run (restarted, not counted toward the restart intensity) from one that cannot work.
import type { ActorMessage } from "./actor-message.ts";
import { type Handler, HandlerRegistry } from "./handlers/handler-api.ts";

/** Where the messages go: the actor's pipe (ActorPipe). */
export interface ActivityPipe {
  /** Resolves once the message is written (or dropped because the supervisor is gone). */
  send(message: ActorMessage): Promise<void>;
}

/**
 * How long the actor stays busy after its last handler ended (ms): a busy actor whose runs follow each other sends
 * nothing at all, and an exit that soon after a run (a timer the handler left behind) is still the run's.
 */
export const IDLE_AFTER_MS = 1000;

export class HandlerActivity {
  private running = 0;
  /** Whether the supervisor was told "busy" last. */
  private busy = false;
  /** The latest busy/idle message sent: a handler starts only once the busy one is written. */
  private told: Promise<void> = Promise.resolve();
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly pipe: ActivityPipe,
    private readonly idleAfterMs = IDLE_AFTER_MS,
  ) {}

  /**
   * The registry's handlers, each one reporting itself: the actor is busy from before the handler's first line runs
   * until idleAfterMs after it settles (a handler that never settles keeps it busy, which errs on the side of not
   * counting its exit).
   */
  wrap(registry: HandlerRegistry): HandlerRegistry {
    const wrapped = new HandlerRegistry();
    for (const name of registry.names()) {
      const handler = registry.get(name);
      if (handler) wrapped.register(name, this.reporting(handler));
    }
    return wrapped;
  }

  private reporting(handler: Handler): Handler {
    return async (ctx) => {
      await this.enter();
      try {
        return await handler(ctx);
      } finally {
        this.leave();
      }
    };
  }

  private async enter(): Promise<void> {
    this.running += 1;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (!this.busy) {
      this.busy = true;
      this.told = this.pipe.send({ kind: "busy" });
    }
    await this.told;
  }

  private leave(): void {
    this.running -= 1;
    if (this.running > 0) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      this.busy = false;
      this.told = this.pipe.send({ kind: "idle" });
    }, this.idleAfterMs);
    // An actor with nothing else to do may exit meanwhile: the supervisor then counts its exit as the run's.
    this.idleTimer.unref?.();
  }
}
