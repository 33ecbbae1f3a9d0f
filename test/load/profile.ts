// Reads a V8/JSC .cpuprofile (what `bun --cpu-prof` writes) into self time per function and per area (our src areas,
// each package in node_modules, native code), for the report's "Profile findings".
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Sampled busy time of the JS thread, ms (idle excluded): samples × the median sampling interval. */
  busyMs: number;
  /** [function at file:line, self ms] by self time, descending. */
  functions: [string, number][];
  /** [area, self ms] by self time, descending; native work counts for the area of its nearest JS caller. */
  areas: [string, number][];
}

const IDLE = new Set(["(idle)", "(program)"]);

/** "src/journal/scripts.ts", "ioredis", "native" or "(garbage collector)". */
export function areaOf(frame: CallFrame): string {
  const url = decodeURIComponent(frame.url.replace(/^file:\/\//, ""));
  if (url === "" || url === "[native code]") return frame.functionName.startsWith("(") ? frame.functionName : "native";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (pkg) return pkg[1] ?? url;
  const ours = /\/(src\/[^/]+)\//.exec(url);
  if (ours) return ours[1] ?? url;
  if (url.startsWith("node:") || url.startsWith("bun:") || url.startsWith("internal:"))
    return "runtime (node:/bun: modules)";
  return url.split("/").slice(-2).join("/");
}

function isNative(frame: CallFrame): boolean {
  return frame.url === "" || frame.url === "[native code]";
}

function label(frame: CallFrame): string {
  const url = decodeURIComponent(frame.url.replace(/^file:\/\//, ""));
  const name = frame.functionName || "(anonymous)";
  if (url === "" || url === "[native code]") return `${name} [native]`;
  const short = url.replace(/^.*?\/(node_modules\/|src\/)/, "$1");
  return `${name} ${short}:${frame.lineNumber + 1}`;
}

export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  /** The nearest frame at or above `id` that has a source location: native work is charged to its JS caller's area. */
  const callerOf = (id: number): CallFrame | undefined => {
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame && !isNative(frame)) return frame;
    }
    return undefined;
  };
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  // Samples are taken at a fixed interval while the thread runs; deltas also span idle gaps, so count samples instead.
  const deltas = [...profile.timeDeltas].sort((a, b) => a - b);
  const ms = (deltas[Math.floor(deltas.length / 2)] ?? 1000) / 1000;
  profile.samples.forEach((id) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame || IDLE.has(frame.functionName)) return;
    busy += ms;
    const caller = isNative(frame) ? callerOf(id) : frame;
    const key = isNative(frame) && caller ? `${label(frame)} ← ${label(caller)}` : label(frame);
    functions.set(key, (functions.get(key) ?? 0) + ms);
    const area = caller ? areaOf(caller) : areaOf(frame);
    areas.set(area, (areas.get(area) ?? 0) + ms);
  });
  const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  return { busyMs: busy, functions: sorted(functions).slice(0, top), areas: sorted(areas).slice(0, top) };
}
