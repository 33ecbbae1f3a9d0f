// The profiles: `bun --cpu-prof` on the gateway under the accept load, and on the gateway and actors under the
// blocking load (BUN_OPTIONS reaches the actors through the supervisor); rendered as tables of where the time goes,
// followed by the analysis kept in docs/benchmarks.md.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acceptLoad } from "./accept-scenario.ts";
import { blockingLoad, blockingSetup } from "./blocking-scenario.ts";
import { type Contender, gatewayContender } from "./contenders.ts";
import type { BenchContext } from "./context.ts";
import { type ProfileSummary, summarizeProfile } from "./profile.ts";

const DOCS = new URL("../../docs/benchmarks.md", import.meta.url);

function table(title: string, summary: ProfileSummary, mainThreadCpuSeconds: number | undefined): string {
  const share = (value: number) => `${((100 * value) / summary.busyMs).toFixed(1)}%`;
  const ms = (value: number) => Math.round(value).toLocaleString("en-US");
  const cpu =
    mainThreadCpuSeconds === undefined || Number.isNaN(mainThreadCpuSeconds)
      ? ""
      : ` The thread's CPU time over the process's life was ${ms(mainThreadCpuSeconds * 1000)} ms: sampled time misses the thread's work outside JavaScript (the event loop, the HTTP parser) and counts time it waits for a core, so the shares are of sampled time, and a frame that wakes another process (a socket write) collects more than its CPU.`;
  return [
    `#### ${title}`,
    "",
    `${ms(summary.busyMs)} ms of sampled JS-thread time (idle excluded). Native work is charged to the area of its nearest JS caller.${cpu}`,
    "",
    "| area | share |",
    "|---|--:|",
    ...summary.areas.slice(0, 8).map(([area, value]) => `| ${area} | ${share(value)} |`),
    "",
    "| function (self time) | share |",
    "|---|--:|",
    ...summary.functions
      .slice(0, 12)
      .map(([name, value]) => `| \`${name.replaceAll("|", "\\|")}\` | ${share(value)} |`),
    "",
  ].join("\n");
}

/** The profile written by the process `pid` in `dir`, if any. */
function profileOf(dir: string, pid: number): string | undefined {
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile") && name.includes(`.${pid}.`));
  return file === undefined ? undefined : join(dir, file);
}

async function profiled(contender: (dir: string) => Contender, load: Parameters<Contender["run"]>[0]) {
  const dir = mkdtempSync(join(tmpdir(), "a2a-prof-"));
  const measured = await contender(dir).run(load);
  return { dir, measured };
}

/** The analysis section of docs/benchmarks.md (its "Profile findings" heading to the next heading of that level). */
export function profileAnalysis(): string {
  try {
    const text = readFileSync(DOCS, "utf8");
    const match = /^## Profile findings\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(text);
    return match?.[1]?.trim() ?? "";
  } catch {
    return "";
  }
}

export async function profileScenario(context: BenchContext): Promise<string> {
  const out: string[] = ["### Where the time goes (this run's profiles)", ""];
  context.log("profile: gateway under the accept load");
  const accept = await profiled(
    (dir) =>
      gatewayContender(context, "gateway", {
        profile: "noop",
        actors: 0,
        bunArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
      }),
    { ...acceptLoad(context), maxRequests: 30_000, maxSeconds: 10 },
  );
  const acceptFile = profileOf(accept.dir, accept.measured.pids[0] ?? 0);
  if (acceptFile) {
    const summary = summarizeProfile(acceptFile, 20);
    out.push(table("Gateway, accept load (64 clients, returnImmediately)", summary, accept.measured.mainThreadCpu[0]));
  }
  rmSync(accept.dir, { recursive: true, force: true });

  context.log("profile: gateway and actor under the blocking load");
  const dir = mkdtempSync(join(tmpdir(), "a2a-prof-"));
  const setup = blockingSetup();
  const blocking = await gatewayContender(context, "gateway", {
    ...setup,
    env: { ...setup.env, BUN_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` },
  }).run({ ...blockingLoad(context), maxRequests: 10_000, maxSeconds: 10 });
  const [gatewayPid = 0, , ...actorPids] = blocking.pids;
  const threadCpu = (pid: number) => blocking.mainThreadCpu[blocking.pids.indexOf(pid)];
  const gatewayFile = profileOf(dir, gatewayPid);
  if (gatewayFile) {
    const summary = summarizeProfile(gatewayFile, 20);
    out.push(table("Gateway, blocking load (32 clients, echo)", summary, threadCpu(gatewayPid)));
  }
  for (const pid of actorPids) {
    const file = profileOf(dir, pid);
    if (file) out.push(table(`Actor (pid ${pid}), blocking load`, summarizeProfile(file, 20), threadCpu(pid)));
  }
  rmSync(dir, { recursive: true, force: true });
  out.push("### Analysis", "", profileAnalysis());
  return out.join("\n");
}
