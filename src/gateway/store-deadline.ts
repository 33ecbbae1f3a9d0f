// A request's bound on waiting for Redis. A Redis that is paused (CLIENT PAUSE) or stalled keeps its connection open,
// so commands neither fail nor answer: past the bound the request answers 503 STORE_TIMEOUT, and the request's signal
// aborts so that work still queued behind the stall stops before its next write.
import { StoreTimeoutError } from "../protocol/index.ts";

export class StoreDeadline {
  /** The request's signal (the client went away) joined with this deadline's. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly expired: Promise<never>;
  private expire: (error: StoreTimeoutError) => void = () => {};
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(requestSignal: AbortSignal) {
    this.signal = AbortSignal.any([requestSignal, this.controller.signal]);
    this.expired = new Promise<never>((_, reject) => {
      this.expire = reject;
    });
    this.expired.catch(() => {}); // seen through bound(); a deadline nobody awaits is not an unhandled rejection
  }

  /**
   * (Re)arms the deadline `ms` after `from` (performance.now() time; default now). `seconds` is the bound the answer
   * names.
   */
  arm(ms: number, seconds: number, from = performance.now()): void {
    clearTimeout(this.timer);
    const left = Math.max(0, ms - (performance.now() - from));
    this.timer = setTimeout(() => {
      const error = new StoreTimeoutError(seconds);
      this.controller.abort(error);
      this.expire(error);
    }, left);
  }

  /** Settles as `work` does, or rejects with StoreTimeoutError when the deadline passes first. */
  bound<T>(work: Promise<T>): Promise<T> {
    return Promise.race([work, this.expired]);
  }

  /** Disarms the deadline: the answer is out (a stream must not be ended by it later). */
  clear(): void {
    clearTimeout(this.timer);
  }
}
