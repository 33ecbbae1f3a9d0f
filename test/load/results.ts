// What a scenario hands to the report: measured rows (ours, the peer, the ceiling), targets with their verdicts,
// extra figures and notes. Plain data, so that the report is rendered in one place.
import type { Summary } from "./stats.ts";

export type RowRole = "ours" | "peer" | "ceiling" | "reference";

export interface Row {
  /** What was measured, e.g. "a2a-runtime gateway (Bun)". */
  system: string;
  role: RowRole;
  summary: Summary;
  /** Unit of the throughput column, e.g. "accepts/s". */
  unit: string;
  errors: number;
  /** The command that reproduces this line. */
  command: string;
  note?: string;
}

export interface Target {
  /** The target as the brief states it. */
  text: string;
  /** The measured value, e.g. "2.4× (5,100 vs 2,130 accepts/s)". */
  measured: string;
  /** undefined: not measured. */
  met: boolean | undefined;
  /** When missed: by how much, and the likely reason. */
  why?: string;
}

export interface Table {
  /** The column headings; a heading ending in " >" is right-aligned (numbers). */
  head: string[];
  rows: string[][];
}

export interface Section {
  id: string;
  title: string;
  /** How the scenario and its peer were set up (concurrency, configuration, warm-up, bounds). */
  setup: string[];
  rows: Row[];
  targets: Target[];
  /** Other figures as label → value. */
  figures: [string, string][];
  /** Tables of their own (a scenario's figures per size or per case), rendered after the rows. */
  tables?: Table[];
  notes: string[];
}

/** A section for a scenario that could not run (a feature missing, a failure); no figures are invented. */
export function notMeasured(id: string, title: string, reason: string, targets: string[]): Section {
  return {
    id,
    title,
    setup: [],
    rows: [],
    targets: targets.map((text) => ({ text, measured: `not measured: ${reason}`, met: undefined })),
    figures: [],
    notes: [`Not measured: ${reason}.`],
  };
}

export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return "–";
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

export function bytes(value: number): string {
  if (!Number.isFinite(value)) return "–";
  if (Math.abs(value) >= 1024 * 1024) return `${(value / 1024 / 1024).toFixed(1)} MiB`;
  if (Math.abs(value) >= 1024) return `${(value / 1024).toFixed(2)} KiB`;
  return `${Math.round(value)} B`;
}
