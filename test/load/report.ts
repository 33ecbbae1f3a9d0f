// Renders BENCHMARKS.md from the scenarios' sections: the machine, versions, a summary of every target, then each
// scenario with its setup, its rows side by side with the peers, its targets, figures and reproduce commands.
import { fmt, ms, type Section } from "./results.ts";
import type { Machine } from "./versions.ts";

export interface ReportInput {
  quick: boolean;
  startedAt: Date;
  seconds: number;
  machine: Machine;
  versions: [string, string][];
  sections: Section[];
  /** Markdown of the profile findings (already rendered). */
  profile: string;
  /** /proc/loadavg at the start and the end of the run: other work on the machine shows here. */
  loadAverage: { start: string; end: string };
}

const verdict = (met: boolean | undefined) => (met === undefined ? "not measured" : met ? "**met**" : "**not met**");
const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function sectionMarkdown(section: Section): string {
  const out: string[] = [`## ${section.title}`, ""];
  if (section.setup.length > 0) out.push("Setup:", "", ...section.setup.map((line) => `- ${line}`), "");
  if (section.rows.length > 0) {
    out.push(
      "| system | role | throughput | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | errors | note |",
      "|---|---|--:|--:|--:|--:|--:|--:|--:|---|",
    );
    for (const row of section.rows) {
      const s = row.summary;
      out.push(
        `| ${cell(row.system)} | ${row.role} | ${fmt(s.perSecond)} ${row.unit} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} | ${ms(s.p999)} | ${ms(s.max)} | ${row.errors} | ${cell(row.note ?? "")} |`,
      );
    }
    out.push("");
  }
  for (const table of section.tables ?? []) {
    const head = table.head.map((heading) => heading.replace(/ >$/, ""));
    const align = table.head.map((heading) => (heading.endsWith(" >") ? "--:" : "---"));
    out.push(`| ${head.map(cell).join(" | ")} |`, `|${align.join("|")}|`);
    for (const row of table.rows) out.push(`| ${row.map(cell).join(" | ")} |`);
    out.push("");
  }
  if (section.targets.length > 0) {
    out.push("| target (from the brief) | measured | verdict | by how much, and why |", "|---|---|---|---|");
    for (const target of section.targets) {
      out.push(
        `| ${cell(target.text)} | ${cell(target.measured)} | ${verdict(target.met)} | ${cell(target.why ?? "")} |`,
      );
    }
    out.push("");
  }
  if (section.figures.length > 0) {
    out.push(...section.figures.map(([label, value]) => `- ${label}: ${value}`), "");
  }
  if (section.notes.length > 0) out.push(...section.notes.map((note) => `> ${note}`), "");
  const commands = [...new Set(section.rows.map((row) => row.command))];
  if (commands.length > 0) {
    out.push("Reproduce each line:", "", "```sh", ...commands, "```", "");
  }
  return out.join("\n");
}

function summaryTable(sections: Section[]): string {
  const out = ["| scenario | target | measured | verdict |", "|---|---|---|---|"];
  for (const section of sections) {
    for (const target of section.targets) {
      out.push(
        `| ${cell(section.title.replace(/^\d+\.\s*/, "").split(":")[0] ?? "")} | ${cell(target.text)} | ${cell(target.measured)} | ${verdict(target.met)} |`,
      );
    }
  }
  return out.join("\n");
}

export function renderReport(input: ReportInput): string {
  const { machine } = input;
  const mode = input.quick ? "quick (`npm run bench -- --quick`: smaller counts, one round)" : "full (`npm run bench`)";
  return [
    "# Benchmarks",
    "",
    `Written by \`scripts/bench.ts\` on ${input.startedAt.toISOString()} — ${mode}, ${fmt(input.seconds)} s. Do not edit by hand: run the bench again. Method and analysis: [docs/benchmarks.md](docs/benchmarks.md).`,
    "",
    "## Machine",
    "",
    "| CPU | cores | memory | kernel |",
    "|---|--:|--:|---|",
    `| ${machine.cpuModel} | ${machine.cores} | ${machine.memoryGiB.toFixed(1)} GiB | ${machine.kernel} |`,
    "",
    `Load average (1, 5, 15 min) at the start: ${input.loadAverage.start}; at the end: ${input.loadAverage.end}. A load above ${machine.cores} means other processes (not the bench's) competed for the CPU during the run; the alternating rounds spread that over every system, but absolute figures and tails suffer.`,
    "",
    `> This machine has ${machine.cores} cores. Every process of a scenario shares them: the load driver, redis-server, our gateway and actors (or the peer). Absolute figures are therefore far below what a dedicated server gives; the ratios between systems measured side by side in the same run are what this file is for.`,
    "",
    "## Versions",
    "",
    "| component | version |",
    "|---|---|",
    ...input.versions.map(([name, version]) => `| ${name} | ${cell(version)} |`),
    "",
    "## Summary of the targets",
    "",
    summaryTable(input.sections),
    "",
    "## How the comparison is kept fair",
    "",
    '- One redis-server, started by the bench on a free loopback port (`--save ""`, `appendonly no`, no maxmemory: BullMQ\'s required `noeviction` is its default), serves every Redis-backed system.',
    "- Every server under measurement is a real child process (our gateway as `bun src/cli.ts gateway`, actors as `bun src/cli.ts work`, the SDK server and BullMQ workers as small scripts under test/load/), never the driver's own event loop.",
    "- One driver (test/load/http-load.ts) loads every HTTP system the same way: N keep-alive HTTP/1.1 connections to 127.0.0.1, one request in flight each, a fresh messageId per request; only loopback is ever dialled. It runs in the bench's own process and shares the cores with the system it loads, so each row's note gives its CPU per request too (\"the load driver\"): a driver that spends more per request leaves less CPU to the system (the gRPC rows' client, @grpc/grpc-js, spends several times what the HTTP driver does).",
    "- Warm-up requests run first and are not counted; every run is bounded in requests and in seconds and stops by itself. Rounds alternate between systems, each round on a freshly started server, and are pooled.",
    "- Peers run in their recommended configuration: the SDK as its README sets it up (DefaultRequestHandler, InMemoryTaskStore, jsonRpcHandler on express, NODE_ENV=production) and, as its durable peers, with its own DatabaseTaskStore as its persistent-stores guide sets it up (PostgreSQL through pg.Pool, SQLite through better-sqlite3; a fresh database per round, migrated by its a2a-db); BullMQ with an ioredis connection (maxRetriesPerRequest null) and bounded removeOnComplete/removeOnFail. Each is measured on Bun and on Node where it loads (better-sqlite3 does not load in Bun); the faster one is the peer of each ratio.",
    "- No system waits for the disk: redis-server keeps nothing on disk, the bench's PostgreSQL runs with fsync, synchronous_commit and full_page_writes off, SQLite with journal_mode=WAL and synchronous=OFF.",
    "- Our side runs with its defaults except where a scenario says otherwise (e.g. server.maxWaitingRequests raised so that 32 clients may wait); each installation's key prefix is as long as the default `a2a:` (`a2a1:`, `a2a2:`, … one per installation), so every key a script call carries is as long as on the defaults.",
    "",
    ...input.sections.map(sectionMarkdown),
    "## Profile findings",
    "",
    input.profile,
    "",
  ].join("\n");
}
