// An actor tells its supervisor "busy" before any handler code runs and "idle" once no handler has run for a while.
import { expect, test } from "bun:test";
import type { ActorMessage } from "../../../src/actors/actor-message.ts";
import { HandlerActivity } from "../../../src/actors/handler-activity.ts";
import { defineHandler, type HandlerContext, HandlerRegistry } from "../../../src/actors/handlers/handler-api.ts";

/** A pipe whose writes complete when the test says so; `sent()` resolves at the next send. */
class SlowPipe {
  readonly written: string[] = [];
  private pending: (() => void)[] = [];
  private waiting: (() => void)[] = [];

  send(message: ActorMessage): Promise<void> {
    for (const wake of this.waiting.splice(0)) wake();
    return new Promise((resolve) => {
      this.pending.push(() => {
        this.written.push(message.kind);
        resolve();
      });
    });
  }

  sent(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  flush(): void {
    for (const write of this.pending.splice(0)) write();
  }
}

const ctx = {} as HandlerContext;

/** A registry with one handler that waits for the test to open its gate; `started` lists what was written then. */
function gated(pipe: SlowPipe) {
  const started: string[][] = [];
  const gates: (() => void)[] = [];
  const registry = new HandlerRegistry().register(
    defineHandler("slow", async () => {
      started.push([...pipe.written]);
      await new Promise<void>((resolve) => gates.push(resolve));
    }),
  );
  return { registry, started, open: (i: number) => gates[i]?.() };
}

test("a handler starts only once busy is written; idle follows when no handler ran for idleAfterMs", async () => {
  const pipe = new SlowPipe();
  const { registry, started, open } = gated(pipe);
  const handler = new HandlerActivity(pipe, 0).wrap(registry).get("slow");
  if (!handler) throw new Error("slow is not in the wrapped registry");

  const first = handler(ctx);
  const second = handler(ctx);
  await Bun.sleep(0);
  expect(started).toEqual([]); // busy not written yet: no handler code has run
  pipe.flush();
  await Bun.sleep(0);
  expect(started).toEqual([["busy"], ["busy"]]);

  open(0);
  await first;
  open(1);
  const idle = pipe.sent();
  await second;
  await idle;
  pipe.flush();
  expect(pipe.written).toEqual(["busy", "idle"]);
});

test("runs that follow each other within idleAfterMs send nothing more than the first busy", async () => {
  const pipe = new SlowPipe();
  const { registry, started, open } = gated(pipe);
  const handler = new HandlerActivity(pipe, 60_000).wrap(registry).get("slow");
  if (!handler) throw new Error("slow is not in the wrapped registry");
  const first = handler(ctx);
  await Bun.sleep(0);
  pipe.flush();
  await Bun.sleep(0);
  open(0);
  await first;
  const second = handler(ctx); // still busy as far as the supervisor knows: starts without a write
  await Bun.sleep(0);
  expect(started).toEqual([["busy"], ["busy"]]);
  open(1);
  await second;
  expect(pipe.written).toEqual(["busy"]);
});

test("a handler that throws still ends its part of the activity, and its error reaches the caller", async () => {
  const written: string[] = [];
  let idle: () => void = () => {};
  const idleSent = new Promise<void>((resolve) => {
    idle = resolve;
  });
  const pipe = {
    send: async (message: ActorMessage) => {
      written.push(message.kind);
      if (message.kind === "idle") idle();
    },
  };
  const registry = new HandlerRegistry().register(
    defineHandler("broken", async () => {
      throw new Error("broken handler");
    }),
  );
  const handler = new HandlerActivity(pipe, 0).wrap(registry).get("broken");
  await expect(handler?.(ctx) ?? Promise.resolve()).rejects.toThrow("broken handler");
  await idleSent;
  expect(written).toEqual(["busy", "idle"]);
});

test("every handler of the registry is wrapped under its own name", () => {
  const registry = new HandlerRegistry()
    .register(defineHandler("a", async () => {}))
    .register(defineHandler("b", async () => {}));
  expect(new HandlerActivity({ send: async () => {} }).wrap(registry).names()).toEqual(["a", "b"]);
});
