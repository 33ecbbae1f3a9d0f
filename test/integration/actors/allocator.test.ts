// a2a-runtime's processes keep freed memory (src/allocator.ts): bin/a2a-runtime starts every command with mimalloc's
// purge delay off unless the environment sets it, and the supervisor starts its actors so however it was started.
// Read from /proc: the environment each process was started with.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { PURGE_DELAY_DEFAULT, PURGE_DELAY_VARIABLE } from "../../../src/allocator.ts";
import { type Installation, installationSuite, liveWorkers, startCli } from "./harness.ts";

const LAUNCHER = new URL("../../../bin/a2a-runtime", import.meta.url).pathname;

const newInstallation = installationSuite();

async function fresh(): Promise<Installation> {
  const inst = await newInstallation();
  // whatever the test runner's environment says, these processes start without the variable unless a test sets it
  delete inst.env[PURGE_DELAY_VARIABLE];
  return inst;
}

/** The purge delay process `pid` was started with (undefined when its environment had none). */
function purgeDelayOf(pid: number): string | undefined {
  const entry = readFileSync(`/proc/${pid}/environ`, "utf8")
    .split("\0")
    .find((item) => item.startsWith(`${PURGE_DELAY_VARIABLE}=`));
  return entry?.slice(PURGE_DELAY_VARIABLE.length + 1);
}

async function actorPid(inst: Installation): Promise<number> {
  const [actor] = (await liveWorkers(inst, 1)).filter((worker) => worker.mode === "consume");
  if (!actor) throw new Error("no live actor");
  return actor.pid;
}

test("bin/a2a-runtime starts the command and its actors with the purge delay off", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"], {}, [LAUNCHER]);
  const actor = await actorPid(inst);
  // the launcher execs Bun: the pid it was started as is the supervisor's
  expect(purgeDelayOf(work.pid)).toBe(PURGE_DELAY_DEFAULT);
  expect(purgeDelayOf(actor)).toBe(PURGE_DELAY_DEFAULT);
});

test("an operator's own purge delay is kept, by the launcher and by the supervisor", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"], { [PURGE_DELAY_VARIABLE]: "250" }, [LAUNCHER]);
  const actor = await actorPid(inst);
  expect(purgeDelayOf(work.pid)).toBe("250");
  expect(purgeDelayOf(actor)).toBe("250");
});

test("a supervisor started without the launcher still starts its actors with the purge delay off", async () => {
  const inst = await fresh();
  const work = startCli(inst, ["work", "--actors", "1"]);
  const actor = await actorPid(inst);
  expect(purgeDelayOf(work.pid)).toBeUndefined();
  expect(purgeDelayOf(actor)).toBe(PURGE_DELAY_DEFAULT);
});
