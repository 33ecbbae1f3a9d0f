// A handler module that misbehaves on purpose, for the time-limit and watchdog tests (`work --handlers <this file>`).
// The latest message picks the fault: [throw], [hang] (never settles and ignores its signal, unlike faults' [hang]),
// [spin] (a synchronous endless loop) or [hog] (allocates ~20 MB every ~20 ms); any other text is run by echo.
import { echoHandler } from "../../../src/actors/handlers/echo.ts";
import { defineHandler, textOf } from "../../../src/actors/handlers/handler-api.ts";

const MIB = 1024 * 1024;
/** Where a hog stops allocating: far above any limit a test sets, and bounded so a missed kill cannot exhaust the host. */
const HOG_CAP_BYTES = 600 * MIB;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const faulty = defineHandler("faulty", async (ctx) => {
  const text = textOf(ctx.input);
  if (text.startsWith("[throw]")) throw new Error("a bug in the handler");
  if (text.startsWith("[hang]")) return await new Promise<never>(() => {});
  if (text.startsWith("[spin]")) for (;;) Math.random(); // never yields: nothing else runs in this actor
  if (text.startsWith("[hog]")) {
    const held: Buffer[] = [];
    for (;;) {
      // Filled, so that every page is touched and counts in the resident set.
      if (held.length * 20 * MIB < HOG_CAP_BYTES) held.push(Buffer.alloc(20 * MIB, 1));
      await pause(20);
    }
  }
  return await echoHandler.run(ctx);
});
