// An actor tells its supervisor "busy" before any handler code runs and "idle" once the last running handler settled.
import { expect, test } from "bun:test";
import type { ActorMessage } from "../../../src/actors/actor-message.ts";
import { HandlerActivity } from "../../../src/actors/handler-activity.ts";
import { defineHandler, type HandlerContext, HandlerRegistry } from "../../../src/actors/handlers/handler-api.ts";

/** A pipe whose writes complete when the test says so. */
class SlowPipe {
  readonly written: string[] = [];
  private pending: (() => void)[] = [];

  send(message: ActorMessage): Promise<void> {
    return new Promise((resolve) => {
      this.pending.push(() => {
        this.written.push(message.kind);
        resolve();
      });
    });
  }

  flush(): void {
    for (const write of this.pending.splice(0)) write();
  }
}

const ctx = {} as HandlerContext;

test("a handler starts only once busy is written; idle follows when the last running handler settles", async () => {
  const pipe = new SlowPipe();
  const seen: string[][] = [];
  const gates: (() => void)[] = [];
  const registry = new HandlerRegistry().register(
    defineHandler("slow", async () => {
      seen.push([...pipe.written]);
      await new Promise<void>((resolve) => gates.push(resolve));
    }),
  );
  const wrapped = new HandlerActivity(pipe).wrap(registry);
  const handler = wrapped.get("slow");
  if (!handler) throw new Error("slow is not in the wrapped registry");

  const first = handler(ctx);
  const second = handler(ctx);
  await Bun.sleep(0);
  expect(seen).toEqual([]); // busy not written yet: no handler code has run
  pipe.flush();
  await Bun.sleep(0);
  expect(seen).toEqual([["busy"], ["busy"]]);

  gates[0]?.();
  await first;
  pipe.flush();
  expect(pipe.written).toEqual(["busy"]); // one handler still runs
  gates[1]?.();
  await second;
  pipe.flush();
  expect(pipe.written).toEqual(["busy", "idle"]);
});

test("a handler that throws still ends its part of the activity, and its error reaches the caller", async () => {
  const pipe = { written: [] as string[], send: async (m: ActorMessage) => void pipe.written.push(m.kind) };
  const registry = new HandlerRegistry().register(
    defineHandler("broken", async () => {
      throw new Error("broken handler");
    }),
  );
  const handler = new HandlerActivity(pipe).wrap(registry).get("broken");
  await expect(handler?.(ctx) ?? Promise.resolve()).rejects.toThrow("broken handler");
  expect(pipe.written).toEqual(["busy", "idle"]);
});

test("every handler of the registry is wrapped under its own name", () => {
  const registry = new HandlerRegistry()
    .register(defineHandler("a", async () => {}))
    .register(defineHandler("b", async () => {}));
  expect(new HandlerActivity({ send: async () => {} }).wrap(registry).names()).toEqual(["a", "b"]);
});
