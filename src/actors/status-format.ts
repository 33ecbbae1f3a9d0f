// Renders a status report as the readable table `a2a-runtime status` prints (the JSON form is the report itself).
import { liveWorkers, type StatusReport } from "./status.ts";

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

function age(seconds: number | null): string {
  if (seconds === null) return "-";
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h`;
}

/** The report as text: workers (newest beat first), then queue figures, then the verdict against the minimum. */
export function formatStatus(report: StatusReport, minimumWorkers: number): string {
  const lines: string[] = [];
  const workers = [...report.workers].sort((a, b) => a.ageSeconds - b.ageSeconds);
  if (workers.length === 0) lines.push("workers: none has a heartbeat");
  else {
    const rows = [["WORKER", "MODE", "PID", "HOST", "LAST BEAT", "LIVE", "IN FLIGHT", "DONE", "VERSION"]];
    for (const w of workers) {
      rows.push([
        w.id,
        w.mode,
        String(w.pid),
        w.host,
        `${age(Math.round(w.ageSeconds))} ago`,
        w.live ? "yes" : "no",
        String(w.inflight),
        String(w.done),
        w.version,
      ]);
    }
    lines.push(...table(rows));
  }
  lines.push("");
  lines.push(
    ...table([
      ["queued", String(report.queueDepth)],
      ["oldest queued", age(report.oldestQueuedAgeSeconds)],
      ["running", String(report.running)],
      ["expired leases", String(report.expiredLeases)],
      ["deferred runs", `${report.deferredRuns} (${report.deferredClients} clients)`],
      ["interrupted tasks", String(report.interruptedTasks)],
      ["deletions due", String(report.deletionsDue)],
      ["dead letters", String(report.deadLetters)],
      ["push pending", `${report.pushPending} (${report.pushPendingTasks} tasks)`],
      ["push dead letters", String(report.pushDeadLetters)],
    ]),
  );
  lines.push("");
  const live = liveWorkers(report);
  const verdict = live >= minimumWorkers ? "OK" : "BELOW MINIMUM";
  lines.push(
    `live workers: ${live} (${report.liveConsumers} consumers, ${report.liveSweeps} sweeps; ` +
      `liveness ${report.livenessSeconds}s) - minimum ${minimumWorkers}: ${verdict}`,
  );
  return lines.join("\n");
}
