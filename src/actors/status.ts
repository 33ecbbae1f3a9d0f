// What an operator asks first: the installation status (read in the journal, shared with the gateway's /metrics),
// and the `status` command's exit rule.
import type { StatusReport } from "../journal/index.ts";

export { readStatus, type StatusReport, type WorkerStatus } from "../journal/index.ts";

/** Live workers (consumers and sweep ticks) in a report. */
export function liveWorkers(report: StatusReport): number {
  return report.liveConsumers + report.liveSweeps;
}

/** The `status` command's exit code: 0, or 2 when fewer than `minimumWorkers` workers are live. */
export function statusExitCode(report: StatusReport, minimumWorkers: number): number {
  return liveWorkers(report) >= minimumWorkers ? 0 : 2;
}
