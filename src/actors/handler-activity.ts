// Tells the supervisor whether a handler is running in this actor ("busy" / "idle" on its pipe), so that it can tell an
// actor killed by a run (restarted, not counted toward the restart intensity) from one that cannot work.
import type { ActorMessage } from "./actor-message.ts";
import { type Handler, HandlerRegistry } from "./handlers/handler-api.ts";

/** Where the messages go: the actor's pipe (ActorPipe). */
export interface ActivityPipe {
  /** Resolves once the message is written (or dropped because the supervisor is gone). */
  send(message: ActorMessage): Promise<void>;
}

export class HandlerActivity {
  private running = 0;
  /** The latest busy/idle message sent: a handler starts only once the busy one is written. */
  private told: Promise<void> = Promise.resolve();

  constructor(private readonly pipe: ActivityPipe) {}

  /**
   * The registry's handlers, each one reporting itself: the actor is busy from before the handler's first line runs
   * until it settles (a handler that never settles keeps it busy, which errs on the side of not counting its exit).
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
    if (this.running === 1) this.told = this.pipe.send({ kind: "busy" });
    await this.told;
  }

  private leave(): void {
    this.running -= 1;
    if (this.running === 0) this.told = this.pipe.send({ kind: "idle" });
  }
}
