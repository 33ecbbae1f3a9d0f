// Listens on the cancel channel (pub/sub) so that a cancel reaches a running handler within a second; the run id
// published there is handed to the executor, which aborts the run if it holds it.
import { type RedisLike, subscribeWhenReady } from "../journal/index.ts";
import type { Logger } from "../log.ts";

export class CancelListener {
  private subscriber: RedisLike | undefined;

  constructor(
    private readonly connect: () => RedisLike,
    private readonly channel: string,
    private readonly onCancel: (runId: string) => void,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const subscriber = this.connect();
    this.subscriber = subscriber;
    subscriber.on("message", (channel: string, runId: string) => {
      if (channel === this.channel) this.onCancel(runId);
    });
    await subscribeWhenReady(subscriber, this.channel);
    this.logger.debug({ channel: this.channel }, "listening for cancel requests");
  }

  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
