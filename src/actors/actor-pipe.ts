// The actor's end of the pipe to its supervisor (fd 3, never mixed with the logs on stdout and stderr): whole JSON
// lines in call order (see actor-message.ts), among them a liveness ping about once a second.
import { write } from "node:fs";
import type { ActorMessage } from "./actor-message.ts";

/** The environment variable that tells a supervised actor which file descriptor is its pipe. */
export const ACTOR_PIPE_FD_ENV = "A2A_ACTOR_PIPE_FD";
/** The supervisor's spawn stdio slot for the pipe. */
export const ACTOR_PIPE_FD = 3;
/** How often an actor pings, in ms. */
export const PING_INTERVAL_MS = 1000;

/** Writes whole lines in call order; once a write fails (the supervisor is gone) it writes no more. */
export class ActorPipe {
  private chain = Promise.resolve();
  private broken = false;

  constructor(private readonly fd: number) {}

  /** Queues one message (or a function that makes it when its turn comes); resolves once written or dropped. */
  send(message: ActorMessage | (() => Promise<ActorMessage>)): Promise<void> {
    this.chain = this.chain.then(async () => {
      if (this.broken) return;
      const line = Buffer.from(`${JSON.stringify(typeof message === "function" ? await message() : message)}\n`);
      let offset = 0;
      while (offset < line.length && !this.broken) {
        offset += await new Promise<number>((resolve) =>
          write(this.fd, line, offset, line.length - offset, null, (error, written) => {
            if (error) this.broken = true; // the supervisor is gone: stdin closes too, and the actor exits
            resolve(written ?? 0);
          }),
        );
      }
    });
    return this.chain;
  }

  /**
   * Pings now and every PING_INTERVAL_MS with the actor's RSS, from its event loop: an actor whose loop is stuck falls
   * silent. Returns the function that stops it.
   */
  ping(): () => void {
    const beat = () => void this.send({ kind: "alive", rssBytes: process.memoryUsage.rss() });
    beat();
    const timer = setInterval(beat, PING_INTERVAL_MS);
    return () => clearInterval(timer);
  }
}

/** The pipe a supervised actor was given (from its environment), or undefined when it runs unsupervised. */
export function actorPipeFrom(env: Readonly<Record<string, string | undefined>>): ActorPipe | undefined {
  const fd = Number(env[ACTOR_PIPE_FD_ENV] ?? "");
  return env.A2A_ACTOR_SUPERVISED === "1" && Number.isInteger(fd) && fd >= 3 ? new ActorPipe(fd) : undefined;
}
