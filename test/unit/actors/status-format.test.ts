// The readable status table and the exit-code rule.
import { expect, test } from "bun:test";
import { type StatusReport, statusExitCode } from "../../../src/actors/status.ts";
import { formatStatus } from "../../../src/actors/status-format.ts";

const base: StatusReport = {
  at: "2026-01-01T00:00:00.000Z",
  livenessSeconds: 120,
  workers: [],
  liveConsumers: 0,
  liveSweeps: 0,
  queueDepth: 3,
  oldestQueuedAgeSeconds: 250,
  running: 2,
  expiredLeases: 1,
  deferredRuns: 6,
  deferredClients: 1,
  interruptedTasks: 8,
  deletionsDue: 0,
  deadLetters: 4,
  pushPending: 7,
  pushPendingTasks: 2,
  pushDeadLetters: 5,
};

test("a table of workers, queue figures and the verdict", () => {
  const report: StatusReport = {
    ...base,
    workers: [
      {
        id: "h-2",
        mode: "sweep",
        pid: 2,
        host: "h",
        version: "0.1.0",
        started: "",
        ageSeconds: 200,
        live: false,
        inflight: 0,
        done: 9,
      },
      {
        id: "h-1",
        mode: "consume",
        pid: 1,
        host: "h",
        version: "0.1.0",
        started: "",
        ageSeconds: 1.4,
        live: true,
        inflight: 2,
        done: 40,
      },
    ],
    liveConsumers: 1,
  };
  expect(formatStatus(report, 1)).toBe(
    [
      "WORKER  MODE     PID  HOST  LAST BEAT  LIVE  IN FLIGHT  DONE  VERSION",
      "h-1     consume  1    h     1s ago     yes   2          40    0.1.0",
      "h-2     sweep    2    h     3m ago     no    0          9     0.1.0",
      "",
      "queued             3",
      "oldest queued      4m",
      "running            2",
      "expired leases     1",
      "deferred runs      6 (1 clients)",
      "interrupted tasks  8",
      "deletions due      0",
      "dead letters       4",
      "push pending       7 (2 tasks)",
      "push dead letters  5",
      "",
      "live workers: 1 (1 consumers, 0 sweeps; liveness 120s) - minimum 1: OK",
    ].join("\n"),
  );
  expect(statusExitCode(report, 1)).toBe(0);
  expect(statusExitCode(report, 2)).toBe(2);
});

test("no workers: says so, and only --minimum-workers 0 passes", () => {
  const text = formatStatus({ ...base, oldestQueuedAgeSeconds: null }, 1);
  expect(text).toStartWith("workers: none has a heartbeat\n");
  expect(text).toContain("oldest queued      -");
  expect(text).toEndWith("minimum 1: BELOW MINIMUM");
  expect(statusExitCode(base, 1)).toBe(2);
  expect(statusExitCode(base, 0)).toBe(0);
});
