// The supervisor's watchdog decisions: silence past the stall limit (longer until the actor is ready) and RSS above
// the limit condemn an actor, once each; RSS read from outside the process wins over the figure the actor reported.
import { expect, test } from "bun:test";
import { ActorWatchdog, procRss, STARTUP_SILENCE_MS } from "../../../src/actors/watchdog.ts";

const MIB = 1024 * 1024;
const ping = (rssBytes: number) => ({ kind: "alive" as const, rssBytes });
const READY = { kind: "ready" as const };

test("a ready actor silent for stallMs is stalled; any message resets its silence", () => {
  const dog = new ActorWatchdog({ stallMs: 3000, maxRssBytes: 0, readRss: () => undefined });
  dog.watch(0, 100, 0);
  dog.watch(1, 101, 0);
  dog.seen(0, 0, READY);
  dog.seen(1, 0, READY);
  expect(dog.check(2999)).toEqual([]);
  dog.seen(1, 2500, { kind: "metrics", metrics: [] });
  expect(dog.check(3000)).toEqual([{ slot: 0, pid: 100, reason: "stalled", silentMs: 3000, rssBytes: undefined }]);
  // condemned once: the next checks name it no more, while the other actor is still judged on its own silence
  expect(dog.check(4000)).toEqual([]);
  expect(dog.check(5500).map((v) => [v.slot, v.reason])).toEqual([[1, "stalled"]]);
});

test("until it is ready, an actor loading its code may be silent for STARTUP_SILENCE_MS", () => {
  const dog = new ActorWatchdog({ stallMs: 2000, maxRssBytes: 0, readRss: () => undefined });
  dog.watch(0, 100, 0);
  dog.seen(0, 100, ping(50 * MIB));
  expect(dog.check(100 + STARTUP_SILENCE_MS - 1)).toEqual([]);
  expect(dog.check(100 + STARTUP_SILENCE_MS).map((v) => v.reason)).toEqual(["stalled"]);
  // a stall limit above the startup allowance applies from the start
  const slow = new ActorWatchdog({ stallMs: STARTUP_SILENCE_MS * 2, maxRssBytes: 0, readRss: () => undefined });
  slow.watch(0, 100, 0);
  expect(slow.check(STARTUP_SILENCE_MS * 2 - 1)).toEqual([]);
});

test("an actor above maxRssBytes is killed for memory; the figure from outside wins over the reported one", () => {
  const outside = new Map<number, number>([[200, 300 * MIB]]);
  const dog = new ActorWatchdog({ stallMs: 30_000, maxRssBytes: 256 * MIB, readRss: (pid) => outside.get(pid) });
  dog.watch(0, 200, 0);
  dog.seen(0, 100, ping(10 * MIB)); // the actor says 10 MiB; /proc says 300
  dog.watch(1, 201, 0);
  dog.seen(1, 100, ping(100 * MIB));
  expect(dog.check(1000)).toEqual([{ slot: 0, pid: 200, reason: "memory", silentMs: 900, rssBytes: 300 * MIB }]);
  // where RSS cannot be read from outside, the actor's own figure is used
  dog.seen(1, 1500, ping(257 * MIB));
  expect(dog.check(2000).map((v) => [v.slot, v.reason, v.rssBytes])).toEqual([[1, "memory", 257 * MIB]]);
});

test("maxRssBytes 0 means no memory limit; a forgotten slot is not judged; a new actor in a slot starts afresh", () => {
  const dog = new ActorWatchdog({ stallMs: 1000, maxRssBytes: 0, readRss: () => 10_000 * MIB });
  dog.watch(0, 300, 0);
  dog.seen(0, 0, READY);
  expect(dog.check(500)).toEqual([]);
  dog.forget(0);
  expect(dog.check(5000)).toEqual([]);
  dog.watch(0, 301, 5000);
  dog.seen(0, 5000, READY);
  expect(dog.check(5999)).toEqual([]);
  expect(dog.check(6000).map((v) => v.pid)).toEqual([301]);
});

test("procRss reads this process's resident memory on Linux", () => {
  const rss = procRss(process.pid);
  if (process.platform !== "linux") return expect(rss).toBeUndefined();
  const own = process.memoryUsage.rss();
  expect(rss).toBeGreaterThan(own / 2);
  expect(rss).toBeLessThan(own * 2);
  expect(procRss(2 ** 22 + 17)).toBeUndefined(); // above the kernel's largest pid: no such process
});
